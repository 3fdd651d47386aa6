#!/usr/bin/env python3
"""Oracle: the classic transformer encoder built from PyTorch's own modules,
nn.Embedding + nn.TransformerEncoder + nn.Linear head, bidirectional, random weights
exported to safetensors (ember's tensor names, model_type "ember"), converted with
`ember convert --hf`; `ember logits --all` must match the module's logits at every
position.

Variants:
  post-LN ReLU (the 2017 block: x = LN(x + SelfAttn(x)); x = LN(x + FFN(x))), no
      positions, no final norm, stored F32 (exactly the block the seed material teaches);
  pre-LN GELU (erf) with learned positions and a final LayerNorm, stored F16 (the
      reference uses the same f16-rounded weights).
"""
import json
import os

import oracle_util as u

ABS_TOL, REL_TOL = 1e-4, 1e-5  # f32 against the float64 oracle


def build(torch, vocab, d, heads, ffn, layers, context, norm_first, activation):
    nn = torch.nn
    layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=ffn, dropout=0.0,
                                       activation=activation, batch_first=True,
                                       norm_first=norm_first, layer_norm_eps=1e-5)
    model = nn.ModuleDict({
        "embedding": nn.Embedding(vocab, d),
        "encoder": nn.TransformerEncoder(layer, layers,
                                         norm=nn.LayerNorm(d) if norm_first else None,
                                         enable_nested_tensor=False),
        "head": nn.Linear(d, vocab),
    })
    if norm_first:
        model["positions"] = nn.Embedding(context, d)
    with torch.no_grad():
        for name, p in model.named_parameters():
            scale = 0.1 if "norm" in name else 0.3
            base = 1.0 if "norm" in name and name.endswith("weight") else 0.0
            p.copy_(base + torch.randn_like(p) * scale)
    return model.double().eval()


def forward(torch, model, tokens):
    x = model["embedding"](tokens)
    if "positions" in model:
        x = x + model["positions"](torch.arange(tokens.shape[1]))[None]
    return model["head"](model["encoder"](x))


def export(model, np, dtype):
    """Maps the modules' tensors to ember's names (runtime/model/tensor_names.h)."""
    sd = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    out = {"token_embd.weight": sd["embedding.weight"], "output.weight": sd["head.weight"],
           "output.bias": sd["head.bias"]}
    if "positions.weight" in sd:
        out["position_embd.weight"] = sd["positions.weight"]
    if "encoder.norm.weight" in sd:
        out["output_norm.weight"] = sd["encoder.norm.weight"]
        out["output_norm.bias"] = sd["encoder.norm.bias"]
    i = 0
    while f"encoder.layers.{i}.linear1.weight" in sd:
        p, b = f"encoder.layers.{i}.", f"blk.{i}."
        w, bias = sd[p + "self_attn.in_proj_weight"], sd[p + "self_attn.in_proj_bias"]
        d = w.shape[1]
        for j, part in enumerate("qkv"):
            out[b + f"attn_{part}.weight"] = w[j * d:(j + 1) * d]
            out[b + f"attn_{part}.bias"] = bias[j * d:(j + 1) * d]
        for ember, torch_name in (("attn_output", "self_attn.out_proj"), ("ffn_up", "linear1"),
                                  ("ffn_down", "linear2"), ("attn_norm", "norm1"),
                                  ("ffn_norm", "norm2")):
            out[b + ember + ".weight"] = sd[p + torch_name + ".weight"]
            out[b + ember + ".bias"] = sd[p + torch_name + ".bias"]
        i += 1
    return {k: u.stored_values(v, dtype) for k, v in out.items()}


def main():
    args = u.parse_args(__doc__)
    torch, np = u.import_torch()
    ember = u.Ember(args)
    report = u.Report("encoder")
    V, D, H, F, L, T = 300, 64, 4, 96, 3, 24
    for name, norm_first, activation, dtype in (("post-LN ReLU", False, "relu", "F32"),
                                                ("pre-LN GELU", True, "gelu", "F16")):
        model = build(torch, V, D, H, F, L, T, norm_first, activation)
        tensors = export(model, np, dtype)
        with torch.no_grad():  # the reference computes with the stored (rounded) weights
            sd = model.state_dict()
            for k in sd:
                sd[k].copy_(torch.from_numpy(u.stored_values(sd[k].numpy(), dtype)))
        d = os.path.join(ember.dir, "encoder_" + dtype)
        os.makedirs(d)
        u.write_safetensors(os.path.join(d, "model.safetensors"), tensors, dtype)
        eot = u.write_small_byte_level_tokenizer(d, V)
        config = {
            "model_type": "ember", "architecture": "encoder", "d_model": D, "n_layers": L,
            "n_heads": H, "ffn_dim": F, "vocab_size": V, "max_context": T,
            "norm": "layernorm", "norm_placement": "pre" if norm_first else "post",
            "norm_eps": 1e-5, "final_norm": norm_first, "ffn": "plain",
            "activation": "gelu_erf" if activation == "gelu" else "relu",
            "positions": "learned" if norm_first else "none", "mask": "bidirectional",
            "qkv_bias": True, "out_bias": True, "ffn_bias": True, "tied_classifier": False,
            "output_bias": True, "eos_token_id": eot,
        }
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f)
        model_path = ember.convert(d, "encoder_" + dtype)
        tokens = torch.randint(0, V, (1, T))
        with torch.no_grad():
            ref = forward(torch, model, tokens)[0].numpy()
        for threads in (1, 2):
            logits = ember.logits(model_path, tokens[0].tolist(), threads=threads)
            report.compare(f"{name} ({dtype} weights), all {T} positions, {threads} "
                           f"thread(s)", logits, ref, ABS_TOL, REL_TOL)
    report.finish(ember)


if __name__ == "__main__":
    main()
