"""The Python package against the CLI and the C API it wraps, on stories260K.

Run by ctest (tests/CMakeLists.txt: python_test), which sets EMBER_LIBRARY (the build's
libember.so), EMBER_CLI (its ember) and EMBER_TEST_MODEL / EMBER_TEST_CHAT_MODEL (the
converted stories260K, without and with a chat template).
"""
import json
import os
import re
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

import ember
from ember._capi import lib

CLI = os.environ["EMBER_CLI"]
MODEL = os.environ["EMBER_TEST_MODEL"]
CHAT_MODEL = os.environ["EMBER_TEST_CHAT_MODEL"]
PROMPT = "Once upon a time"


def cli(*args: str) -> str:
    return subprocess.run([CLI, *args], check=True, capture_output=True).stdout.decode()


@pytest.fixture(scope="module")
def model():
    with ember.Model(MODEL) as m:
        yield m


def test_the_library_is_the_one_asked_for():
    assert os.path.realpath(lib.path) == os.path.realpath(os.environ["EMBER_LIBRARY"])
    header = (Path(__file__).resolve().parents[2] / "runtime" / "ember.h").read_text()
    expected = ".".join(re.search(rf"#define EMBER_VERSION_{part} (\d+)", header).group(1)
                        for part in ("MAJOR", "MINOR", "PATCH"))
    assert ember.version() == expected


def test_model_properties(model):
    assert model.vocab_size == 512
    assert model.max_context == 512
    assert model.bos == 1 and model.eos == 2
    assert not model.has_chat_template
    with ember.Model(CHAT_MODEL) as chat_model:
        assert chat_model.has_chat_template


def test_tokenize_equals_the_cli(model):
    session = ember.Session(model, context=64)
    for text in [PROMPT, "Lily and Ben went to the park. \u00e9t\u00e9 \u4e2d", ""]:
        expected = [int(t) for t in cli("tokenize", "-m", MODEL, "-p", text).split()]
        assert session.tokenize(text) == expected
    assert session.tokenize(PROMPT, add_bos=False) == session.tokenize(PROMPT)[1:]
    assert model.detokenize(session.tokenize(PROMPT)) == PROMPT


@pytest.mark.parametrize("kv_type", ["f32", "f16", "q8"])
def test_generate_equals_the_cli(model, kv_type):
    session = ember.Session(model, context=128, kv_type=kv_type)
    text = session.generate(PROMPT, max_new=60)
    expected = cli("run", "-m", MODEL, "-p", PROMPT, "-n", "60", "--temp", "0",
                   "--kv-type", kv_type)
    assert PROMPT + text + "\n" == expected
    # The prompt and the tokens fed back: all but the last one sampled.
    assert session.position == len(session.tokenize(PROMPT)) + 59


def test_stream_equals_generate(model):
    session = ember.Session(model, context=256)
    session.set_sampler(temperature=0.9, top_k=40, seed=7)
    whole = session.generate(PROMPT, max_new=100)
    session.reset()
    session.set_sampler(temperature=0.9, top_k=40, seed=7)
    pieces = list(session.stream(PROMPT, max_new=100))
    assert len(pieces) > 10
    assert "".join(pieces) == whole


def test_breaking_out_of_a_stream_stops_it(model):
    session = ember.Session(model, context=256)
    stream = session.stream(PROMPT, max_new=200)
    first = [next(stream) for _ in range(3)]
    stream.close()
    assert len(first) == 3
    assert session.position < len(session.tokenize(PROMPT)) + 200
    session.reset()
    assert session.generate(PROMPT, max_new=5)  # usable again


def test_logits_are_the_cli_s_bitwise(model, tmp_path):
    out = tmp_path / "logits.npy"
    cli("logits", "-m", MODEL, "-p", PROMPT, "--all", "-o", str(out))
    expected = np.load(out)
    tokens = ember.Session(model, context=64).tokenize(PROMPT)
    session = ember.Session(model, context=64, all_logits=True)
    rows = session.logits_of(tokens)
    assert rows.shape == (len(tokens), model.vocab_size) and rows.dtype == np.float32
    assert np.array_equal(rows, expected)
    # More tokens than a prefill step takes: stepped, rows copied, the same values.
    stepped = ember.Session(model, context=64, all_logits=True, batch=2)
    assert np.array_equal(stepped.logits_of(tokens), expected)
    # The last position only.
    last = ember.Session(model, context=64)
    last.prefill(tokens)
    assert np.array_equal(last.logits, expected[-1])


def test_logits_view_the_arena(model):
    session = ember.Session(model, context=64)
    session.prefill(session.tokenize(PROMPT))
    view = session.logits
    assert view.__array_interface__["data"][0] == lib.ember_logits(session.handle)
    assert not view.flags.writeable
    before = view.copy()
    session.decode(int(np.argmax(view)))
    assert not np.array_equal(view, before)  # the arena moved on, and the view with it


def test_top_k(model):
    session = ember.Session(model, context=64)
    session.prefill(session.tokenize(PROMPT))
    logits = session.logits.astype(np.float64)
    top = session.top_k(5)
    assert [t for t, _, _ in top] == list(np.argsort(-logits, kind="stable")[:5])
    probabilities = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    for token, text, p in top:
        assert p == pytest.approx(probabilities[token], rel=1e-12)
        assert text == model.token_bytes(token).decode()
    assert top[0][1] == ","
    assert all(a[2] >= b[2] for a, b in zip(top, top[1:]))


def test_a_saved_state_continues_as_the_session_would(model):
    session = ember.Session(model, context=128)
    session.set_sampler(temperature=0.8, seed=3)
    session.prefill(session.tokenize(PROMPT))
    state = session.save_state()
    assert len(state) > 0
    first = session.generate(None, max_new=30)
    other = ember.Session(model, context=128)
    other.set_sampler(temperature=0.8, seed=3)
    other.restore_state(state)
    assert other.position == len(session.tokenize(PROMPT))
    assert other.generate(None, max_new=30) == first
    damaged = bytearray(state)
    damaged[len(damaged) // 2] ^= 0xFF
    with pytest.raises(ember.EmberError):
        other.restore_state(bytes(damaged))
    # f32 rows restore into an f16 cache (converted); f16 rows into an f32 one do not.
    half = ember.Session(model, context=128, kv_type="f16")
    half.restore_state(state)
    half.prefill([400])
    with pytest.raises(ember.EmberError, match="f16"):
        ember.Session(model, context=128).restore_state(half.save_state())


def test_a_grammar_holds_generation(model):
    gbnf = 'root ::= ("yes" | "no") " " [a-z]{1,3} "."'
    session = ember.Session(model, context=64, grammar_bytes=model.grammar_bytes(gbnf))
    session.set_grammar(gbnf)
    text = session.generate(PROMPT, max_new=30)
    assert text.split(" ")[0] in ("yes", "no") and text.endswith(".")
    assert session.grammar_complete
    with pytest.raises(ember.EmberError, match=r"line 1, column"):
        session.set_grammar("root ::= (")


def test_a_grammar_lives_in_the_sessions_arena(model):
    gbnf = 'root ::= ("yes" | "no") " " [a-z]{1,3} "."'
    need = model.grammar_bytes(gbnf)
    assert need > 0
    none = ember.Session(model, context=64)  # no room by default
    exact = ember.Session(model, context=64, grammar_bytes=need)
    assert exact.arena_bytes >= none.arena_bytes + need
    with pytest.raises(ember.EmberError, match=f"needs {need} bytes"):
        ember.Session(model, context=64, grammar_bytes=need - 16).set_grammar(gbnf)
    with pytest.raises(ember.EmberError, match="planned 0"):
        none.set_grammar(gbnf)
    exact.set_grammar(gbnf)
    assert exact.generate(PROMPT, max_new=30).endswith(".")


def test_errors_are_exceptions_with_ember_s_message(model):
    with pytest.raises(ember.EmberError, match="nonexistent") as error:
        ember.Model("/nonexistent/model.ember")
    assert error.value.status == "I/O error"
    session = ember.Session(model, context=16)
    with pytest.raises(ember.EmberError) as error:
        session.decode(100000)
    assert error.value.status == "invalid argument"
    with pytest.raises(ember.EmberError) as error:
        session.generate(PROMPT, max_new=100)  # past the 16 positions
    assert error.value.status == "out of range"
    with pytest.raises(ember.EmberError) as error:
        session.set_sampler(temperature=float("nan"))
    assert "temperature" in str(error.value)
    with pytest.raises(ValueError):
        ember.Session(model, kv_type="f8")
    with pytest.raises(ember.EmberError, match="context"):
        ember.Session(model, context=1 << 30)
    with pytest.raises(ValueError, match="all_logits"):
        session.logits_of([1, 2])
    closed = ember.Session(model, context=16)
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        closed.prefill([1])


def test_a_session_is_used_by_one_thread_at_a_time(model):
    session = ember.Session(model, context=256)
    stream = session.stream(PROMPT, max_new=100)
    next(stream)  # the stream holds the session until it ends or closes
    with pytest.raises(ember.EmberBusy):
        session.generate(PROMPT, max_new=5)
    failures = []

    def other_thread():
        try:
            session.tokenize(PROMPT)
        except ember.EmberBusy as error:
            failures.append(error)

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert len(failures) == 1
    stream.close()
    assert session.tokenize(PROMPT)  # free again


def test_sessions_on_threads_give_what_one_thread_gives(model):
    expected = ember.Session(model, context=128).generate(PROMPT, max_new=40)
    results = [None] * 4

    def run(i):
        results[i] = ember.Session(model, context=128).generate(PROMPT, max_new=40)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4
    two = ember.Session(model, context=128, threads=2).generate(PROMPT, max_new=40)
    assert two == expected


def test_chat_renders_as_the_cli_and_replies(tmp_path):
    with ember.Model(CHAT_MODEL) as model:
        messages = [{"role": "system", "content": "You tell stories."},
                    {"role": "user", "content": "Tell me about Lily."}]
        path = tmp_path / "messages.json"
        path.write_text(json.dumps(messages))
        rendered = cli("template", "-m", CHAT_MODEL, "--messages", str(path))
        assert model.render_chat(messages) == rendered
        session = ember.Session(model, context=512)
        chat = ember.Chat(session, system="You tell stories.")
        reply = chat.send("Tell me about Lily.", max_new=30)
        assert reply
        assert chat.stats["generated_tokens"] <= 30
        second = chat.send("And then?", max_new=20)
        assert second and chat.stats["cached_tokens"] > 0
        session.close()  # closes the chat first
        with pytest.raises(ValueError, match="closed"):
            chat.send("Hello")


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_thousand_models_and_sessions_do_not_leak():
    def lifetime():
        with ember.Model(MODEL) as m, ember.Session(m, context=64) as s:
            s.prefill(s.tokenize(PROMPT))
            assert s.logits.shape == (512,)

    for _ in range(50):
        lifetime()
    before = rss_bytes()
    for _ in range(1000):
        lifetime()
    grown = rss_bytes() - before
    assert grown < 4 << 20, f"RSS grew {grown} bytes over 1,000 lifetimes"


def inspect_counts(path: str) -> tuple:
    """(total, {kind: parameters}) as `ember inspect` prints them."""
    text = cli("inspect", "-m", path, "-c", "16")
    total = int(re.search(r"^parameters +(\d+)$", text, re.M).group(1))
    section = text.split("\nparameters", 1)[1].split("weights by type", 1)[0]
    kinds = {m.group(1): int(m.group(2))
             for m in re.finditer(r"^  (\S+) +(\d+)  \(\d+ tensors?\)$", section, re.M)}
    return total, kinds


def test_info_is_inspect_s(model):
    info = model.info
    assert isinstance(info, ember.ModelInfo)
    total, kinds = inspect_counts(MODEL)
    assert info.total_parameters == total == 260032
    assert info.parameters == kinds
    assert sum(info.parameters.values()) == total
    assert info.weight_types == {"f32": total}
    assert (info.architecture, info.n_layers, info.n_heads, info.n_kv_heads,
            info.head_dim, info.d_model, info.ffn_dim) == ("llama", 5, 8, 4, 8, 64, 172)
    assert (info.vocab_size, info.max_context) == (model.vocab_size, model.max_context)
    assert (info.norm, info.activation, info.positions) == ("rmsnorm", "silu", "rope")
    assert info.pre_norm and info.gated_ffn and info.causal and info.tied_embeddings
    assert info.norm_eps == 1e-5 and info.rope_theta == 10000.0
    assert info.tokenizer == "sentencepiece-bpe" and info.attention_kind == "GQA"


def test_attention_is_the_cli_s_and_a_view(model, tmp_path):
    ids = ember.Session(model, context=16).tokenize(PROMPT)
    n = len(ids)
    session = ember.Session(model, context=32, attention=True)
    weights = session.attention(ids)
    assert weights.shape == (5, 8, n, n) and weights.dtype == np.float32
    # Softmax rows over the keys a query sees, zeros above the diagonal (causal).
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-5)
    assert (weights >= 0).all()
    assert not np.triu(weights, k=1).any()
    # `ember logits --attn` records through the C++ session: the same weights.
    out, attn = tmp_path / "logits.npy", tmp_path / "attn.npy"
    cli("logits", "-m", MODEL, "-p", PROMPT, "-o", str(out), "--attn", str(attn))
    np.testing.assert_array_equal(weights, np.load(attn))
    # A view of the arena, not a copy: read-only, and the next decode's row appears in
    # a new view over the same memory.
    assert not weights.flags.writeable and not weights.flags.owndata
    with pytest.raises(ValueError):
        weights[0, 0, 0, 0] = 1
    address = weights.__array_interface__["data"][0]
    session.decode(42)
    grown = session.attention()
    assert grown.shape == (5, 8, n + 1, n + 1)
    assert grown.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(grown[:, :, :n, :n], weights)


def test_attention_selection(model):
    selection = ember.AttentionSelection(first_layer=2, num_layers=2, first_head=1,
                                         num_heads=3, max_positions=8)
    whole = ember.Session(model, context=32, attention=True).attention(PROMPT).copy()
    session = ember.Session(model, context=32, attention=selection)
    assert session.attention_selection == selection
    assert session.arena_bytes < ember.Session(model, context=32, attention=True).arena_bytes
    part = session.attention(PROMPT)
    np.testing.assert_array_equal(part, whole[2:4, 1:4])
    session.prefill([300] * 10)  # past max_positions: the rows stop at 8
    assert session.attention().shape == (2, 3, 8, 8)
    session.reset()
    assert session.attention().shape == (2, 3, 0, 0)
    # A view keeps its session alive.
    view = ember.Session(model, context=16, attention={"num_layers": 1}).attention(PROMPT)
    assert view.shape[:2] == (1, 8) and np.allclose(view.sum(-1), 1, atol=1e-5)


def test_attention_refusals(model):
    with pytest.raises(ember.EmberError, match="layers \\[5, 5\\) are outside"):
        ember.Session(model, context=16, attention={"first_layer": 5})
    with pytest.raises(ember.EmberError, match="heads \\[6, 9\\) are outside"):
        ember.Session(model, context=16, attention={"first_head": 6, "num_heads": 3})
    with pytest.raises(ember.EmberError, match="exceed the session's context of 16"):
        ember.Session(model, context=16, attention={"max_positions": 17})
    with pytest.raises(ember.EmberError, match="records no attention"):
        ember.Session(model, context=16).attention()
    with pytest.raises(TypeError):
        ember.Session(model, context=16, attention="all")


# A Hermes-style template (Qwen's <tool_call> tags) on a small random model whose
# byte-fallback tokenizer spells any text.
HERMES_TEMPLATE = """{%- if tools %}<|im_start|>system
Tools:{% for tool in tools %} {{ tool | tojson }}{% endfor %}
Call one as <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>
{% endif %}{% for m in messages %}<|im_start|>{{ m.role }}
{% if m.tool_calls %}{% for c in m.tool_calls %}<tool_call>
{{ {"name": c.function.name, "arguments": c.function.arguments} | tojson }}
</tool_call>{% endfor %}{% else %}{{ m.content }}{% endif %}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]


def test_chat_tool_calls_come_back_parsed(tmp_path):
    template = tmp_path / "hermes.jinja"
    template.write_text(HERMES_TEMPLATE)
    path = tmp_path / "tools.ember"
    cli("convert", "--synthetic", "custom", "--dim", "64", "--hidden", "128", "--layers", "1",
        "--heads", "2", "--vocab", "300", "--ctx", "512", "--chat-template", str(template),
        "-o", str(path))
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    # The random model would not call by itself: a grammar makes its reply the call.
    gbnf = 'root ::= "' + call.replace('"', '\\"').replace("\n", "\\n") + '"'
    with ember.Model(path) as model, \
            ember.Session(model, context=512, grammar_bytes=model.grammar_bytes(gbnf)) as session:
        chat = ember.Chat(session, max_tools_bytes=4096)
        chat.set_tools(TOOLS)
        chat.add("user", "Weather in Oslo?")
        chat.set_grammar(gbnf)
        assert chat.reply(max_new=200) == call
        assert chat.tool_calls == [{"id": "call00001", "name": "get_weather",
                                    "arguments": {"city": "Oslo"}}]
        assert chat.tool_calls_error == ""
        chat.add("tool", '{"temperature": -3}')  # answers call00001
        with pytest.raises(ember.EmberError, match="grammar"):  # cut short
            chat.reply(max_new=3)
        chat.set_grammar(None)
        chat.add("user", "Thanks")
        chat.reply(max_new=4)
        assert chat.tool_calls == []
        with pytest.raises(ember.EmberError, match="grammar"):
            chat.set_tools(TOOLS, grammar="root ::= (")
    # The calls' grammar from the tools: ember writes it in the template's syntax.
    with ember.Model(path) as model:
        calls = model.tool_grammar(TOOLS)
        assert calls.startswith("root ::= [ \\t\\n]{0,4} call") and '"\\"city\\""' in calls
        assert model.tool_grammar(json.dumps(TOOLS)) == calls
        with pytest.raises(ember.EmberError, match="not an object"):
            model.tool_grammar([1])
        with ember.Session(model, context=512,
                           grammar_bytes=model.grammar_bytes(calls)) as session:
            chat = ember.Chat(session, max_tools_bytes=4096)
            chat.set_tools(TOOLS, grammar=True)
            chat.add("user", "Weather in Oslo?")
            chat.reply(max_new=8)  # the random model opens no call: free text
            assert chat.tool_calls == []
    with ember.Model(CHAT_MODEL) as plain, ember.Session(plain, context=256) as session:
        with pytest.raises(ember.EmberError):  # its template has no tool-call syntax
            ember.Chat(session, max_tools_bytes=4096).set_tools(TOOLS)
