"""Float64 PyTorch references of the Hugging Face decoder families `ember convert --hf`
reads, written here after transformers' published modeling code (modeling_llama,
modeling_mistral, modeling_qwen2, modeling_qwen3, modeling_gemma2, modeling_gemma3,
modeling_phi3 and modeling_rope_utils), with their module and parameter names, so that
state_dict() holds a checkpoint's tensor names. transformers itself is not used.

What each family adds to Llama (RMSNorm, rotate_half RoPE, SwiGLU, grouped-query
attention):
  llama    rope_scaling linear / llama3 / yarn; attention_bias (q, k, v, o), mlp_bias
  mistral  sliding_window: every layer attends to the last `sliding_window` positions
  qwen2    q, k, v biases (never o); use_sliding_window from max_window_layers on
  qwen3    per-head RMSNorm of q and k before RoPE (q_norm, k_norm); head_dim
  gemma2   RMSNorm x / rms * (1 + w); embeddings times sqrt(hidden_size) rounded to the
           model's dtype; norms before and after attention and MLP; GeGLU with tanh GELU;
           scores scaled by query_pre_attn_scalar ** -0.5; attention and final logit
           soft-capping; sliding layers every other layer
  gemma3   gemma2's, with q_norm/k_norm, layer_types, and sliding layers rotating with
           rope_local_base_freq (plain RoPE) while global ones use rope_theta and scaling
  phi3     fused qkv_proj (rows q, k, v) and gate_up_proj (rows gate, up); sliding_window
           on every layer

The oracle scripts (llama3_oracle.py, qwen_oracle.py, gemma_oracle.py, phi3_oracle.py)
build random models of these, save them as Hugging Face directories and compare `ember
logits --all` with forward() here (family_oracle.py).
"""
import math

def rope_inv_freq(torch, rope, dim, max_positions, original=None, seq_len=0):
    """(inv_freq, attention_scaling) of one RoPE parameters dict (rope_theta, rope_type
    and its parameters) over `dim` rotated values, after modeling_rope_utils (YaRN with
    the explicit factor; LongRoPE's factors chosen by the forward call's `seq_len`
    against the config's top-level original_max_position_embeddings `original`)."""
    base = rope["rope_theta"]
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind == "default":
        return inv_freq, 1.0
    if kind == "longrope":
        factor = max_positions / original if original else rope.get("factor", 1.0)
        original = original or max_positions
        attention = rope.get("attention_factor")
        if attention is None:
            attention = 1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) /
                                                          math.log(original))
        ext = rope["long_factor"] if seq_len > original else rope["short_factor"]
        return inv_freq / torch.tensor(ext, dtype=torch.float64), attention
    factor = rope["factor"]
    if kind == "linear":
        return inv_freq / factor, 1.0
    if kind == "llama3":
        low, high = rope["low_freq_factor"], rope["high_freq_factor"]
        old_context = rope["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old_context / low, old_context / high
        wavelen = 2 * math.pi / inv_freq
        llama = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_context / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * llama / factor + smooth * llama
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        return torch.where(medium, smoothed, llama), 1.0
    if kind == "yarn":
        original = rope.get("original_max_position_embeddings", max_positions)
        attention = rope.get("attention_factor")
        if attention is None:
            attention = 1.0 if factor <= 1 else 0.1 * math.log(factor) + 1.0
        beta_fast, beta_slow = rope.get("beta_fast") or 32, rope.get("beta_slow") or 1

        def correction_dim(rotations):
            return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

        low, high = correction_dim(beta_fast), correction_dim(beta_slow)
        if rope.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
        extrapolation = 1 - ramp
        pos_freqs = base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
        inv = (1.0 / (factor * pos_freqs)) * (1 - extrapolation) + (1.0 / pos_freqs) * extrapolation
        return inv, attention
    raise ValueError(kind)


def modules(torch):
    nn = torch.nn

    class RMSNorm(nn.Module):  # LlamaRMSNorm: w * x / rms
        def __init__(self, d, eps):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))
            self.eps = eps

        def forward(self, x):
            return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    class GemmaRMSNorm(nn.Module):  # Gemma2RMSNorm / Gemma3RMSNorm: x / rms * (1 + w)
        def __init__(self, d, eps):
            super().__init__()
            self.weight = nn.Parameter(torch.zeros(d))
            self.eps = eps

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * (1.0 + self.weight)

    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    def repeat_kv(x, n_rep):
        b, kv, t, hd = x.shape
        return x[:, :, None].expand(b, kv, n_rep, t, hd).reshape(b, kv * n_rep, t, hd)

    def gelu_tanh(x):  # gelu_pytorch_tanh
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))

    def act_fn(name):
        return {"silu": nn.functional.silu, "gelu_pytorch_tanh": gelu_tanh}[name]

    class Attention(nn.Module):
        """LlamaAttention and its relatives; Phi3Attention when c["fused"]."""

        def __init__(self, c, layer):
            super().__init__()
            e, self.heads = c["hidden_size"], c["num_attention_heads"]
            self.kv = c["num_key_value_heads"]
            self.hd = c["head_dim"]
            self.fused = c["fused"]
            q, kv = self.heads * self.hd, self.kv * self.hd
            if self.fused:
                self.qkv_proj = nn.Linear(e, q + 2 * kv, bias=False)
            else:
                self.q_proj = nn.Linear(e, q, bias=c["qkv_bias"])
                self.k_proj = nn.Linear(e, kv, bias=c["qkv_bias"])
                self.v_proj = nn.Linear(e, kv, bias=c["qkv_bias"])
            self.o_proj = nn.Linear(q, e, bias=c["o_bias"])
            if c["qk_norm"]:
                norm = GemmaRMSNorm if c["gemma"] else RMSNorm
                self.q_norm = norm(self.hd, c["rms_norm_eps"])
                self.k_norm = norm(self.hd, c["rms_norm_eps"])
            self.qk_norm = c["qk_norm"]
            self.scaling = c.get("query_pre_attn_scalar", self.hd) ** -0.5
            self.softcap = c.get("attn_logit_softcapping")
            sliding = c["layer_types"][layer] == "sliding_attention"
            self.window = c["sliding_window"] if sliding else None
            self.bidirectional = c.get("use_bidirectional_attention", False)

        def forward(self, x, cos, sin):
            b, t, _ = x.shape
            if self.fused:
                qkv = self.qkv_proj(x)
                qd, kvd = self.heads * self.hd, self.kv * self.hd
                q, k, v = qkv[..., :qd], qkv[..., qd:qd + kvd], qkv[..., qd + kvd:]
            else:
                q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
            q = q.view(b, t, -1, self.hd).transpose(1, 2)
            k = k.view(b, t, -1, self.hd).transpose(1, 2)
            v = v.view(b, t, -1, self.hd).transpose(1, 2)
            if self.qk_norm:
                q, k = self.q_norm(q), self.k_norm(k)
            r = cos.shape[-1]  # Phi-3's partial rotary: the first r values of each head
            q = torch.cat((q[..., :r] * cos + rotate_half(q[..., :r]) * sin, q[..., r:]), -1)
            k = torch.cat((k[..., :r] * cos + rotate_half(k[..., :r]) * sin, k[..., r:]), -1)
            k, v = repeat_kv(k, self.heads // self.kv), repeat_kv(v, self.heads // self.kv)
            w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
            if self.softcap is not None:
                w = torch.tanh(w / self.softcap) * self.softcap
            query, key = torch.arange(t)[:, None], torch.arange(t)[None, :]
            if self.bidirectional:  # EmbeddingGemma: every key, or a symmetric window
                # (Gemma3TextConfig's sliding_window // 2 + 1, an exclusive bound)
                visible = torch.ones(t, t, dtype=torch.bool)
                if self.window is not None:
                    visible = (key - query).abs() < self.window // 2 + 1
            else:
                visible = key <= query
            if self.window is not None and not self.bidirectional:
                # transformers: kv_idx > q_idx - sliding_window
                visible = visible & (key > query - self.window)
            groups = getattr(self, "image_groups", None)
            if groups is not None:  # Gemma 3's token_type_ids_mask_function, or'd in
                visible = visible | ((groups[:, None] == groups[None, :]) &
                                     (groups[:, None] >= 0))
            w = w.masked_fill(~visible, float("-inf"))
            a = torch.matmul(nn.functional.softmax(w, dim=-1), v)
            return self.o_proj(a.transpose(1, 2).reshape(b, t, -1))

    class MLP(nn.Module):
        """LlamaMLP (gate, up, down) and Phi3MLP (gate_up_proj: rows gate, then up)."""

        def __init__(self, c):
            super().__init__()
            e, f, bias = c["hidden_size"], c["intermediate_size"], c.get("mlp_bias", False)
            self.fused = c["fused"]
            if self.fused:
                self.gate_up_proj = nn.Linear(e, 2 * f, bias=False)
            else:
                self.gate_proj = nn.Linear(e, f, bias=bias)
                self.up_proj = nn.Linear(e, f, bias=bias)
            self.down_proj = nn.Linear(f, e, bias=bias)
            self.act = act_fn(c["hidden_act"])

        def forward(self, x):
            if self.fused:
                gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
            else:
                gate, up = self.gate_proj(x), self.up_proj(x)
            return self.down_proj(self.act(gate) * up)

    class DecoderLayer(nn.Module):
        """Llama's pre-norm layer, or Gemma's with norms after attention and MLP too."""

        def __init__(self, c, layer):
            super().__init__()
            e, eps, self.gemma = c["hidden_size"], c["rms_norm_eps"], c["gemma"]
            norm = GemmaRMSNorm if self.gemma else RMSNorm
            self.input_layernorm = norm(e, eps)
            self.self_attn = Attention(c, layer)
            self.post_attention_layernorm = norm(e, eps)
            if self.gemma:
                self.pre_feedforward_layernorm = norm(e, eps)
                self.post_feedforward_layernorm = norm(e, eps)
            self.mlp = MLP(c)
            self.sliding = c["layer_types"][layer] == "sliding_attention"

        def forward(self, x, rope):
            cos, sin = rope["sliding_attention" if self.sliding else "full_attention"]
            if self.gemma:
                h = self.self_attn(self.input_layernorm(x), cos, sin)
                x = x + self.post_attention_layernorm(h)
                h = self.mlp(self.pre_feedforward_layernorm(x))
                return x + self.post_feedforward_layernorm(h)
            x = x + self.self_attn(self.input_layernorm(x), cos, sin)
            return x + self.mlp(self.post_attention_layernorm(x))

    class ForCausalLM(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c = c
            norm = GemmaRMSNorm if c["gemma"] else RMSNorm
            self.model = nn.ModuleDict({
                "embed_tokens": nn.Embedding(c["vocab_size"], c["hidden_size"]),
                "layers": nn.ModuleList(DecoderLayer(c, i) for i in range(c["num_hidden_layers"])),
                "norm": norm(c["hidden_size"], c["rms_norm_eps"]),
            })
            self.tied = c["tie_word_embeddings"]
            if not self.tied:
                self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)

        def forward(self, tokens, image_token=None, image_rows=None, image_blocks=True):
            x = self.hidden(tokens, image_token, image_rows, image_blocks)
            w = self.model["embed_tokens"].weight if self.tied else self.lm_head.weight
            logits = x @ w.T
            if self.c.get("final_logit_softcapping") is not None:
                cap = self.c["final_logit_softcapping"]
                logits = torch.tanh(logits / cap) * cap
            return logits

        def hidden(self, tokens, image_token=None, image_rows=None, image_blocks=True):
            """The final hidden states (after the final norm). With `image_rows`: as
            Gemma3Model, each `image_token` takes the next row in place of its (scaled)
            embedding (masked_scatter), and each run of them attends to itself both
            ways (unless not `image_blocks`)."""
            c, t = self.c, tokens.shape[1]
            groups = None
            if image_rows is not None:
                is_image = tokens[0] == image_token
                starts = is_image & ~torch.cat((torch.tensor([False]), is_image[:-1]))
                if image_blocks:
                    groups = torch.where(is_image, torch.cumsum(starts.long(), 0) - 1, -1)
                tokens = torch.where(tokens == image_token, 0, tokens)
            for layer in self.model["layers"]:
                layer.self_attn.image_groups = groups
            rope = {}
            for kind, params in c["rope"].items():
                inv_freq, scaling = rope_inv_freq(
                    torch, params, c["rotary_dim"], c["max_position_embeddings"],
                    c.get("original_max_position_embeddings"), t)
                freqs = torch.outer(torch.arange(t, dtype=torch.float64), inv_freq)
                emb = torch.cat((freqs, freqs), dim=-1)
                rope[kind] = (emb.cos()[None, None] * scaling, emb.sin()[None, None] * scaling)
            x = self.model["embed_tokens"](tokens)
            if c["gemma"]:  # sqrt(hidden_size) as a float32 tensor, cast to the model dtype
                normalizer = torch.tensor(c["hidden_size"] ** 0.5, dtype=torch.float32)
                normalizer = normalizer.to(c["model_dtype"]).to(torch.float64)
                x = x * normalizer
            if image_rows is not None:
                x = x.clone()
                x[0, is_image] = image_rows.to(x.dtype)
            for layer in self.model["layers"]:
                x = layer(x, rope)
            return self.model["norm"](x)

    return ForCausalLM


def resolve(torch, hf):
    """The reference's view of an HF config.json dict: each family's class defaults for
    what the dict leaves out, which layers slide, and the RoPE of each layer kind."""
    t = hf["model_type"] if hf["model_type"] != "gemma3" else "gemma3_text"
    c = dict(hf["text_config"]) if hf["model_type"] == "gemma3" else dict(hf)
    gemma = t in ("gemma2", "gemma3_text")
    heads = c["num_attention_heads"]
    defaults = {
        "num_key_value_heads": 8 if t == "mistral" else 4 if gemma else heads,
        "head_dim": 256 if gemma else 128 if t == "qwen3" else c["hidden_size"] // heads,
        "rms_norm_eps": 1e-5 if t == "phi3" else 1e-6,
        "rope_theta": 1e6 if t == "gemma3_text" else 1e4,
        "tie_word_embeddings": gemma,
        "hidden_act": c.get("hidden_activation", "gelu_pytorch_tanh") if gemma else "silu",
    }
    for key, value in defaults.items():
        if c.get(key) is None:
            c[key] = value
    c["gemma"], c["fused"] = gemma, t == "phi3"
    c["qk_norm"] = t in ("qwen3", "gemma3_text")
    c["qkv_bias"] = t == "qwen2" or c.get("attention_bias", False)
    c["o_bias"] = t != "qwen2" and c.get("attention_bias", False)
    if t == "gemma2":
        c.setdefault("attn_logit_softcapping", 50.0)
        c.setdefault("final_logit_softcapping", 30.0)
    n = c["num_hidden_layers"]
    if c.get("layer_types") is None:
        if gemma:
            pattern = c.get("sliding_window_pattern", 6 if t == "gemma3_text" else 2)
            c["layer_types"] = ["sliding_attention" if (i + 1) % pattern else "full_attention"
                                for i in range(n)]
        elif t in ("qwen2", "qwen3"):
            use = c.get("use_sliding_window", False)
            c["layer_types"] = ["sliding_attention" if use and i >= c.get("max_window_layers", 28)
                                else "full_attention" for i in range(n)]
        else:  # Mistral and Phi-3: every layer, when there is a window
            window = c.get("sliding_window", 4096 if t == "mistral" else None)
            c["layer_types"] = ["sliding_attention" if window else "full_attention"] * n
    if t in ("qwen2", "qwen3") and not c.get("use_sliding_window", False):
        c["sliding_window"] = None
    if "sliding_window" not in c:
        c["sliding_window"] = 4096 if t in ("mistral", "gemma2", "gemma3_text") else None
    if c["sliding_window"] is None:
        c["layer_types"] = ["full_attention"] * n
    c["rotary_dim"] = int(c["head_dim"] * c.get("partial_rotary_factor", 1.0))
    scaling = dict(c.get("rope_scaling") or {"rope_type": "default"})
    if t == "phi3" and scaling.get("type") in ("su", "yarn"):  # Phi3Config's older names
        scaling["type"] = "longrope"
    full = dict(scaling, rope_theta=c["rope_theta"])
    local = full
    if t == "gemma3_text":
        local = {"rope_type": "default", "rope_theta": c.get("rope_local_base_freq", 1e4)}
    c["rope"] = {"full_attention": full, "sliding_attention": local}
    dtype = c.get("torch_dtype", hf.get("torch_dtype", "float32"))
    c["model_dtype"] = {"float32": torch.float32, "bfloat16": torch.bfloat16,
                        "float16": torch.float16}[dtype]
    return c
