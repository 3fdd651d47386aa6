#!/usr/bin/env python3
"""Oracle: the GGUF architectures built on the current families (qwen3, gemma3, phi3 and
llama with Llama 3's RoPE scaling). Each variant's random weights are saved twice, as a
Hugging Face directory and as a GGUF file laid out the way llama.cpp's converter lays
the architecture out (gguf_writer.py, from the format's specification); `ember convert
--gguf` + `ember logits --all` must match hf_families.py's float64 PyTorch reference at
every position in f32, and the `convert --hf` import of the same weights; `ember
inspect` must name each feature, list the end ids GGUF gives and hold the chat template.

Variants (GGUF keys and tensors as llama.cpp writes them):
  qwen3   q/k RMSNorm (attn_q_norm, attn_k_norm), key_length 32 with hidden 64 and 4
          heads (q_dim 128 != d_model), GQA 4/2, RoPE on halves, theta 1e6
  gemma3  6 layers: 5 sliding over 16 of the 40 positions, the 6th global (llama.cpp's
          fixed pattern); norms stored as 1 + w (the converter adds 1); post-attention
          and post-FFN norms; q/k norms; GeGLU; sqrt(72) embedding scale; global layers
          at theta 1e6 with linear scaling 8 (rope.scaling.*), sliding ones at 10000;
          <end_of_turn> stops
  phi3    fused attn_qkv and ffn_up (gate rows, then up), RoPE on 8 of 16 values of a
          head, every layer sliding over 24, LongRoPE (rope_factors_short/_long tensors,
          original context 32 of 256, rope.scaling.attn_factor) with 40 positions
  llama3  Llama 3.1's scaling as the rope_freqs tensor (factor 8, low 1, high 4,
          original 32) with Q and K rows permuted for interleaved RoPE, untied
          classifier, eos, eot and eom ids
"""
import math
import os
import zlib

import family_oracle as fam
import gguf_writer as gw
import hf_families as ref

VOCAB = 512
TEMPLATE = "{% for m in messages %}{{ m.content }}{% endfor %}"


def spm_vocabulary(ends):
    """A SentencePiece vocabulary of VOCAB pieces as tokenizer.ggml.* holds it: <unk>,
    <s>, </s>, the 256 byte pieces, `ends` as control tokens, then words."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + list(ends)
    types = [2, 3, 3] + [6] * 256 + [3] * len(ends)
    while len(tokens) < VOCAB:
        tokens.append("\u2581w" + str(len(tokens)))
        types.append(1)
    return [("tokenizer.ggml.model", gw.STRING, "llama"),
            ("tokenizer.ggml.tokens", gw.ARRAY, (gw.STRING, tokens)),
            ("tokenizer.ggml.scores", gw.ARRAY, (gw.FLOAT32, [-float(i) for i in range(VOCAB)])),
            ("tokenizer.ggml.token_type", gw.ARRAY, (gw.INT32, types)),
            ("tokenizer.ggml.bos_token_id", gw.UINT32, 1),
            ("tokenizer.ggml.eos_token_id", gw.UINT32, 2),
            ("tokenizer.ggml.unknown_token_id", gw.UINT32, 0),
            ("tokenizer.chat_template", gw.STRING, TEMPLATE)], tokens


def interleave_rows(w, heads):
    """llama.cpp's permutation of Llama's Q/K rows: within each head, rotate_half's
    pairs (j, j + hd/2) become adjacent rows (2j, 2j + 1)."""
    rows, cols = w.shape
    hd = rows // heads
    return w.reshape(heads, 2, hd // 2, cols).swapaxes(1, 2).reshape(rows, cols)


def gguf_tensors(model, c, arch):
    """The state dict under GGUF's names, transformed as llama.cpp's converter does."""
    names = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q",
             "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.o_proj": "attn_output", "self_attn.qkv_proj": "attn_qkv",
             "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
             "post_attention_layernorm": "post_attention_norm" if c["gemma"] else "ffn_norm",
             "pre_feedforward_layernorm": "ffn_norm",
             "post_feedforward_layernorm": "post_ffw_norm", "mlp.gate_proj": "ffn_gate",
             "mlp.up_proj": "ffn_up", "mlp.gate_up_proj": "ffn_up",
             "mlp.down_proj": "ffn_down"}
    out = []
    for name, p in model.state_dict().items():
        w = p.numpy().astype("float32")
        if name == "model.embed_tokens.weight":
            gguf = "token_embd.weight"
        elif name == "model.norm.weight":
            gguf = "output_norm.weight"
        elif name == "lm_head.weight":
            if model.tied:
                continue
            gguf = "output.weight"
        else:
            _, _, layer, rest = name.split(".", 3)
            module, kind = rest.rsplit(".", 1)
            gguf = f"blk.{layer}.{names[module]}.{kind}"
            if arch == "llama" and module in ("self_attn.q_proj", "self_attn.k_proj"):
                heads = c["num_attention_heads" if "q_proj" in module else "num_key_value_heads"]
                w = interleave_rows(w, heads)
        if c["gemma"] and "norm" in gguf:
            w = w + 1  # Gemma's x / rms * (1 + w), stored as 1 + w
        out.append((gguf, w))
    return out


def gguf_metadata(arch, c, extra):
    """{arch}.* keys as llama.cpp's converter writes them."""
    u = lambda key, v: (f"{arch}.{key}", gw.UINT32, int(v))
    f = lambda key, v: (f"{arch}.{key}", gw.FLOAT32, float(v))
    keys = [("general.architecture", gw.STRING, arch),
            u("context_length", c["max_position_embeddings"]),
            u("embedding_length", c["hidden_size"]), u("block_count", c["num_hidden_layers"]),
            u("feed_forward_length", c["intermediate_size"]),
            u("attention.head_count", c["num_attention_heads"]),
            u("attention.head_count_kv", c["num_key_value_heads"]),
            u("attention.key_length", c["head_dim"]), u("attention.value_length", c["head_dim"]),
            u("rope.dimension_count", c["rotary_dim"]),
            f("attention.layer_norm_rms_epsilon", c["rms_norm_eps"]),
            f("rope.freq_base", c["rope_theta"])]
    if c.get("sliding_window"):
        keys.append(u("attention.sliding_window", c["sliding_window"]))
    return keys + [(f"{arch}.{k}", kind, v) for k, kind, v in extra]


def llama3_rope_freqs(c):
    """The divisors llama.cpp's converter stores as rope_freqs for Llama 3.1's scaling
    (Meta's definition: wavelengths past original / low scaled by factor, those under
    original / high kept, a smooth ramp between)."""
    s = c["rope_scaling"]
    factor, low, high = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
    old = s["original_max_position_embeddings"]
    out = []
    for i in range(0, c["rotary_dim"], 2):
        wavelen = 2 * math.pi * c["rope_theta"] ** (i / c["rotary_dim"])
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return out


def variant(ctx, name, hf, arch, tokens, features, ends=(), extra_keys=(),
            extra_tensors=()):
    args, torch, ember, report = ctx
    c = ref.resolve(torch, hf)
    torch.manual_seed(zlib.crc32(name.encode()))
    model = ref.modules(torch)(c).double().eval()
    fam.randomize(torch, model, "F32")
    directory = os.path.join(ember.dir, name)
    fam.save(directory, hf, model, "F32")
    fam.sentencepiece_tokenizer(args)(directory)
    hf_path = ember.convert(directory, name)

    vocabulary, pieces = spm_vocabulary(ends)
    gguf = os.path.join(ember.dir, name + ".gguf")
    gw.write(gguf, gguf_metadata(arch, c, extra_keys) + vocabulary,
             gguf_tensors(model, c, arch) + list(extra_tensors))
    path = ember.path(name + "_gguf.ember")
    ember.run("convert", "--gguf", gguf, "-o", path)

    with torch.no_grad():
        expected = model(torch.tensor([tokens]))[0].numpy()
    got = ember.logits(path, tokens)
    tol = fam.ABS_TOL * max(1.0, abs(expected).max())
    report.compare(f"{name}: --gguf f32 logits at all {len(tokens)} positions against the "
                   "float64 reference", got, expected, tol, fam.REL_TOL)
    report.compare(f"{name}: --gguf logits against --hf's of the same weights", got,
                   ember.logits(hf_path, tokens), tol, fam.REL_TOL)
    text = ember.run("inspect", "-m", path)
    line = next((l for l in text.splitlines() if l.startswith("features")), "features")
    for feature in features:
        report.check(f"{name}: ember inspect names '{feature}'", feature in line, f"({line!r})")
    report.check(f"{name}: the chat template is kept",
                 f"a template of {len(TEMPLATE)} bytes" in text)
    want = sorted([2] + [pieces.index(e) for e in ends])
    got_ends = fam.stop_ids(ember, path)
    report.check(f"{name}: generation stops at {want}", sorted(got_ends) == want,
                 f"({got_ends})")


def main():
    args, torch, np, ember, report = fam.begin("gguf", __doc__)
    ctx = (args, torch, ember, report)
    tokens = [1] + torch.randint(3, VOCAB, (39,)).tolist()
    base = {"vocab_size": VOCAB, "hidden_size": 64, "intermediate_size": 96,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "hidden_act": "silu",
            "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float32"}

    qwen3 = dict(base, model_type="qwen3", architectures=["Qwen3ForCausalLM"], head_dim=32,
                 rope_theta=1000000.0, tie_word_embeddings=True, attention_bias=False)
    variant(ctx, "qwen3", qwen3, "qwen3", tokens, ["qk-norm"], ends=["<|im_end|>"])

    gemma3 = dict(base, model_type="gemma3_text", architectures=["Gemma3ForCausalLM"],
                  hidden_size=72, num_hidden_layers=6, head_dim=32,
                  hidden_act=None, hidden_activation="gelu_pytorch_tanh",
                  query_pre_attn_scalar=32,
                  sliding_window=16, rope_theta=1000000.0, rope_local_base_freq=10000.0,
                  rope_scaling={"rope_type": "linear", "factor": 8.0},
                  attn_logit_softcapping=None, final_logit_softcapping=None)
    variant(ctx, "gemma3", gemma3, "gemma3", tokens,
            ["rope scaling linear (factor 8)", "sliding window 16 on 5 of 6 layers SSSSSG",
             "sliding layers' rope theta 10000", "qk-norm", "post-norms",
             "embedding scale 8.48528"], ends=["<end_of_turn>"],
            extra_keys=[("rope.scaling.type", gw.STRING, "linear"),
                        ("rope.scaling.factor", gw.FLOAT32, 8.0)])

    pairs = 4
    short = (1.0 + 0.5 * torch.rand(pairs, dtype=torch.float64)).tolist()
    long = (2.0 + 10.0 * torch.rand(pairs, dtype=torch.float64)).tolist()
    phi3 = dict(base, model_type="phi3", architectures=["Phi3ForCausalLM"],
                rms_norm_eps=1e-5, rope_theta=10000.0, partial_rotary_factor=0.5,
                sliding_window=24, original_max_position_embeddings=32,
                rope_scaling={"type": "longrope", "short_factor": short,
                              "long_factor": long}, tie_word_embeddings=False)
    attn_factor = math.sqrt(1 + math.log(256 / 32) / math.log(32))
    variant(ctx, "phi3", phi3, "phi3", tokens,
            ["sliding window 24 on 2 of 2 layers SS", "rope on 8 of 16 dimensions",
             "rope scaling longrope (factor 8, original context 32"], ends=["<|end|>"],
            extra_keys=[("rope.scaling.original_context_length", gw.UINT32, 32),
                        ("rope.scaling.attn_factor", gw.FLOAT32, attn_factor)],
            extra_tensors=[("rope_factors_short.weight", np.array(short, np.float32)),
                           ("rope_factors_long.weight", np.array(long, np.float32))])

    llama3 = dict(base, model_type="llama", architectures=["LlamaForCausalLM"], head_dim=16,
                  rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=False,
                  rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0,
                                "original_max_position_embeddings": 32})
    c = ref.resolve(torch, llama3)
    variant(ctx, "llama3", llama3, "llama", tokens, ["rope frequency factors (8"],
            ends=["<|eom_id|>", "<|eot_id|>"], extra_tensors=[
                ("rope_freqs.weight", np.array(llama3_rope_freqs(c), np.float32))])
    report.finish(ember)


if __name__ == "__main__":
    main()
