#!/usr/bin/env python3
"""`ember template` against implementations nobody here wrote: the npm package
@huggingface/jinja (transformers.js's Jinja) and, when installed, Python's Jinja2 set up as
transformers' apply_chat_template sets it up. Every model's template (Llama 3 and 3.2,
Qwen2.5 and Qwen3, Gemma 3, SmolLM2, Phi-3, 3.5 and 4-mini, Mistral v0.2 and v0.3) on
conversations with and without a system prompt, several turns, none, reasoning blocks,
awkward text, with and without the generation prompt: the bytes must be equal, and a
conversation a template refuses (raise_exception) must be refused by both.

Tools as transformers passes them: `tools` is the list of definitions (`--tools`) or None,
and messages keep every key (tool_calls with arguments as a dict or a string,
tool_call_id, name, content null); Llama 3.2's tools_in_user_message and date_string stay
undefined; Phi-4-mini's tools go in its system message (tools_in_system_message). Every
template renders the tool conversations with and without the tools, and
a few plain ones with them; a template that never reads `tools` must render the same
bytes with them as without.

The inputs are in template_cases.py. Exits 77 (skipped) when node or the package is
missing, unless EMBER_REQUIRE_MODELS=1.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from template_cases import (CONVERSATIONS, JINJA2_ONLY, NOW, PLAIN_WITH_TOOLS,
                            SEMANTICS, TOOL_CONVERSATIONS, TOOLS)


# transformers' tojson (ensure_ascii=False) and raise_exception, for Python's Jinja2.
PY_SETUP = """
import json, sys
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.exceptions import TemplateError
def raise_exception(message):
    raise TemplateError(message)
def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                      separators=separators, sort_keys=sort_keys)
def strftime_now(fmt):
    import datetime
    return datetime.datetime.fromtimestamp(%d, datetime.timezone.utc).strftime(fmt)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                    extensions=[loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = strftime_now
out = []
for job in json.load(open(sys.argv[1])):
    try:
        out.append({"ok": True, "text": env.from_string(job["template"]).render(**job["context"])})
    except Exception as e:
        out.append({"ok": False, "error": "%%s: %%s" %% (type(e).__name__, e)})
json.dump(out, open(sys.argv[2], "w"))
""" % NOW

# Freezes the clock jinja.js's strftime_now reads.
NODE_CLOCK = """
const real = Date;
globalThis.Date = class extends real {
  constructor(...a) { super(...(a.length ? a : [%d])); }
  static now() { return %d; }
};
""" % (NOW * 1000, NOW * 1000)


def render_references(jobs, node, node_modules, python, tmp):
    """Renders jobs ([{"template", "context"}]) with @huggingface/jinja and with Python's
    Jinja2, both seeing the clock NOW: returns ([(name, results)], why Jinja2 could not
    run or None); each result is {"ok", "text"} or {"ok": False, "error"}. Raises
    RuntimeError when node fails."""
    here = os.path.dirname(os.path.abspath(__file__))
    jobs_path = os.path.join(tmp, "jobs.json")
    json.dump(jobs, open(jobs_path, "w"))
    node_script = os.path.join(tmp, "render.mjs")
    with open(node_script, "w") as f:
        f.write(NODE_CLOCK + open(os.path.join(here, "jinja_render.mjs")).read())
    node_out = os.path.join(tmp, "node.json")
    r = subprocess.run([node, node_script, node_modules, jobs_path, node_out],
                       capture_output=True, text=True, env=dict(os.environ, TZ="UTC"))
    if r.returncode != 0:
        raise RuntimeError("node: " + r.stderr)
    references = [("@huggingface/jinja", json.load(open(node_out)))]
    py_out = os.path.join(tmp, "python.json")
    py_script = os.path.join(tmp, "render.py")
    open(py_script, "w").write(PY_SETUP)
    r = subprocess.run([python, py_script, jobs_path, py_out], capture_output=True, text=True)
    if r.returncode != 0:
        return references, (r.stderr.strip().splitlines()[-1] if r.stderr.strip()
                            else f"exit {r.returncode}")
    references.append(("Python Jinja2", json.load(open(py_out))))
    return references, None


def have_jinja_js(node, node_modules):
    """Whether node runs and @huggingface/jinja is installed in node_modules."""
    package = os.path.join(node_modules, "@huggingface", "jinja", "dist", "index.js")
    return shutil_which(node) and os.path.exists(package) and \
        subprocess.run([node, "--version"], capture_output=True).returncode == 0


def templates(models_dir, test_dir):
    found = {}
    for name in ("llama3", "qwen3", "gemma3"):
        path = os.path.join(models_dir, "hf-tokenizers", name, "tokenizer_config.json")
        config = json.load(open(path, encoding="utf-8"))
        entry = {"chat_template": config["chat_template"]}
        for key in ("bos_token", "eos_token", "unk_token", "pad_token"):
            value = config.get(key)
            if isinstance(value, dict):
                value = value.get("content")
            if isinstance(value, str):
                entry[key] = value
        found[name] = entry
    data = json.load(open(os.path.join(test_dir, "chat_templates", "templates.json"),
                          encoding="utf-8"))
    found.update(data["templates"])
    return found


def tools_in_system_message(messages, tools):
    """Phi-4-mini's template reads its tools from the system message: "tools" holds
    json.dumps of the functions, as its model card writes them. ember puts them there
    (with ensure_ascii=False, as tojson writes), adding an empty system message when
    there is none; the reference gets them as an app would put them."""
    text = json.dumps([t.get("function", t) for t in tools], ensure_ascii=False)
    if messages and messages[0]["role"] == "system":
        return [dict(messages[0], tools=text)] + messages[1:]
    return [{"role": "system", "content": "", "tools": text}] + messages


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ember", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--node-modules", required=True)
    p.add_argument("--node", default="node")
    p.add_argument("--python", default=sys.executable)
    args = p.parse_args()
    require = os.environ.get("EMBER_REQUIRE_MODELS", "0") == "1"
    here = os.path.dirname(os.path.abspath(__file__))
    test_dir = os.path.dirname(here)
    if not have_jinja_js(args.node, args.node_modules):
        why = (f"node ({args.node}) or @huggingface/jinja in {args.node_modules} is missing"
               " (tools/scripts/setup.sh all)")
        print(("FAIL: " if require else "SKIP: ") + why)
        return 1 if require else 77

    specs = templates(args.models, test_dir)
    jobs, keys = [], []
    for n, source in enumerate(SEMANTICS):
        name = f"semantics_{n:02d}"
        specs[name] = {"chat_template": source}
        context = {"messages": CONVERSATIONS["system_and_turns"], "tools": None,
                   "add_generation_prompt": True}
        jobs.append({"template": source, "context": context})
        keys.append((name, "system_and_turns", True, None, False))
    all_convs = dict(CONVERSATIONS, **TOOL_CONVERSATIONS)
    for name, spec in sorted(specs.items()):
        if name.startswith("semantics_"):
            continue
        for conv_name, messages in sorted(all_convs.items()):
            tool_variants = [False]
            if conv_name in TOOL_CONVERSATIONS:
                tool_variants = [False, True]
            elif conv_name in PLAIN_WITH_TOOLS:
                tool_variants = [False, True]
            for with_tools in tool_variants:
                for gen in (True, False):
                    variants = [None]
                    if name == "qwen3" and conv_name in ("reasoning", "one_user_turn"):
                        variants = [None, False, True]
                    for thinking in variants:
                        # As transformers' apply_chat_template: tools=None without tools.
                        shown = messages
                        if with_tools and "<|tool|>" in spec["chat_template"]:
                            shown = tools_in_system_message(messages, TOOLS)
                        context = {"messages": shown,
                                   "tools": TOOLS if with_tools else None,
                                   "add_generation_prompt": gen}
                        for key in ("bos_token", "eos_token", "unk_token", "pad_token"):
                            if key in spec:
                                context[key] = spec[key]
                        if thinking is not None:
                            context["enable_thinking"] = thinking
                        jobs.append({"template": spec["chat_template"], "context": context})
                        keys.append((name, conv_name, gen, thinking, with_tools))

    with tempfile.TemporaryDirectory() as tmp:
        try:
            references, py_error = render_references(jobs, args.node, args.node_modules,
                                                     args.python, tmp)
        except RuntimeError as e:
            print("FAIL:", e)
            return 1
        if py_error and require:
            print("FAIL: Python's Jinja2 is missing (python3-jinja2: tools/scripts/setup.sh all)")
            return 1
        if py_error:
            print("note: Python's Jinja2 not available, comparing with @huggingface/jinja only"
                  f" ({py_error})")

        failures = compared = disagreements = 0
        dirs = {}
        # The tools file as UTF-8 and as ASCII with \u escapes (surrogate pairs too),
        # in turn.
        tools_paths = [os.path.join(tmp, "tools_utf8.json"),
                       os.path.join(tmp, "tools_ascii.json")]
        for path, ascii_only in zip(tools_paths, (False, True)):
            json.dump(TOOLS, open(path, "w", encoding="utf-8"), ensure_ascii=ascii_only)
        rendered = {}  # key -> ember's result, for the with/without tools comparison
        tool_renders = 0
        for i, key in enumerate(keys):
            name, conv_name, gen, thinking, with_tools = key
            job = jobs[i]
            if name not in dirs:
                d = os.path.join(tmp, "tok_" + name)
                os.mkdir(d)
                config = {k: v for k, v in specs[name].items() if k != "source"}
                json.dump(config, open(os.path.join(d, "tokenizer_config.json"), "w"))
                dirs[name] = d
            messages_path = os.path.join(tmp, f"m{i}.json")
            json.dump(job["context"]["messages"], open(messages_path, "w"))
            cmd = [args.ember, "template", "--tokenizer", dirs[name], "--messages",
                   messages_path, "--now", str(NOW)]
            if with_tools:
                cmd += ["--tools", tools_paths[i % 2]]
            if not gen:
                cmd.append("--no-generation-prompt")
            if thinking is not None:
                cmd += ["--enable-thinking", "true" if thinking else "false"]
            r = subprocess.run(cmd, capture_output=True)
            ours = {"ok": r.returncode == 0,
                    "text": r.stdout.decode("utf-8") if r.returncode == 0 else None,
                    "error": r.stderr.decode("utf-8", "replace").strip()}
            rendered[key] = ours
            tool_renders += with_tools or conv_name in TOOL_CONVERSATIONS
            label = f"{name} / {conv_name} / generation prompt {gen}" + \
                (f" / enable_thinking {thinking}" if thinking is not None else "") + \
                (" / with tools" if with_tools else "")
            same = lambda a, b: a["ok"] == b["ok"] and (not a["ok"] or a["text"] == b["text"])
            want, ref_name = references[0][1][i], references[0][0]
            if len(references) > 1 and not same(want, references[1][1][i]):
                # The references disagree (jinja.js is lenient where Jinja2 raises, e.g.
                # messages[0]['role'] of no messages): ember follows Python's Jinja2,
                # which transformers renders with.
                want, ref_name = references[1][1][i], references[1][0]
                disagreements += 1
                print(f"note: {label}: the references disagree; comparing with {ref_name}")
            elif len(references) == 1 and conv_name in JINJA2_ONLY:
                continue  # known to differ from Jinja2 in jinja.js: needs Jinja2
            compared += 1
            if not same(want, ours):
                failures += 1
                print(f"FAIL: {label}: ember differs from {ref_name}")
                print("  want:", json.dumps(want.get("text", want.get("error")))[:1500])
                print("  got: ", json.dumps(ours["text"] if ours["ok"] else ours["error"])[:1500])
            elif not ours["ok"]:
                print(f"ok: {label}: refused by both ({ours['error'][:100]})")
        # A template that never reads `tools` renders the same with them as without.
        ignoring = same_without = 0
        for key, ours in rendered.items():
            name, conv_name, gen, thinking, with_tools = key
            if not with_tools or "tools" in specs[name]["chat_template"]:
                continue
            ignoring += 1
            without = rendered[(name, conv_name, gen, thinking, False)]
            if without != ours:
                failures += 1
                print(f"FAIL: {name} / {conv_name}: never reads tools, yet renders "
                      "differently with them")
            else:
                same_without += 1
        print(f"{same_without} of {ignoring} renders with tools of templates that ignore "
              f"them equal the renders without; {tool_renders} renders with tools or tool "
              "calls")
        print(f"{compared - failures} passed, {failures} failed "
              f"({len(keys)} renders, {len(specs)} templates, "
              f"{' and '.join(name for name, _ in references)}; "
              f"{disagreements} where they disagree)")
        return 1 if failures else 0


def shutil_which(name):
    import shutil
    return shutil.which(name) is not None or os.path.exists(name)


if __name__ == "__main__":
    sys.exit(main())
