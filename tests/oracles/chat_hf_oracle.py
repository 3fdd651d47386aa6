#!/usr/bin/env python3
"""Chat end to end with real Hugging Face tokenizers (Llama 3, Qwen3, Gemma 3 from
../shared/models/hf-tokenizers), against implementations nobody here wrote.

For each, a tiny model (one layer, d_model 32) is written around the tokenizer as a
Hugging Face directory (config.json, model.safetensors, the tokenizer files linked) and
converted with `ember convert --hf`, which compiles its chat template. Its weights make
a bigram machine: every layer's output is zero, so the logits at a token depend on that
token alone, and lm_head sends the generation prompt's last token to "Hello", "Hello" to
" world" and " world" to the template's end of turn. Then:

  - `ember template -m MODEL` renders two conversations (a system text and a user turn;
    then the reply and a second user turn) byte for byte as @huggingface/jinja and
    Python's Jinja2 (set up as transformers' apply_chat_template) render them;
  - `ember chat` through a pipe, two turns (--verbose-prompt): each turn's prompt ids
    equal @lenml/tokenizers' ids for the rendered text with special tokens parsed and no
    BOS added (apply_chat_template's tokenization), each reply is "Hello world" and ends
    at the end-of-turn id, and the second turn reuses the cached prefix that the first
    turn's prompt and reply share with it, prefilling only its new tokens;
  - a second model, whose reply ends instead at another of the model's end ids (listed
    in generation_config.json's eos_token_id, as Llama 3.1, Qwen3 and Gemma 3 list
    theirs), answers one turn with the same reply: a chat turn ends at any end id the
    model lists, not only at the template's.

Exits 77 (skipped) without the tokenizers, node, the npm packages or NumPy, unless
EMBER_REQUIRE_MODELS=1 (then it fails).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import oracle_util as u
import template_oracle as t

NOW = t.NOW
SYSTEM = "You are a terse assistant."
TURNS = ["Hi! Who are you?", "Und jetzt: café, 東京 👋?"]
REPLY = "Hello world"
# The token that ends an assistant's turn in each model's template.
END_OF_TURN = {"llama3": "<|eot_id|>", "qwen3": "<|im_end|>", "gemma3": "<end_of_turn>"}
# Another end id each model lists (Llama 3's EOS; Qwen3's and Gemma 3's are listed only
# in their generation_config.json).
OTHER_END = {"llama3": "<|end_of_text|>", "qwen3": "<|endoftext|>", "gemma3": "<eos>"}
D_MODEL, FFN, HEADS, CONTEXT = 32, 64, 2, 256


def skip_or_fail(why):
    require = os.environ.get("EMBER_REQUIRE_MODELS") == "1"
    print(("FAIL: " if require else "SKIP: ") + why)
    sys.exit(1 if require else u.SKIP)


def lenml_ids(args, tok_dir, texts, tmp):
    """@lenml/tokenizers' ids of texts: special tokens parsed, add_special_tokens false."""
    texts_path = os.path.join(tmp, "texts.json")
    out_path = os.path.join(tmp, "ids.json")
    json.dump(texts, open(texts_path, "w"))
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "hf_tokenizer_oracle.js")
    subprocess.run([args.node, script, args.tokenizers_modules, tok_dir, texts_path,
                    out_path], check=True)
    return json.load(open(out_path))["parse"]


def write_model(np, d, tok_dir, vocab, specials, chain, end_ids=None):
    """A Hugging Face Llama directory around the tokenizer in tok_dir: zero layers, random
    embeddings, and an lm_head whose row b is row a's embedding direction for each (a, b)
    in chain, so that after token a the largest logit is b's; end_ids, if given, are
    generation_config.json's eos_token_id."""
    os.makedirs(d)
    if end_ids:
        json.dump({"eos_token_id": end_ids},
                  open(os.path.join(d, "generation_config.json"), "w"))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        os.symlink(os.path.join(tok_dir, name), os.path.join(d, name))
    config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
              "vocab_size": vocab, "hidden_size": D_MODEL, "intermediate_size": FFN,
              "num_hidden_layers": 1, "num_attention_heads": HEADS,
              "num_key_value_heads": HEADS, "max_position_embeddings": CONTEXT,
              "rms_norm_eps": 1e-6, "tie_word_embeddings": False}
    config.update(specials)
    json.dump(config, open(os.path.join(d, "config.json"), "w"))
    rng = np.random.default_rng(7)
    embed = rng.standard_normal((vocab, D_MODEL), dtype=np.float32)
    head = np.zeros((vocab, D_MODEL), dtype=np.float32)
    for a, b in chain:
        head[b] = 10 * embed[a] / np.linalg.norm(embed[a])
    zeros = lambda *shape: np.zeros(shape, dtype=np.float32)
    layer = "model.layers.0."
    tensors = {"model.embed_tokens.weight": embed, "lm_head.weight": head,
               "model.norm.weight": np.ones(D_MODEL, dtype=np.float32),
               layer + "input_layernorm.weight": np.ones(D_MODEL, dtype=np.float32),
               layer + "post_attention_layernorm.weight": np.ones(D_MODEL, dtype=np.float32)}
    for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
        tensors[layer + "self_attn." + name + ".weight"] = zeros(D_MODEL, D_MODEL)
    tensors[layer + "mlp.gate_proj.weight"] = zeros(FFN, D_MODEL)
    tensors[layer + "mlp.up_proj.weight"] = zeros(FFN, D_MODEL)
    tensors[layer + "mlp.down_proj.weight"] = zeros(D_MODEL, FFN)
    u.write_safetensors(os.path.join(d, "model.safetensors"), tensors)


def run(cmd, stdin=None):
    r = subprocess.run(cmd, input=stdin, capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}):\n"
                           f"{r.stderr.decode('utf-8', 'replace')}")
    return r.stdout.decode("utf-8"), r.stderr.decode("utf-8")


def check(report, what, ok, detail=""):
    report.check(what, ok, "" if ok else detail)


def common_prefix(a, b):
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def check_tokenizer(args, np, name, spec, references, jobs_at, report, tmp):
    tok_dir = os.path.join(args.models, "hf-tokenizers", name)
    conv1 = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TURNS[0]}]
    conv2 = conv1 + [{"role": "assistant", "content": REPLY},
                     {"role": "user", "content": TURNS[1]}]
    ref_name, refs = references[-1]  # Jinja2 when there, as transformers renders
    r1, r2 = (refs[jobs_at[(name, i)]] for i in (0, 1))
    if not (r1["ok"] and r2["ok"]):
        check(report, f"{name}: {ref_name} renders both conversations", False, str((r1, r2)))
        return
    r1, r2 = r1["text"], r2["text"]
    ids1, ids2, reply, eot, other = lenml_ids(
        args, tok_dir, [r1, r2, REPLY, END_OF_TURN[name], OTHER_END[name]], tmp)
    check(report, f"{name}: '{REPLY}' is two tokens and {END_OF_TURN[name]} one",
                 len(reply) == 2 and len(eot) == 1, f"{reply} {eot}")
    if len(reply) != 2 or len(eot) != 1:
        return
    tokenizer = json.load(open(os.path.join(tok_dir, "tokenizer.json"), encoding="utf-8"))
    vocab = max(max(tokenizer["model"]["vocab"].values()),
                max(a["id"] for a in tokenizer["added_tokens"])) + 1
    by_text = {a["content"]: a["id"] for a in tokenizer["added_tokens"]}
    specials = {}
    for key in ("bos", "eos"):
        if spec.get(key + "_token") in by_text:
            specials[key + "_token_id"] = by_text[spec[key + "_token"]]
    last = ids1[-1]
    check(report, f"{name}: both prompts end with the same token, not one of the reply's",
                 ids2[-1] == last and last not in reply + eot)
    d = os.path.join(tmp, name)
    write_model(np, d, tok_dir, vocab, specials,
                [(last, reply[0]), (reply[0], reply[1]), (reply[1], eot[0])])
    model = os.path.join(tmp, name + ".ember")
    _, err = run([args.ember, "convert", "--hf", d, "-o", model])
    check(report, f"{name}: convert compiles the chat template",
                 "chat template compiled" in err, err[-400:])
    shutil.rmtree(d)

    for i, conv in enumerate((conv1, conv2)):
        path = os.path.join(tmp, f"{name}_conv{i}.json")
        json.dump(conv, open(path, "w"))
        ours, _ = run([args.ember, "template", "-m", model, "--messages", path,
                       "--now", str(NOW)])
        for ref, results in references:
            want = results[jobs_at[(name, i)]]["text"]
            check(report, f"{name}: ember template renders conversation {i + 1} as {ref} "
                         f"({len(want)} bytes)", ours == want,
                         f"\n  want {json.dumps(want)}\n  got  {json.dumps(ours)}")

    out, err = run([args.ember, "chat", "-m", model, "--system", SYSTEM, "-n", "8",
                    "--temp", "0", "--now", str(NOW), "--verbose-prompt"],
                   stdin=("\n".join(TURNS) + "\n").encode())
    prompts = [[int(x) for x in line.split(":", 2)[2].split()]
               for line in err.splitlines() if line.startswith("ember chat: prompt tokens:")]
    turns = [tuple(int(x) for x in m.groups()) for m in re.finditer(
        r"prefill (\d+) of (\d+) tokens \((\d+) cached\).*generated (\d+) tokens"
        r".*\(ended at token (\d+)\)", err)]
    check(report, f"{name}: chat reports two turns", len(prompts) == 2 and len(turns) == 2,
                 err)
    if len(prompts) != 2 or len(turns) != 2:
        return
    for i, want in enumerate((ids1, ids2)):
        check(report, f"{name}: turn {i + 1} prefills @lenml/tokenizers' {len(want)} ids of "
                     f"the rendered text", prompts[i] == want,
                     f"\n  want {want}\n  got  {prompts[i]}")
    check(report, f"{name}: both replies are '{REPLY}'", out == f"{REPLY}\n{REPLY}\n",
                 repr(out))
    for i, (prefill, total, cached, generated, ended) in enumerate(turns):
        check(report, f"{name}: turn {i + 1} generates 2 tokens and ends at "
                     f"{END_OF_TURN[name]} ({eot[0]})", generated == 2 and ended == eot[0],
                     f"generated {generated}, ended at {ended}")
    # What the session holds after turn 1 (its prompt and reply: the end of turn is
    # sampled, never prefilled) and turn 2's prompt share this prefix.
    shared = common_prefix(ids1 + reply, ids2)
    prefill, total, cached, _, _ = turns[1]
    check(report, f"{name}: turn 1 prefills all {len(ids1)}", turns[0][:3] ==
                 (len(ids1), len(ids1), 0), str(turns[0]))
    check(report, f"{name}: turn 2 reuses the {shared} cached ids it shares and prefills "
                 f"the other {len(ids2) - shared}",
                 (prefill, total, cached) == (len(ids2) - shared, len(ids2), shared),
                 str(turns[1]))
    check(report, f"{name}: turn 2 prefills only its new tokens (the reply is encoded as "
          "it was generated)", shared == len(ids1) + 2, f"shared {shared} of {len(ids1)} + 2")
    check_other_end(args, np, name, tok_dir, vocab, specials, last, reply, eot, other,
                    report, tmp)


def check_other_end(args, np, name, tok_dir, vocab, specials, last, reply, eot, other,
                    report, tmp):
    """One turn of a model whose reply ends at another end id it lists."""
    if len(other) != 1 or other == eot:
        check(report, f"{name}: {OTHER_END[name]} is one token besides the end of turn",
              False, str(other))
        return
    d = os.path.join(tmp, name + "_other")
    write_model(np, d, tok_dir, vocab, specials,
                [(last, reply[0]), (reply[0], reply[1]), (reply[1], other[0])],
                end_ids=[eot[0], other[0]])
    model = os.path.join(tmp, name + "_other.ember")
    run([args.ember, "convert", "--hf", d, "-o", model])
    shutil.rmtree(d)
    out, err = run([args.ember, "chat", "-m", model, "--system", SYSTEM, "-n", "8",
                    "--temp", "0", "--now", str(NOW)], stdin=(TURNS[0] + "\n").encode())
    ended = re.findall(r"generated (\d+) tokens.*\(ended at token (\d+)\)", err)
    check(report, f"{name}: a turn ends at {OTHER_END[name]} ({other[0]}), another end id "
          f"the model lists, with the reply '{REPLY}'",
          out == f"{REPLY}\n" and ended == [("2", str(other[0]))], f"{out!r} {err}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ember", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--node", default="node")
    p.add_argument("--jinja-modules", required=True,
                   help="node_modules with @huggingface/jinja")
    p.add_argument("--tokenizers-modules", required=True,
                   help="node_modules with @lenml/tokenizers")
    p.add_argument("--python", default=sys.executable, help="Python with Jinja2")
    args = p.parse_args()
    args.models = os.environ.get("EMBER_MODELS") or args.models
    names = list(END_OF_TURN)
    for name in names:
        if not os.path.exists(os.path.join(args.models, "hf-tokenizers", name,
                                           "tokenizer.json")):
            skip_or_fail(f"{args.models}/hf-tokenizers/{name} is missing")
    if not t.have_jinja_js(args.node, args.jinja_modules) or not os.path.exists(
            os.path.join(args.tokenizers_modules, "@lenml", "tokenizers", "package.json")):
        skip_or_fail(f"node ({args.node}), @huggingface/jinja in {args.jinja_modules} or "
                     f"@lenml/tokenizers in {args.tokenizers_modules} is missing "
                     "(tools/scripts/setup.sh all)")
    try:
        import numpy as np
    except ImportError as e:
        skip_or_fail(f"NumPy is not importable by {sys.executable}: {e}")

    specs = t.templates(args.models, os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    jobs, jobs_at = [], {}
    for name in names:
        conv1 = [{"role": "system", "content": SYSTEM},
                 {"role": "user", "content": TURNS[0]}]
        conv2 = conv1 + [{"role": "assistant", "content": REPLY},
                         {"role": "user", "content": TURNS[1]}]
        for i, conv in enumerate((conv1, conv2)):
            context = {"messages": conv, "add_generation_prompt": True}
            for key in ("bos_token", "eos_token", "unk_token", "pad_token"):
                if key in specs[name]:
                    context[key] = specs[name][key]
            jobs_at[(name, i)] = len(jobs)
            jobs.append({"template": specs[name]["chat_template"], "context": context})

    report = u.Report("chat_hf")
    with tempfile.TemporaryDirectory() as tmp:
        references, py_error = t.render_references(jobs, args.node, args.jinja_modules,
                                                   args.python, tmp)
        if py_error:
            skip_or_fail(f"Python's Jinja2 is not available ({py_error}): python3-jinja2")
        for name in names:
            check_tokenizer(args, np, name, specs[name], references, jobs_at, report, tmp)
    if report.failures:
        print(f"chat_hf: {report.failures} check(s) failed")
        sys.exit(1)
    print("chat_hf: all checks passed")


if __name__ == "__main__":
    main()
