"""The driver of the family oracles: random weights for a hf_families.py reference, the
Hugging Face directory they are saved as (config.json, model.safetensors, a tokenizer),
`ember convert --hf`, and the comparisons of `ember logits --all` and `ember inspect` with
the reference (check, run); tokenizer writers, the real ones included."""
import json
import os

import hf_families as ref
import oracle_util as u

ABS_TOL, REL_TOL = 1e-4, 1e-4  # f32 against the float64 reference: of the logit scale
# q8 (weights and activations int8 per group of 32): as gpt2_oracle.py and
# llama_oracle.py argue, rms error of the logits under 10 % and the same top-1 token at
# 80 % of positions for these small random models.
Q8_REL_RMS, Q8_TOP1 = 1e-1, 0.80


def kinds_of(model, c):
    """Parameters per `ember inspect` kind; Phi-3's fused tensors split by their rows."""
    kinds = {}

    def add(kind, n):
        kinds[kind] = kinds.get(kind, 0) + n

    q, kv = c["num_attention_heads"] * c["head_dim"], c["num_key_value_heads"] * c["head_dim"]
    for name, p in model.named_parameters():
        if "qkv_proj" in name:
            e = p.shape[1]
            add("W_q", q * e), add("W_k", kv * e), add("W_v", kv * e)
            continue
        kind = next(k for fragment, k in (
            ("norm", "norms"), ("q_proj", "W_q"), ("k_proj", "W_k"), ("v_proj", "W_v"),
            ("o_proj", "W_o"), (".mlp.", "ffn"), ("embed_tokens", "embeddings"),
            ("lm_head", "classifier"), ("", "unexpected " + name)) if fragment in name)
        add(kind, p.numel())
    return kinds


def randomize(torch, model, dtype):
    """Random weights (norm weights near their neutral value: 1, or 0 for Gemma's 1 + w),
    rounded to `dtype` as the checkpoint stores them."""
    neutral = 0.0 if model.c["gemma"] else 1.0
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(neutral + torch.randn_like(p) * 0.1)
            else:
                p.copy_(torch.randn_like(p) * (0.5 if "embed" in name else 0.25))
            p.copy_(torch.from_numpy(u.stored_values(p.numpy(), dtype)))


def rounded_copy(torch, model, dtype):
    """The model with what `ember convert --dtype f16|bf16` rounds rounded the same way:
    every 2-D weight (projections, embedding, classifier); norms and biases stay."""
    import copy
    other = copy.deepcopy(model)
    storage = {"f16": "F16", "bf16": "BF16"}[dtype]
    with torch.no_grad():
        for _, p in other.named_parameters():
            if p.dim() == 2:
                p.copy_(torch.from_numpy(u.stored_values(p.numpy(), storage)))
    return other


def save(directory, hf, model, dtype, rename=None, extra=None):
    """config.json and model.safetensors (`rename` maps state_dict names)."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(hf, f, indent=1)
    tensors = {(rename(k) if rename else k): v.numpy() for k, v in model.state_dict().items()}
    if model.tied:
        tensors.pop("lm_head.weight", None)
    tensors.update(extra or {})
    u.write_safetensors(os.path.join(directory, "model.safetensors"), tensors, dtype)


def check(torch, report, ember, name, directory, model, c, tokens, features,
          dtypes=("f16", "bf16", "q8"), extra_kinds=None):
    """Converts `directory`, compares ember's logits with the reference in f32 (1 and 2
    threads), the parameter counts (with `extra_kinds`: kind -> parameters saved beside
    the model's, a vision tower's), the features `ember inspect` names, and each of
    `dtypes`: f16/bf16 against the reference with the same weights rounded, q8 by rms and
    top-1 agreement."""
    path = ember.convert(directory, name)
    kinds = kinds_of(model, c)
    for kind, n in (extra_kinds or {}).items():
        kinds[kind] = kinds.get(kind, 0) + n
    u.check_parameter_counts(report, ember, path, name,
                             sum(p.numel() for p in model.parameters()) +
                             sum((extra_kinds or {}).values()), kinds,
                             c["tie_word_embeddings"])
    text = ember.run("inspect", "-m", path)
    line = next((l for l in text.splitlines() if l.startswith("features")), "features")
    for feature in features:
        report.check(f"{name}: ember inspect names '{feature}'", feature in line, f"({line!r})")
    with torch.no_grad():
        ref = model(torch.tensor([tokens]))[0].numpy()
    for threads in (1, 2):
        logits = ember.logits(path, tokens, threads=threads)
        report.compare(f"{name}: f32 logits at all {len(tokens)} positions, {threads} "
                       f"thread(s)", logits, ref, ABS_TOL * max(1.0, abs(ref).max()), REL_TOL)
    for dtype in dtypes:
        converted = ember.convert(directory, f"{name}_{dtype}", dtype)
        logits = ember.logits(converted, tokens)
        if dtype == "q8":
            report.rms(f"{name} as q8: logits at all {len(tokens)} positions", logits, ref,
                       Q8_REL_RMS)
            report.top1(f"{name} as q8", logits, ref, Q8_TOP1)
            continue
        with torch.no_grad():
            rounded = rounded_copy(torch, model, dtype)(torch.tensor([tokens]))[0].numpy()
        report.compare(f"{name} as {dtype}: logits against the reference with {dtype} "
                       "weights", logits, rounded, ABS_TOL * max(1.0, abs(rounded).max()),
                       REL_TOL)
    return path


def begin(name, doc):
    """The oracle's arguments, (torch, numpy), its Ember runner and its Report."""
    args = u.parse_args(doc)
    torch, np = u.import_torch()
    return args, torch, np, u.Ember(args), u.Report(name)


def sentencepiece_tokenizer(args):
    """A writer of Llama 2's kind of tokenizer (SentencePiece BPE with byte fallback, as
    Gemma's and Phi-3's) into a directory: stories260K's 512 pieces as tokenizer.json."""
    import llama_oracle
    tok512 = u.require_model_file(args, "llama2c/stories260K/tok512.bin")
    return lambda directory: llama_oracle.write_llama_tokenizer(directory, tok512)


# The real tokenizers in ../shared/models/hf-tokenizers (provenance in its README) and the
# embedding rows of the models they come with: Llama 3's 128256, Qwen's 151936 (past its
# 151669 pieces), Gemma 3's 262144 (its <image_soft_token>, 262144, is left out).
REAL_VOCAB = {"llama3": 128256, "qwen3": 151936, "gemma3": 262144}


def real_tokenizer(args, name):
    """A writer of a family's real tokenizer.json and tokenizer_config.json into a
    directory."""
    import shutil
    source = os.path.dirname(u.require_model_file(args, f"hf-tokenizers/{name}/tokenizer.json"))

    def write(directory):
        os.makedirs(directory, exist_ok=True)
        for f in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(source, f), os.path.join(directory, f))
    return write


def real_tokens(torch, ember, args, name, text, n):
    """`ember tokenize --tokenizer --parse-special`'s ids of `text` with the family's real
    tokenizer, then random ids of its embedding up to n tokens."""
    directory = os.path.dirname(u.require_model_file(args, f"hf-tokenizers/{name}/tokenizer.json"))
    ids = [int(t) for t in ember.run("tokenize", "--tokenizer", directory, "-p", text,
                                     "--parse-special").split()]
    return ids + torch.randint(0, REAL_VOCAB[name], (n - len(ids),)).tolist()


def write_byte_level_tokenizer(directory, vocab, specials):
    """A GPT-2-style byte-level tokenizer of `vocab` pieces (vocab.json + merges.txt: the
    256 bytes, letter pairs, <|endoftext|> last) whose ids `specials` are special tokens
    (tokenizer_config.json's added_tokens_decoder), as a model's end-of-turn tokens are."""
    os.makedirs(directory, exist_ok=True)
    u.write_small_byte_level_tokenizer(directory, vocab)
    with open(os.path.join(directory, "vocab.json"), encoding="utf-8") as f:
        pieces = {i: p for p, i in json.load(f).items()}
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"add_bos_token": False, "added_tokens_decoder": {
            str(i): {"content": pieces[i], "special": True} for i in specials}}, f)


def stop_ids(ember, path):
    """The ids `ember inspect` says generation stops at."""
    line = next(l for l in ember.run("inspect", "-m", path).splitlines()
                if l.startswith("tokenizer"))
    return [int(t) for t in line.split("stops at", 1)[1].split()]


def run(args, torch, ember, report, name, hf, dtype, tokens, features, write_tokenizer,
        rename=None, extra=None, dtypes=("f16", "bf16", "q8"), model=None):
    """Builds (or reuses `model`), saves and checks one variant; returns (model, path)."""
    c = ref.resolve(torch, hf)
    if model is None:
        import zlib
        torch.manual_seed(zlib.crc32(name.encode()))  # each variant's own weights
        model = ref.modules(torch)(c).double().eval()
        randomize(torch, model, dtype)
    directory = os.path.join(ember.dir, name)
    save(directory, hf, model, dtype, rename, extra)
    write_tokenizer(directory)
    # A vision tower's tensors saved beside the language model are imported with it.
    tower = sum(v.size for k, v in (extra or {}).items()
                if "vision_tower." in k or "multi_modal_projector." in k)
    path = check(torch, report, ember, name, directory, model, c, tokens, features, dtypes,
                 {"vision": tower} if tower else None)
    return model, path
