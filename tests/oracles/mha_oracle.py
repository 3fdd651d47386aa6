#!/usr/bin/env python3
"""Oracle: torch.nn.MultiheadAttention against ember's attention, with and without a
causal mask: the attention output and every head's attention weights.

ember computes attention only inside a forward pass, so the test builds a one-layer
model that exposes it: the token embedding holds the input rows x (token t -> x[t]), no
positions, pre-LN with a unit LayerNorm, Q/K/V/output projections from the
MultiheadAttention module, a zero feed-forward block, no final norm, and an identity
classifier (its first d_model logits are the residual stream). So ember's logits are
x + MHA(LN(x)) and its attention weights must equal the module's per-head weights
(need_weights=True, average_attn_weights=False) for the query LN(x), as the forward pass
records them (runtime/attention_record.h) into caller memory (`ember logits --attn`) and
into the arena (`ember attn`: every head as .npy, one head as .npy, one head as CSV rows).
"""
import json
import os

import oracle_util as u

# f32 tolerances (ember) against the float64 oracle: see the printed measurements.
OUT_ABS, OUT_REL = 2e-5, 1e-5
PROB_ABS, PROB_REL = 5e-6, 5e-6


def main():
    args = u.parse_args(__doc__)
    torch, np = u.import_torch()
    ember = u.Ember(args)
    report = u.Report("mha")
    E, H, T, V = 48, 6, 13, 300

    for causal in (False, True):
        name = "causal" if causal else "bidirectional"
        mha = torch.nn.MultiheadAttention(E, H, bias=True, batch_first=True).double()
        with torch.no_grad():
            for p in mha.parameters():  # non-zero biases too
                p.copy_(torch.randn_like(p) * 0.3)
        mha.eval()
        x = torch.randn(1, T, E, dtype=torch.float64)
        x = torch.from_numpy(x.numpy().astype(np.float32).astype(np.float64))
        h = torch.nn.functional.layer_norm(x, (E,), eps=1e-5)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1) if causal else None
        with torch.no_grad():
            out, weights = mha(h, h, h, need_weights=True, attn_mask=mask,
                               average_attn_weights=False)

        d = os.path.join(ember.dir, "mha_" + name)
        os.makedirs(d)
        w_in = mha.in_proj_weight.detach().numpy()
        b_in = mha.in_proj_bias.detach().numpy()
        embedding = np.zeros((V, E), np.float32)
        embedding[:T] = x[0].numpy()
        classifier = np.zeros((V, E), np.float32)
        classifier[:E] = np.eye(E)
        tensors = {
            "token_embd.weight": embedding,
            "blk.0.attn_norm.weight": np.ones(E), "blk.0.attn_norm.bias": np.zeros(E),
            "blk.0.attn_q.weight": w_in[:E], "blk.0.attn_k.weight": w_in[E:2 * E],
            "blk.0.attn_v.weight": w_in[2 * E:],
            "blk.0.attn_q.bias": b_in[:E], "blk.0.attn_k.bias": b_in[E:2 * E],
            "blk.0.attn_v.bias": b_in[2 * E:],
            "blk.0.attn_output.weight": mha.out_proj.weight.detach().numpy(),
            "blk.0.attn_output.bias": mha.out_proj.bias.detach().numpy(),
            "blk.0.ffn_norm.weight": np.ones(E), "blk.0.ffn_norm.bias": np.zeros(E),
            "blk.0.ffn_up.weight": np.zeros((1, E)), "blk.0.ffn_down.weight": np.zeros((E, 1)),
            "output.weight": classifier,
        }
        u.write_safetensors(os.path.join(d, "model.safetensors"), tensors)
        eot = u.write_small_byte_level_tokenizer(d, V)
        config = {
            "model_type": "ember", "architecture": "mha-probe", "d_model": E, "n_layers": 1,
            "n_heads": H, "ffn_dim": 1, "vocab_size": V, "max_context": T,
            "norm": "layernorm", "norm_placement": "pre", "norm_eps": 1e-5,
            "final_norm": False, "ffn": "plain", "activation": "relu", "positions": "none",
            "mask": "causal" if causal else "bidirectional", "qkv_bias": True,
            "out_bias": True, "tied_classifier": False, "eos_token_id": eot,
        }
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f)
        model = ember.convert(d, "mha_" + name)
        for threads in (1, 2):
            logits, probs = ember.logits(model, list(range(T)), attn=True, threads=threads)
            attention_out = logits[:, :E].astype(np.float64) - x[0].numpy()
            report.compare(f"{name} output, {threads} thread(s)", attention_out,
                           out[0].numpy(), OUT_ABS, OUT_REL)
            report.compare(f"{name} per-head weights, {threads} thread(s)", probs[0],
                           weights[0].numpy(), PROB_ABS, PROB_REL)
        ref = weights[0].numpy()  # (heads, query, key)
        tokens = list(range(T))
        report.compare(f"{name} ember attn --format npy, all heads",
                       ember.attn(model, tokens)[0], ref, PROB_ABS, PROB_REL)
        report.compare(f"{name} ember attn --format npy --head 4",
                       ember.attn(model, tokens, head="4")[0, 0], ref[4], PROB_ABS, PROB_REL)
        rows = ember.attn(model, tokens, layer="0", head="2", fmt="csv")
        pairs = [(q, k) for q in range(T) for k in range(q + 1 if causal else T)]
        report.check(f"{name} ember attn --format csv --head 2: one row per visible pair",
                     [(r[2], r[3]) for r in rows] == pairs and
                     all(r[:2] == (0, 2) for r in rows), f"({len(rows)} rows)")
        report.compare(f"{name} ember attn --format csv --head 2", [r[4] for r in rows],
                       [ref[2, q, k] for q, k in pairs], PROB_ABS, PROB_REL)
    report.finish(ember)


if __name__ == "__main__":
    main()
