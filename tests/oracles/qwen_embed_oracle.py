#!/usr/bin/env python3
"""Oracle: Qwen3-Embedding-style embedders (issue 39). hf_families.py's float64 Qwen3
reference (causal), random weights saved as a Hugging Face directory with Qwen3's real
tokenizer given Qwen3-Embedding's post-processor (ByteLevel, then a TemplateProcessing
that appends <|endoftext|>) and a sentence-transformers modules.json: lasttoken Pooling,
Normalize. `ember convert --hf` + `ember embed` must give the reference's vector: the
final hidden state (after the final norm) at the last token, the appended end token,
scaled to unit length.

Also: Matryoshka truncation (--dims, which Qwen3-Embedding supports), --no-normalize,
q8 by cosine, and the instruction prefix as Qwen3-Embedding's model card writes a query
("Instruct: ...\\nQuery:" before the text, the end token after it), written by hand and
as the named prompt "query" of config_sentence_transformers.json (--prompt-name).
"""
import json
import os

import family_oracle as fam
import oracle_util as u

END = 151643  # <|endoftext|>
TEXTS = ["What is the capital of China?", "Explain gravity",
         "The capital of China is Beijing. 北京是中国的首都。",
         "Gravity is a force that attracts two bodies towards each other. It gives "
         "weight to physical objects and is responsible for the movement of planets "
         "around the sun."]
INSTRUCT = ("Instruct: Given a web search query, retrieve relevant passages that answer "
            "the query\nQuery:")


def write_modules(directory, d):
    """modules.json: the Transformer, lasttoken Pooling, Normalize."""
    os.makedirs(os.path.join(directory, "1_Pooling"))
    with open(os.path.join(directory, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": d, "pooling_mode_cls_token": False,
                   "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False,
                   "pooling_mode_weightedmean_tokens": False,
                   "pooling_mode_lasttoken": True, "include_prompt": True}, f)
    modules = [{"idx": 0, "name": "0", "path": "",
                "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize",
                "type": "sentence_transformers.models.Normalize"}]
    with open(os.path.join(directory, "modules.json"), "w") as f:
        json.dump(modules, f)
    # Named prompts, as Qwen3-Embedding's config_sentence_transformers.json has them.
    with open(os.path.join(directory, "config_sentence_transformers.json"), "w") as f:
        json.dump({"prompts": {"query": INSTRUCT, "document": ""},
                   "default_prompt_name": None, "similarity_fn_name": "cosine"}, f)


def append_end_token(directory):
    """Qwen3-Embedding's post-processor: the byte-level one, then <|endoftext|> after
    the text (and after each text of a pair)."""
    path = os.path.join(directory, "tokenizer.json")
    with open(path, encoding="utf-8") as f:
        tok = json.load(f)
    end = {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}
    tok["post_processor"] = {"type": "Sequence", "processors": [
        tok["post_processor"],
        {"type": "TemplateProcessing",
         "single": [{"Sequence": {"id": "A", "type_id": 0}}, end],
         "pair": [{"Sequence": {"id": "A", "type_id": 0}}, end,
                  {"Sequence": {"id": "B", "type_id": 1}}, end],
         "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [END],
                                              "tokens": ["<|endoftext|>"]}}}]}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)


def embedding(torch, model, ids, dims=None, normalize=True):
    with torch.no_grad():
        v = model.hidden(torch.tensor([ids]))[0][-1]
    if dims:
        v = v[:dims]
    return (v / torch.linalg.norm(v) if normalize else v).numpy()


def main():
    args, torch, np, ember, report = fam.begin("qwen_embed", __doc__)
    hf = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"],
          "vocab_size": fam.REAL_VOCAB["qwen3"], "hidden_size": 64,
          "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
          "num_key_value_heads": 2, "head_dim": 32, "max_position_embeddings": 256,
          "rms_norm_eps": 1e-6, "hidden_act": "silu", "rope_theta": 1000000.0,
          "attention_bias": False, "tie_word_embeddings": True,
          "use_sliding_window": False, "bos_token_id": END, "eos_token_id": END,
          "torch_dtype": "float32"}
    c = fam.ref.resolve(torch, hf)
    torch.manual_seed(23)
    model = fam.ref.modules(torch)(c).double().eval()
    fam.randomize(torch, model, "F32")
    directory = os.path.join(ember.dir, "qwen3_embedding")
    fam.save(directory, hf, model, "F32")
    fam.real_tokenizer(args, "qwen3")(directory)
    append_end_token(directory)
    write_modules(directory, 64)

    path = ember.convert(directory, "qwen3_embedding")
    info = ember.run("inspect", "-m", path)
    line = next((l for l in info.splitlines() if l.startswith("embedding")), "")
    report.check("inspect: 64 values, last-token pooling, normalized",
                 "64 values, pooling last" in line and "normalized" in line, f"({line!r})")
    report.check("inspect: an embedded text ends with <|endoftext|>",
                 f"an embedded text ends with {END} '<|endoftext|>'" in info, "")
    # The reference's ids: the text's, then the end token the post-processor appends.
    ids = [ember.tokenize(path, t, bos=False) + [END] for t in TEXTS]
    argv = sum((["-p", t] for t in TEXTS), [])
    cases = [("f32, normalized", [], {}), ("f32, --dims 32", ["--dims", 32], {"dims": 32}),
             ("f32, --no-normalize", ["--no-normalize"], {"normalize": False})]
    for what, flags, kw in cases:
        out = ember.path("embed.npy")
        ember.run("embed", "-m", path, *argv, *flags, "-o", out, "-t", 2)
        refs = np.stack([embedding(torch, model, i, **kw) for i in ids])
        report.compare(f"{what}: {len(TEXTS)} texts", np.load(out), refs,
                       2e-5 * max(1.0, float(np.abs(refs).max())), 1e-4)
    # A query as the model card writes one: the instruction, then the text.
    query = f"{INSTRUCT}{TEXTS[0]}"
    out = ember.path("query.npy")
    ember.run("embed", "-m", path, "-p", query, "-o", out)
    ref = embedding(torch, model, ember.tokenize(path, query, bos=False) + [END])
    report.compare("f32, an instructed query", np.load(out)[0], ref, 2e-5, 1e-4)
    report.check("inspect: the named prompts", f"prompt 'query': '{INSTRUCT}'" in info, "")
    out = ember.path("query_named.npy")
    ember.run("embed", "-m", path, "-p", TEXTS[0], "--prompt-name", "query", "-o", out)
    report.compare("f32, --prompt-name query (the prompt put before the text)",
                   np.load(out)[0], ref, 2e-5, 1e-4)

    q8 = ember.convert(directory, "qwen3_embedding_q8", "q8")
    out = ember.path("embed_q8.npy")
    ember.run("embed", "-m", q8, *argv, "-o", out)
    got = np.load(out)
    refs = np.stack([embedding(torch, model, i) for i in ids])
    cosine = min(float(np.dot(a, b)) for a, b in zip(got, refs))
    report.check(f"q8: least cosine {cosine:.6f} (at least 0.999)", cosine >= 0.999)
    report.finish(ember)


if __name__ == "__main__":
    main()
