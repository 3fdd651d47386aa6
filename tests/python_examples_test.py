"""python/examples/ run as a user runs them, on stories260K and on a GPT-2-architecture
model: the tables hold the rows they should, and the heatmap is an image of the size the
example lays out.

The GPT-2 model is built here as gpt2_oracle.py builds its own: a Hugging Face directory
with GPT-2's real vocabulary (cut to its first merges, tests/oracles) and random weights
(numpy: no PyTorch needed), converted with `ember convert --hf`. Its next-token table
must be the softmax of `ember logits` for the same prompt; its parameter table must equal
the counts of the tensors written.

Run by ctest (tests/CMakeLists.txt: python_examples_test) with EMBER_LIBRARY, EMBER_CLI,
EMBER_TEST_MODEL (stories260K converted) and EMBER_MODELS (for GPT-2's vocabulary).
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "python" / "examples"
sys.path.insert(0, str(ROOT / "tests" / "oracles"))
import oracle_util  # noqa: E402
from gpt2_oracle import truncated_gpt2_vocab  # noqa: E402

CLI = os.environ["EMBER_CLI"]
STORIES = os.environ["EMBER_TEST_MODEL"]
MODELS = os.environ.get("EMBER_MODELS", str(ROOT.parent / "shared" / "models"))
ROW = re.compile(r"^ +(\d+) +(\d+)  (\".*\"|<eos>|<bos>) +([0-9.]+)$")


def example(name: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def cli(*args: str) -> str:
    return subprocess.run([CLI, *args], check=True, capture_output=True).stdout.decode()


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory) -> tuple:
    """(model path, {kind: parameters} of the tensors written)."""
    if not os.path.exists(os.path.join(MODELS, "gpt2-bpe", "encoder.json")):
        pytest.fail(f"GPT-2's vocabulary is missing under {MODELS} (set EMBER_MODELS)")
    vocab, merges, eot = truncated_gpt2_vocab(MODELS)
    e, layers, positions = 64, 2, 64
    config = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"],
              "vocab_size": len(vocab), "n_positions": positions, "n_embd": e,
              "n_layer": layers, "n_head": 4, "n_inner": None,
              "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
              "bos_token_id": eot, "eos_token_id": eot, "tie_word_embeddings": True}
    rng = np.random.default_rng(40)
    tensors = {"wte.weight": rng.normal(0, 0.25, (len(vocab), e)),
               "wpe.weight": rng.normal(0, 0.1, (positions, e)),
               "ln_f.weight": np.ones(e), "ln_f.bias": np.zeros(e)}
    shapes = {"ln_1.weight": (e,), "ln_1.bias": (e,), "ln_2.weight": (e,),
              "ln_2.bias": (e,), "attn.c_attn.weight": (e, 3 * e),
              "attn.c_attn.bias": (3 * e,), "attn.c_proj.weight": (e, e),
              "attn.c_proj.bias": (e,), "mlp.c_fc.weight": (e, 4 * e),
              "mlp.c_fc.bias": (4 * e,), "mlp.c_proj.weight": (4 * e, e),
              "mlp.c_proj.bias": (e,)}
    for layer in range(layers):
        for name, shape in shapes.items():
            scale = 0.1 if ".ln_" in "." + name else 0.25
            base = 1.0 if name.startswith("ln_") and name.endswith("weight") else 0.0
            tensors[f"h.{layer}.{name}"] = base + rng.normal(0, scale, shape)
    per_layer = {"W_q": e * e + e, "W_k": e * e + e, "W_v": e * e + e,
                 "W_o": e * e + e, "ffn": 2 * 4 * e * e + 4 * e + e, "norms": 4 * e}
    kinds = {"embeddings": len(vocab) * e + positions * e}
    kinds.update({k: layers * n for k, n in per_layer.items()})
    kinds["norms"] += 2 * e
    hf = tmp_path_factory.mktemp("gpt2")
    (hf / "config.json").write_text(json.dumps(config))
    oracle_util.write_safetensors(str(hf / "model.safetensors"), tensors)
    (hf / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), "utf-8")
    (hf / "merges.txt").write_text(
        "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges), "utf-8")
    path = str(hf / "gpt2.ember")
    cli("convert", "--hf", str(hf), "-o", path)
    return path, kinds


def top_k_rows(text: str) -> list:
    lines = text.splitlines()
    assert lines[1].split() == ["rank", "token", "id", "token", "probability"]
    rows = [ROW.match(line) for line in lines[2:]]
    assert all(rows), lines
    return [(int(r[1]), int(r[2]), r[3] if r[3].startswith("<") else json.loads(r[3]),
             float(r[4])) for r in rows]


def test_top_k_on_stories260k():
    rows = top_k_rows(example("top_k.py", "-m", STORIES, "-p", "Once upon a time",
                              "-k", "5"))
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5]
    assert rows[0][1:3] == (432, ",") and abs(rows[0][3] - 0.9688) < 1e-3
    assert rows[1][2] == " there"


def test_top_k_on_gpt2_is_the_softmax_of_ember_logits(gpt2, tmp_path):
    path, _ = gpt2
    prompt = "The quick brown fox jumps over the"
    text = example("top_k.py", "-m", path, "-p", prompt, "-k", "10")
    assert "model: gpt2" in text.splitlines()[0]
    rows = top_k_rows(text)
    assert len(rows) == 10
    out = tmp_path / "logits.npy"
    cli("logits", "-m", path, "-p", prompt, "-o", str(out))
    logits = np.load(out)[-1].astype(np.float64)
    p = np.exp(logits - logits.max())
    p /= p.sum()
    best = np.argsort(-logits, kind="stable")[:10]
    assert [r[1] for r in rows] == [int(t) for t in best]
    np.testing.assert_allclose([r[3] for r in rows], p[best], atol=1e-6)
    vocab, _, eot = truncated_gpt2_vocab(MODELS)
    pieces = {i: piece for piece, i in vocab.items()}
    byte_of = {ch: b for b, ch in gpt2_byte_chars().items()}
    for _, token, shown, _ in rows:  # a piece that is part of a character shows U+FFFD
        if token == eot:
            assert shown == "<eos>"
            continue
        token_bytes = bytes(byte_of[c] for c in pieces[token])
        assert shown == token_bytes.decode("utf-8", "replace")


def gpt2_byte_chars() -> dict:
    """GPT-2's byte-to-character table (encoder.py's bytes_to_unicode)."""
    bs = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) +
          list(range(ord("®"), ord("ÿ") + 1)))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def parameter_rows(text: str) -> dict:
    found = {}
    for line in text.splitlines():
        m = re.match(r"^(\S+) +([\d,]+) +([\d.]+)%$", line)
        if m:
            found[m[1]] = int(m[2].replace(",", ""))
    return found


def inspect_kinds(path: str) -> dict:
    block = cli("inspect", "-m", path, "-c", "16").split("\nparameters", 1)[1]
    block = block.split("\nweights by type", 1)[0]
    kinds = {m[1]: int(m[2]) for m in re.finditer(r"^  (\S+) +(\d+)  \(", block, re.M)}
    kinds["total"] = int(block.split()[0])
    return kinds


def test_param_count_on_stories260k():
    rows = parameter_rows(example("param_count.py", "-m", STORIES))
    assert rows == inspect_kinds(STORIES)
    assert rows["total"] == 260032 and rows["ffn"] == 165120


def test_param_count_on_gpt2_counts_the_tensors_written(gpt2):
    path, kinds = gpt2
    text = example("param_count.py", "-m", path)
    rows = parameter_rows(text)
    assert rows == dict(kinds, total=sum(kinds.values()))
    assert rows == inspect_kinds(path)
    assert "tied to the token embedding" in text and "(4 KV heads: MHA" in text


@pytest.mark.parametrize("model,heads,layer", [("stories", 8, "4"), ("gpt2", 4, "0")])
def test_attention_heatmap_png(model, heads, layer, gpt2, tmp_path):
    from PIL import Image
    path = STORIES if model == "stories" else gpt2[0]
    out = tmp_path / "heatmap.png"
    text = example("attention_heatmap.py", "-m", path, "-p", "Lily saw a big dog",
                   "--layer", layer, "-o", str(out))
    assert f"layer {layer}, {heads} heads" in text
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 20_000, len(data)  # drawn, not blank
    with Image.open(out) as image:
        image.verify()
    with Image.open(out) as image:
        # The example's layout: 4 heads a row, 3.2 inches each, 100 dpi.
        rows = (heads + 3) // 4
        assert image.size == (4 * 320, rows * 320)
        pixels = np.asarray(image.convert("RGB"))
        assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50  # a colour map


def test_attention_heatmap_svg(tmp_path):
    out = tmp_path / "heatmap.svg"
    example("attention_heatmap.py", "-m", STORIES, "-o", str(out))
    text = out.read_text()
    assert text.startswith("<?xml") and "<svg" in text and "head 7" in text
