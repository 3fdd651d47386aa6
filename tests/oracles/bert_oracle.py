#!/usr/bin/env python3
"""Oracle: BERT-style sentence encoders (issue 39). A float64 BERT written here from
PyTorch primitives (word + position + segment embeddings, their LayerNorm; per layer
post-LN self-attention and GELU feed-forward; no final norm), random weights saved as a
Hugging Face directory (config.json model_type "bert", BertModel's tensor names, a
sentence-transformers modules.json with its pooling and Normalize), converted with
`ember convert --hf`; `ember embed` must give the pooled, normalized vectors of the
reference on the ids `ember tokenize` gives (the tokenizer has its own oracle).

Variants: mean pooling with Normalize over a byte-level tokenizer (f32, f16, q8, q4);
CLS pooling without Normalize over a WordPiece tokenizer.json (f32); Matryoshka
truncation (--dims) and --no-normalize against the same reference.
"""
import json
import math
import os

import oracle_util as u

COSINE_MIN = {"f32": 0.99999, "f16": 0.9999, "q8": 0.999, "q4": 0.98}
ABS_TOL = {"f32": 2e-5, "f16": 5e-4, "q8": 1.5e-2, "q4": 6e-2}


def random_weights(torch, V, D, F, L, T, types):
    g = torch.Generator().manual_seed(7)

    def rnd(*shape, scale=0.2, base=0.0):
        return base + torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    w = {"embeddings.word_embeddings.weight": rnd(V, D, scale=0.5),
         "embeddings.position_embeddings.weight": rnd(T, D, scale=0.3),
         "embeddings.token_type_embeddings.weight": rnd(types, D, scale=0.3),
         "embeddings.LayerNorm.weight": rnd(D, scale=0.1, base=1.0),
         "embeddings.LayerNorm.bias": rnd(D, scale=0.1)}
    for i in range(L):
        p = f"encoder.layer.{i}."
        for name, rows, cols in (("attention.self.query", D, D), ("attention.self.key", D, D),
                                 ("attention.self.value", D, D),
                                 ("attention.output.dense", D, D),
                                 ("intermediate.dense", F, D), ("output.dense", D, F)):
            w[p + name + ".weight"] = rnd(rows, cols, scale=1.0 / math.sqrt(cols))
            w[p + name + ".bias"] = rnd(rows, scale=0.1)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + name + ".weight"] = rnd(D, scale=0.1, base=1.0)
            w[p + name + ".bias"] = rnd(D, scale=0.1)
    w["pooler.dense.weight"] = rnd(D, D)  # left out for embeddings; a cross-encoder uses it
    w["pooler.dense.bias"] = rnd(D)
    return {k: v.float().double() for k, v in w.items()}  # as stored: f32


def forward(torch, w, ids, types, heads, eps):
    """Final hidden states [T, D] of BertModel's encoder, in float64."""
    F = torch.nn.functional
    T = len(ids)
    x = (w["embeddings.word_embeddings.weight"][ids] +
         w["embeddings.position_embeddings.weight"][:T] +
         w["embeddings.token_type_embeddings.weight"][types])
    D = x.shape[1]
    x = F.layer_norm(x, (D,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    hd = D // heads
    i = 0
    while f"encoder.layer.{i}.output.dense.weight" in w:
        p = f"encoder.layer.{i}."
        lin = lambda name, v: v @ w[p + name + ".weight"].T + w[p + name + ".bias"]
        q, k, v = (lin("attention.self." + n, x).view(T, heads, hd).transpose(0, 1)
                   for n in ("query", "key", "value"))
        att = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(hd), dim=-1)
        ctx = (att @ v).transpose(0, 1).reshape(T, D)
        x = F.layer_norm(x + lin("attention.output.dense", ctx), (D,),
                         w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"], eps)
        h = F.gelu(lin("intermediate.dense", x))  # erf GELU ("gelu")
        x = F.layer_norm(x + lin("output.dense", h), (D,), w[p + "output.LayerNorm.weight"],
                         w[p + "output.LayerNorm.bias"], eps)
        i += 1
    return x


def pool(torch, hidden, pooling, normalize, dims=None):
    v = hidden.mean(0) if pooling == "mean" else hidden[0]
    if dims:
        v = v[:dims]
    if normalize:
        v = v / torch.linalg.norm(v)
    return v


def write_wordpiece_tokenizer(directory):
    """A tokenizer.json of a WordPiece vocabulary written here: specials, letters, '##'
    continuations of letters, some words and pieces. Returns its size."""
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    letters = list("abcdefghijklmnopqrstuvwxyz0123456789.,!?'")
    vocab += letters + ["##" + c for c in letters]
    vocab += ["the", "cat", "sat", "on", "mat", "dog", "##s", "##ing", "run", "play",
              "##ed", "hello", "world", "emb", "##ed", "##ding", "model"]
    vocab = list(dict.fromkeys(vocab))
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for i, t in enumerate(vocab[:5])],
        "normalizer": {"type": "BertNormalizer", "clean_text": True,
                       "handle_chinese_chars": True, "strip_accents": None,
                       "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                               "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                  "vocab": {t: i for i, t in enumerate(vocab)}},
    }
    with open(os.path.join(directory, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True,
                   "cls_token": "[CLS]", "sep_token": "[SEP]", "unk_token": "[UNK]",
                   "pad_token": "[PAD]", "mask_token": "[MASK]"}, f)
    return len(vocab)


def write_model(u, torch, d, w, config, pooling, normalize):
    u.write_safetensors(os.path.join(d, "model.safetensors"),
                        {k: v.numpy() for k, v in w.items()}, "F32")
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f)
    modules = [{"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize"})
    with open(os.path.join(d, "modules.json"), "w") as f:
        json.dump(modules, f)
    os.makedirs(os.path.join(d, "1_Pooling"))
    with open(os.path.join(d, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": config["hidden_size"],
                   "pooling_mode_cls_token": pooling == "cls",
                   "pooling_mode_mean_tokens": pooling == "mean",
                   "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False}, f)


def cross_encoder(u, torch, np, ember, report, D, H, F, L, T, eps):
    """BertForSequenceClassification with one label (a reranker): the pair's tokens with
    types 0 and 1, [CLS]'s final state through the pooler (tanh) and the classifier;
    `ember rerank` must give the reference's logits, best first."""
    d = os.path.join(ember.dir, "cross_encoder")
    os.makedirs(d)
    eot = u.write_small_byte_level_tokenizer(d, 300)
    w = random_weights(torch, 300, D, F, L, T, 2)
    hf = {"bert." + k: v for k, v in w.items()}  # BertForSequenceClassification names
    g = torch.Generator().manual_seed(11)
    hf["classifier.weight"] = (torch.randn(1, D, generator=g, dtype=torch.float64)
                               ).float().double()
    hf["classifier.bias"] = torch.tensor([0.1], dtype=torch.float64)
    config = {"model_type": "bert", "architectures": ["BertForSequenceClassification"],
              "hidden_size": D, "num_hidden_layers": L, "num_attention_heads": H,
              "intermediate_size": F, "hidden_act": "gelu", "max_position_embeddings": T,
              "type_vocab_size": 2, "vocab_size": 300, "layer_norm_eps": eps,
              "num_labels": 1, "eos_token_id": eot}
    u.write_safetensors(os.path.join(d, "model.safetensors"),
                        {k: v.numpy() for k, v in hf.items()}, "F32")
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f)
    model = ember.convert(d, "cross_encoder")
    info = ember.run("inspect", "-m", model)
    report.check("cross-encoder: inspect shows cls pooling", "pooling cls" in info, "")
    query, docs = "where does the cat sit", TEXTS
    out = ember.run("rerank", "-m", model, "--query", query, *sum((["-p", t] for t in docs), []),
                    "-t", 2)
    got = {}
    for line in out.strip().split("\n"):
        score, index, _ = line.split("\t", 2)
        got[int(index) - 1] = float(score)
    order = [int(line.split("\t")[1]) - 1 for line in out.strip().split("\n")]
    refs = []
    q_ids = ember.tokenize(model, query)
    for doc in docs:
        d_ids = ember.tokenize(model, doc, bos=False) + [eot]
        ids, types = q_ids + d_ids, [0] * len(q_ids) + [1] * len(d_ids)
        hidden = forward(torch, w, ids, types, H, eps)
        pooled = torch.tanh(w["pooler.dense.weight"] @ hidden[0] + w["pooler.dense.bias"])
        refs.append(float(hf["classifier.weight"][0] @ pooled + hf["classifier.bias"][0]))
    report.compare("cross-encoder: rerank scores of 6 documents, 2 threads",
                   [got[i] for i in range(len(docs))], refs, 2e-5, 1e-5)
    report.check("cross-encoder: best first", order == sorted(range(len(docs)),
                                                               key=lambda i: -refs[i]), "")


def gguf_bert(u, torch, np, ember, report, D, H, F, L, T, eps):
    """The WordPiece BERT written as llama.cpp's bert GGUF (its tensor names, U+2581 word
    starts, mean pooling_type), with tests/oracles/gguf_writer.py: `ember convert --gguf`
    must tokenize as the Hugging Face import does and embed as the reference (normalized,
    as llama-embedding does by default)."""
    import gguf_writer as g
    d = os.path.join(ember.dir, "bert_gguf_tok")
    os.makedirs(d)
    V = write_wordpiece_tokenizer(d)
    with open(os.path.join(d, "tokenizer.json"), encoding="utf-8") as f:
        vocab = sorted(json.load(f)["model"]["vocab"].items(), key=lambda kv: kv[1])
    pieces = [t if t.startswith("[") else t[2:] if t.startswith("##") else "\u2581" + t
              for t, _ in vocab]
    w = random_weights(torch, V, D, F, L, T, 2)
    names = {"embeddings.word_embeddings.weight": "token_embd.weight",
             "embeddings.position_embeddings.weight": "position_embd.weight",
             "embeddings.token_type_embeddings.weight": "token_types.weight",
             "embeddings.LayerNorm.weight": "token_embd_norm.weight",
             "embeddings.LayerNorm.bias": "token_embd_norm.bias"}
    for i in range(L):
        for hf, gg in (("attention.self.query", "attn_q"), ("attention.self.key", "attn_k"),
                       ("attention.self.value", "attn_v"),
                       ("attention.output.dense", "attn_output"),
                       ("attention.output.LayerNorm", "attn_output_norm"),
                       ("intermediate.dense", "ffn_up"), ("output.dense", "ffn_down"),
                       ("output.LayerNorm", "layer_output_norm")):
            for kind in ("weight", "bias"):
                names[f"encoder.layer.{i}.{hf}.{kind}"] = f"blk.{i}.{gg}.{kind}"
    meta = [("general.architecture", g.STRING, "bert"),
            ("bert.context_length", g.UINT32, T), ("bert.embedding_length", g.UINT32, D),
            ("bert.feed_forward_length", g.UINT32, F), ("bert.block_count", g.UINT32, L),
            ("bert.attention.head_count", g.UINT32, H),
            ("bert.attention.layer_norm_epsilon", g.FLOAT32, eps),
            ("bert.attention.causal", g.BOOL, False), ("bert.pooling_type", g.UINT32, 1),
            ("tokenizer.ggml.model", g.STRING, "bert"),
            ("tokenizer.ggml.tokens", g.ARRAY, (g.STRING, pieces)),
            ("tokenizer.ggml.token_type", g.ARRAY,
             (g.INT32, [3 if t.startswith("[") else 1 for t, _ in vocab])),
            ("tokenizer.ggml.token_type_count", g.UINT32, 2),
            ("tokenizer.ggml.cls_token_id", g.UINT32, 2),
            ("tokenizer.ggml.seperator_token_id", g.UINT32, 3),
            ("tokenizer.ggml.unknown_token_id", g.UINT32, 1),
            ("tokenizer.ggml.padding_token_id", g.UINT32, 0)]
    path = ember.path("bert.gguf")
    g.write(path, meta, [(names[k], v.numpy()) for k, v in w.items() if k in names])
    model = ember.path("bert_gguf.ember")
    ember.run("convert", "--gguf", path, "-o", model)
    hf_model = ember.path("bert_wordpiece_f32.ember")
    same = all(ember.tokenize(model, t) == ember.tokenize(hf_model, t) for t in TEXTS)
    report.check("GGUF bert: the same ids as the tokenizer.json import", same, "")
    out = ember.path("embed_gguf.npy")
    ember.run("embed", "-m", model, *sum((["-p", t] for t in TEXTS), []), "-o", out)
    got = np.load(out)
    refs = np.stack([pool(torch, forward(torch, w, ids, [0] * len(ids), H, eps), "mean",
                          True).numpy()
                     for ids in (ember.tokenize(model, t) for t in TEXTS)])
    report.compare("GGUF bert (f32, mean, normalized): 6 texts", got, refs, 2e-5, 1e-4)


TEXTS = ["the cat sat on the mat", "Hello, world! Embedding models run here.",
         "dogs running and playing", "a", "the the the the the the the the the the",
         "Numbers 12345 and punctuation?!"]


def main():
    args = u.parse_args(__doc__)
    torch, np = u.import_torch()
    ember = u.Ember(args)
    report = u.Report("bert")
    D, H, F, L, T, eps = 48, 4, 96, 2, 64, 1e-12
    variants = [("byte-level, mean, Normalize", "byte", "mean", True),
                ("WordPiece, cls", "wordpiece", "cls", False)]
    for name, tokenizer, pooling, normalize in variants:
        d = os.path.join(ember.dir, "bert_" + tokenizer)
        os.makedirs(d)
        V = (u.write_small_byte_level_tokenizer(d, 300) + 1 if tokenizer == "byte"
             else write_wordpiece_tokenizer(d))
        w = random_weights(torch, V, D, F, L, T, 2)
        config = {"model_type": "bert", "architectures": ["BertModel"], "hidden_size": D,
                  "num_hidden_layers": L, "num_attention_heads": H,
                  "intermediate_size": F, "hidden_act": "gelu",
                  "max_position_embeddings": T, "type_vocab_size": 2, "vocab_size": V,
                  "layer_norm_eps": eps, "position_embedding_type": "absolute"}
        write_model(u, torch, d, w, config, pooling, normalize)
        dtypes = ("f32", "f16", "q8", "q4") if tokenizer == "byte" else ("f32",)
        for dtype in dtypes:
            model = ember.convert(d, f"bert_{tokenizer}_{dtype}", dtype)
            if dtype == "f32":
                info = ember.run("inspect", "-m", model)
                report.check(f"{name}: inspect shows the pooling",
                             f"pooling {pooling}" in info and
                             ("normalized" in info) == normalize, "")
            out = ember.path("embed.npy")
            ember.run("embed", "-m", model, *sum((["-p", t] for t in TEXTS), []), "-o", out)
            got = np.load(out)
            refs = []
            for text in TEXTS:
                ids = ember.tokenize(model, text)
                hidden = forward(torch, w, ids, [0] * len(ids), H, eps)
                refs.append(pool(torch, hidden, pooling, normalize).numpy())
            refs = np.stack(refs)
            cos = min(float(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b))
                      for a, b in zip(got, refs))
            report.check(f"{name} ({dtype}): {len(TEXTS)} texts, least cosine {cos:.7f} "
                         f"(at least {COSINE_MIN[dtype]})", cos >= COSINE_MIN[dtype])
            report.compare(f"{name} ({dtype}): values", got, refs, ABS_TOL[dtype] * (
                1 if normalize else float(np.abs(refs).max())), 1.0)
        # Matryoshka truncation and --no-normalize, f32, two threads.
        model = ember.path(f"bert_{tokenizer}_f32.ember")
        out = ember.path("embed_dims.json")
        ember.run("embed", "-m", model, "-p", TEXTS[1], "--dims", 16, "--normalize",
                  "-o", out, "-t", 2)
        with open(out) as f:
            got = np.array(json.load(f))
        ids = ember.tokenize(model, TEXTS[1])
        hidden = forward(torch, w, ids, [0] * len(ids), H, eps)
        report.compare(f"{name}: --dims 16 --normalize, 2 threads", got[0],
                       pool(torch, hidden, pooling, True, 16).numpy(), 2e-5, 1e-4)
        # `ember bench --embed`: texts/s after the report, no heap call while timed.
        bench = ember.run("bench", "-m", model, "--embed", 3, "-p", 8, "-r", 1, "-t", 1,
                          "--probe-mib", 1)
        report.check(f"{name}: bench --embed reports texts/s with no heap call",
                     "embed 3x8" in bench and "texts/s" in bench and
                     "heap allocations 0" in bench, "")
        lines = ember.run("embed", "-m", model, "-p", TEXTS[2], "--no-normalize").split("\n")
        got = np.array(json.loads(lines[0]))
        ids = ember.tokenize(model, TEXTS[2])
        ref = pool(torch, forward(torch, w, ids, [0] * len(ids), H, eps), pooling, False)
        report.compare(f"{name}: --no-normalize (stdout JSON)", got, ref.numpy(), 1e-4, 1e-5)
    cross_encoder(u, torch, np, ember, report, D, H, F, L, T, eps)
    gguf_bert(u, torch, np, ember, report, D, H, F, L, T, eps)
    report.finish(ember)


if __name__ == "__main__":
    main()
