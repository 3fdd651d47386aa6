#!/usr/bin/env python3
"""Oracle: EmbeddingGemma-style embedders (issue 39). hf_families.py's float64 Gemma 3
reference with bidirectional attention (Gemma3TextConfig's use_bidirectional_attention:
every key, and in a sliding layer the keys within sliding_window // 2 on either side),
random weights saved as a Gemma3TextModel directory (tensors without "model.") with a
sentence-transformers modules.json: mean Pooling, two Dense projections, Normalize.
`ember convert --hf` + `ember embed` must give the reference's vectors on the ids
`ember tokenize` gives.

Texts of up to 60 tokens against a window of 16 (8 on either side), so the symmetric
window decides what a sliding layer sees. The first Dense is EmbeddingGemma's (no bias,
Identity); the second has a bias and Tanh (sentence-transformers' Dense defaults), so
both of ember's projection flags are checked. Also: Matryoshka truncation (--dims) and
--no-normalize against the same reference, q8 by cosine, and the refusal of a Dense
module whose in_features do not follow.
"""
import json
import os

import family_oracle as fam
import oracle_util as u

VOCAB = 512
TEXTS = ["Once upon a time there was a little cat who liked to sit on the warm mat "
         "by the window and watch the birds fly past the old tree in the garden.",
         "The dog ran.", "a",
         "Lily and Ben played with a big red ball in the park until the sun went down "
         "and their mother called them home for dinner."]


def write_modules(directory, torch, d, dense):
    """modules.json, 1_Pooling (mean), 2_Dense, 3_Dense, 4_Normalize; returns the Dense
    weights (weight, bias or None, tanh) in order."""
    modules = [{"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"}]
    os.makedirs(os.path.join(directory, "1_Pooling"))
    with open(os.path.join(directory, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": d, "pooling_mode_mean_tokens": True,
                   "pooling_mode_cls_token": False, "include_prompt": True}, f)
    g = torch.Generator().manual_seed(5)
    layers, in_features = [], d
    for i, (out, bias, tanh) in enumerate(dense):
        folder = f"{i + 2}_Dense"
        modules.append({"idx": i + 2, "name": str(i + 2), "path": folder,
                        "type": "sentence_transformers.models.Dense"})
        os.makedirs(os.path.join(directory, folder))
        act = "torch.nn.modules.activation.Tanh" if tanh else "torch.nn.modules.linear.Identity"
        with open(os.path.join(directory, folder, "config.json"), "w") as f:
            json.dump({"in_features": in_features, "out_features": out, "bias": bias,
                       "activation_function": act}, f)
        w = (torch.randn(out, in_features, generator=g, dtype=torch.float64)
             / in_features ** 0.5).float().double()
        b = (torch.randn(out, generator=g, dtype=torch.float64) * 0.1).float().double() \
            if bias else None
        tensors = {"linear.weight": w.numpy()}
        if bias:
            tensors["linear.bias"] = b.numpy()
        u.write_safetensors(os.path.join(directory, folder, "model.safetensors"), tensors,
                            "F32")
        layers.append((w, b, tanh))
        in_features = out
    modules.append({"idx": len(modules), "name": str(len(modules)), "path": "4_Normalize",
                    "type": "sentence_transformers.models.Normalize"})
    with open(os.path.join(directory, "modules.json"), "w") as f:
        json.dump(modules, f)
    return layers


def embedding(torch, model, dense, ids, dims=None, normalize=True):
    with torch.no_grad():
        v = model.hidden(torch.tensor([ids]))[0].mean(0)
    for w, b, tanh in dense:
        v = w @ v + (b if b is not None else 0)
        if tanh:
            v = torch.tanh(v)
    if dims:
        v = v[:dims]
    return (v / torch.linalg.norm(v) if normalize else v).numpy()


def main():
    args, torch, np, ember, report = fam.begin("gemma_embed", __doc__)
    hf = {"model_type": "gemma3_text", "architectures": ["Gemma3TextModel"],
          "use_bidirectional_attention": True, "vocab_size": VOCAB, "hidden_size": 64,
          "intermediate_size": 96, "num_hidden_layers": 3, "num_attention_heads": 4,
          "num_key_value_heads": 1, "head_dim": 32, "max_position_embeddings": 256,
          "rms_norm_eps": 1e-6, "hidden_activation": "gelu_pytorch_tanh",
          "query_pre_attn_scalar": 32, "bos_token_id": 1, "eos_token_id": 2,
          "pad_token_id": 0, "layer_types": ["sliding_attention", "full_attention",
                                              "sliding_attention"],
          "sliding_window": 16, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
          "attn_logit_softcapping": None, "final_logit_softcapping": None,
          "torch_dtype": "float32"}
    c = fam.ref.resolve(torch, hf)
    torch.manual_seed(17)
    model = fam.ref.modules(torch)(c).double().eval()
    fam.randomize(torch, model, "F32")
    directory = os.path.join(ember.dir, "embeddinggemma")
    fam.save(directory, hf, model, "F32", rename=lambda k: k.replace("model.", "", 1))
    fam.sentencepiece_tokenizer(args)(directory)
    dense = write_modules(directory, torch, 64, [(96, False, False), (48, True, True)])

    path = ember.convert(directory, "embeddinggemma")
    info = ember.run("inspect", "-m", path)
    line = next((l for l in info.splitlines() if l.startswith("embedding")), "")
    report.check("inspect: 48 values, mean pooling, dense 96 -> 48+bias tanh, normalized",
                 "48 values, pooling mean, dense 96 -> 48+bias tanh, normalized" in line,
                 f"({line!r})")
    ids = [ember.tokenize(path, t) for t in TEXTS]
    report.check("the texts are longer than the window on either side",
                 max(len(i) for i in ids) > 2 * 8 + 1, f"({[len(i) for i in ids]} tokens)")
    argv = sum((["-p", t] for t in TEXTS), [])
    cases = [("f32, normalized", [], {}, 2e-5),
             ("f32, --dims 16", ["--dims", 16], {"dims": 16}, 2e-5),
             ("f32, --no-normalize", ["--no-normalize"], {"normalize": False}, 2e-5)]
    for what, flags, kw, tol in cases:
        out = ember.path("embed.npy")
        ember.run("embed", "-m", path, *argv, *flags, "-o", out, "-t", 2)
        refs = np.stack([embedding(torch, model, dense, i, **kw) for i in ids])
        report.compare(f"{what}: {len(TEXTS)} texts", np.load(out), refs,
                       tol * max(1.0, float(np.abs(refs).max())), 1e-4)
    q8 = ember.convert(directory, "embeddinggemma_q8", "q8")
    out = ember.path("embed_q8.npy")
    ember.run("embed", "-m", q8, *argv, "-o", out)
    got = np.load(out)
    refs = np.stack([embedding(torch, model, dense, i) for i in ids])
    cosine = min(float(np.dot(a, b)) for a, b in zip(got, refs))
    report.check(f"q8: least cosine {cosine:.6f} (at least 0.999)", cosine >= 0.999)

    with open(os.path.join(directory, "3_Dense", "config.json")) as f:
        bad = json.load(f)
    bad["in_features"] = 95
    with open(os.path.join(directory, "3_Dense", "config.json"), "w") as f:
        json.dump(bad, f)
    try:
        ember.convert(directory, "embeddinggemma_bad")
        report.check("a Dense module that does not follow is refused", False)
    except RuntimeError as e:
        report.check("a Dense module that does not follow is refused",
                     "in_features 95 after a vector of 96 values" in str(e), "")
    report.finish(ember)


if __name__ == "__main__":
    main()
