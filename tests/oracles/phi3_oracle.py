#!/usr/bin/env python3
"""Oracle: Phi-3 (hf_families.py's reference after transformers' modeling_phi3.py),
random weights saved as Hugging Face directories: `ember convert --hf` + `ember logits
--all` must match the float64 reference at every position in f32 (1 and 2 threads), f16
and bf16 (against the reference with the same rounded weights) and q8 (rms and top-1),
with `ember inspect`'s parameter counts equal to PyTorch's (the fused tensors counted as
their q, k, v and gate, up parts) and its features line naming each feature.

Variants:
  phi3          fused qkv_proj (rows q, k, v) and gate_up_proj (rows gate, up), split at
                import; GQA 4/2; sliding_window 24 on every layer (Phi-3-mini's config
                sets 2047), under the 80-token input; separate lm_head
  phi3_full     sliding_window null, 4 KV heads (MHA), F16 weights
  phi35         LongRoPE (Phi-3.5-mini, Phi-3-mini-128k): short_factor and long_factor over
                an original context of 32 of 256 (attention factor sqrt(1 + ln 8 / ln 32)),
                its older name "su"; the 80-token input takes the long factors and a
                24-token one the short (transformers picks them per forward call)
  phi4mini      partial_rotary_factor 0.75 (12 of head_dim 16 rotated), LongRoPE, tied
                embeddings, as Phi-4-mini
"""
import family_oracle as fam

VOCAB = 512


def main():
    args, torch, np, ember, report = fam.begin("phi3", __doc__)
    tokenizer = fam.sentencepiece_tokenizer(args)  # Phi-3 has Llama 2's vocabulary
    tokens = [1] + torch.randint(3, VOCAB, (79,)).tolist()

    phi3 = {"model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "vocab_size": VOCAB,
            "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2,
            "max_position_embeddings": 256, "original_max_position_embeddings": 256,
            "rms_norm_eps": 1e-5, "hidden_act": "silu", "rope_theta": 10000.0,
            "rope_scaling": None, "sliding_window": 24, "bos_token_id": 1,
            "eos_token_id": 2, "tie_word_embeddings": False, "resid_pdrop": 0.0,
            "embd_pdrop": 0.0, "attention_dropout": 0.0}
    fam.run(args, torch, ember, report, "phi3", phi3, "F32", tokens,
            ["sliding window 24 on 2 of 2 layers SS"], tokenizer)
    full = dict(phi3, sliding_window=None, num_key_value_heads=4)
    fam.run(args, torch, ember, report, "phi3_full", full, "F16", tokens, [], tokenizer,
            dtypes=("q8",))

    def longrope(pairs, kind):
        short = (1.0 + 0.5 * torch.rand(pairs, dtype=torch.float64)).tolist()
        long = (2.0 + 10.0 * torch.rand(pairs, dtype=torch.float64)).tolist()
        return {"type": kind, "short_factor": short, "long_factor": long}

    phi35 = dict(phi3, sliding_window=None, original_max_position_embeddings=32,
                 rope_scaling=longrope(8, "su"))
    model, path = fam.run(args, torch, ember, report, "phi35", phi35, "F32", tokens,
                          ["rope scaling longrope (factor 8, original context 32, "
                           "attention factor 1.26491"], tokenizer, dtypes=())
    short_tokens = tokens[:24]
    with torch.no_grad():
        ref = model(torch.tensor([short_tokens]))[0].numpy()
    report.compare("phi35: f32 logits of a 24-token input (short factors)",
                   ember.logits(path, short_tokens), ref,
                   fam.ABS_TOL * max(1.0, abs(ref).max()), fam.REL_TOL)
    phi4mini = dict(phi3, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                    head_dim=None, partial_rotary_factor=0.75, sliding_window=None,
                    tie_word_embeddings=True, original_max_position_embeddings=32,
                    rope_scaling=longrope(6, "longrope"))
    fam.run(args, torch, ember, report, "phi4mini", phi4mini, "F32", tokens,
            ["rope on 12 of 16 dimensions", "rope scaling longrope"], tokenizer,
            dtypes=("bf16",))
    report.finish(ember)


if __name__ == "__main__":
    main()
