"""The Python package's embeddings and reranking against the CLI, on small encoders
converted in the test (run by ctest's python_test with test_ember.py, whose environment
it reads: EMBER_LIBRARY, EMBER_CLI, EMBER_TEST_MODEL).
"""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ember

CLI = os.environ["EMBER_CLI"]
MODEL = os.environ["EMBER_TEST_MODEL"]


def cli(*args: str) -> str:
    return subprocess.run([CLI, *args], check=True, capture_output=True).stdout.decode()


def write_embedder(directory: Path, reranker: bool = False) -> None:
    """A small encoder with mean pooling and Normalize (or, as a reranker, cls pooling
    and a head of one output) as a Hugging Face directory of model_type "ember" (random
    weights, a byte-level tokenizer of 300 pieces)."""
    rng = np.random.default_rng(3)
    d, f, vocab, layers = 32, 64, 300, 2
    tensors = {"token_embd.weight": rng.normal(0, 0.5, (vocab, d)),
               "position_embd.weight": rng.normal(0, 0.3, (64, d))}
    for i in range(layers):
        for name, shape in (("attn_q", (d, d)), ("attn_k", (d, d)), ("attn_v", (d, d)),
                            ("attn_output", (d, d)), ("ffn_up", (f, d)),
                            ("ffn_down", (d, f))):
            tensors[f"blk.{i}.{name}.weight"] = rng.normal(0, 0.2, shape)
        for name in ("attn_norm", "ffn_norm"):
            tensors[f"blk.{i}.{name}.weight"] = 1 + rng.normal(0, 0.1, d)
            tensors[f"blk.{i}.{name}.bias"] = rng.normal(0, 0.1, d)
    if reranker:
        tensors["cls.weight"] = rng.normal(0, 0.2, (d, d))
        tensors["cls.bias"] = rng.normal(0, 0.1, d)
        tensors["cls.output.weight"] = rng.normal(0, 0.5, (1, d))
        tensors["cls.output.bias"] = rng.normal(0, 0.1, 1)
    header, blobs, offset = {}, [], 0
    for name, value in tensors.items():
        data = np.ascontiguousarray(value, dtype=np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    with open(directory / "model.safetensors", "wb") as out:
        out.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))
    config = {"model_type": "ember", "architecture": "encoder", "d_model": d,
              "n_layers": layers, "n_heads": 4, "ffn_dim": f, "vocab_size": vocab,
              "max_context": 64, "norm": "layernorm", "norm_placement": "post",
              "final_norm": False, "ffn": "plain", "activation": "gelu_erf",
              "positions": "learned", "mask": "bidirectional", "tied_classifier": True,
              "pooling": "mean", "normalize": True}
    if reranker:
        config.update(pooling="cls", normalize=False, labels=1, label_pooler=True,
                      eos_token_id=299)
    (directory / "config.json").write_text(json.dumps(config))
    printable = [chr(c) for c in range(33, 127)] + [chr(c) for c in range(161, 173)] + \
        [chr(c) for c in range(174, 256)]
    alphabet = {b: (chr(b) if chr(b) in printable else None) for b in range(256)}
    extra = 0
    for b in range(256):
        if alphabet[b] is None:
            alphabet[b] = chr(256 + extra)
            extra += 1
    pieces = {alphabet[b]: b for b in range(256)}
    merges = [("t", "h"), ("e", "r"), ("i", "n"), ("a", "n")]
    for a, b in merges:
        pieces[a + b] = len(pieces)
    while len(pieces) < vocab:
        pieces[f"<extra_{len(pieces)}>"] = len(pieces)
    (directory / "vocab.json").write_text(json.dumps(pieces))
    (directory / "merges.txt").write_text("#version: 0.2\n" +
                                          "".join(f"{a} {b}\n" for a, b in merges))


def test_embeddings_match_the_cli_and_batch_rows(tmp_path):
    source = tmp_path / "encoder"
    source.mkdir()
    write_embedder(source)
    path = tmp_path / "encoder.ember"
    cli("convert", "--hf", str(source), "-o", str(path))
    texts = ["the first text", "another one, longer than the first", "x"]
    expected = np.array([json.loads(line) for line in
                         cli("embed", "-m", str(path), *sum((["-p", t] for t in texts), []))
                         .splitlines()], dtype=np.float32)
    with ember.Model(path) as model, ember.Session(model, context=64) as session:
        assert model.embedding_dims == 32
        batch = session.embed(texts)
        assert batch.shape == (3, 32) and batch.dtype == np.float32
        np.testing.assert_array_equal(batch, expected)
        np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, rtol=1e-5)
        one = session.embed(texts[1])
        np.testing.assert_array_equal(one, batch[1])
        cut = session.embed(texts[0], dims=8, normalize=False)
        np.testing.assert_allclose(cut / np.linalg.norm(cut), batch[0][:8] /
                                   np.linalg.norm(batch[0][:8]), rtol=1e-5)
        with pytest.raises(ember.EmberError, match="dimensions"):
            session.embed("x", dims=33)
    with ember.Model(MODEL) as plain, ember.Session(plain, context=64) as session:
        assert plain.embedding_dims == 0
        with pytest.raises(ValueError, match="not embeddings"):
            session.embed("x")


def test_named_prompts_go_before_the_text(tmp_path):
    source = tmp_path / "prompted"
    source.mkdir()
    write_embedder(source)
    (source / "config_sentence_transformers.json").write_text(json.dumps(
        {"prompts": {"query": "query: ", "document": "passage: "},
         "default_prompt_name": "document"}))
    path = tmp_path / "prompted.ember"
    cli("convert", "--hf", str(source), "-o", str(path))
    expected = json.loads(cli("embed", "-m", str(path), "-p", "cats",
                              "--prompt-name", "query"))
    with ember.Model(path) as model, ember.Session(model, context=64) as session:
        query = session.embed("cats", prompt_name="query")
        np.testing.assert_array_equal(query, np.array(expected, dtype=np.float32))
        np.testing.assert_array_equal(query, session.embed("query: cats", prompt_name=""))
        np.testing.assert_array_equal(session.embed(["cats"])[0],  # the default prompt
                                      session.embed("passage: cats", prompt_name=""))
        with pytest.raises(ember.EmberError, match="'title'"):
            session.embed("cats", prompt_name="title")


def test_rerank_matches_the_cli(tmp_path):
    source = tmp_path / "cross"
    source.mkdir()
    write_embedder(source, reranker=True)
    path = tmp_path / "cross.ember"
    cli("convert", "--hf", str(source), "-o", str(path))
    docs = ["the cat sat", "a dog ran in the park", "nothing here", "the the the"]
    lines = cli("rerank", "-m", str(path), "--query", "where is the cat",
                *sum((["-p", d] for d in docs), [])).splitlines()
    expected = {int(line.split("\t")[1]) - 1: float(line.split("\t")[0]) for line in lines}
    with ember.Model(path) as model, ember.Session(model, context=64) as session:
        scores = session.rerank("where is the cat", docs)
        assert scores.shape == (4,) and scores.dtype == np.float32
        np.testing.assert_allclose(scores, [expected[i] for i in range(4)], atol=2e-6)
        assert len(set(scores.tolist())) == 4  # the documents are told apart
        # Only a reranker with a prompt (Qwen3-Reranker) takes an instruction.
        with pytest.raises(ember.EmberError, match="instruction"):
            session.rerank("where is the cat", docs, instruction="find the cat")
