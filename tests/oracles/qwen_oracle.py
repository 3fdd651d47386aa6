#!/usr/bin/env python3
"""Oracle: Qwen2/Qwen2.5 and Qwen3 (hf_families.py's references after transformers'
modeling_qwen2.py and modeling_qwen3.py), random weights saved as Hugging Face
directories: `ember convert --hf` + `ember logits --all` must match the float64 reference
at every position in f32 (1 and 2 threads), f16 and bf16 (against the reference with the
same rounded weights) and q8 (rms and top-1), with `ember inspect`'s parameter counts equal
to PyTorch's and its features line naming each feature.

Variants:
  qwen2   biases on q, k and v (none on o), tied embeddings, an embedding larger than the
          tokenizer (as Qwen's 151936 rows for 151669 pieces), rope_scaling yarn (factor 4
          over an original context of 32, Qwen2.5's long-context recipe), sliding_window
          set but use_sliding_window false (every layer global), BF16 weights
  qwen3   Qwen3's tokenizer and 151936-row tied embedding (past its 151669 pieces),
          per-head RMSNorm of q and k before RoPE, head_dim 32 with hidden 64 and 4 heads
          (q_dim 128 != d_model), GQA 4/2, use_sliding_window with max_window_layers 1
          (layer 1 slides over 20 positions of the 80), <|im_end|> and <|endoftext|> stop
"""
import json
import os

import family_oracle as fam

PIECES, VOCAB = 300, 320


def main():
    args, torch, np, ember, report = fam.begin("qwen", __doc__)
    tokens = torch.randint(0, PIECES - 2, (80,)).tolist()

    def tokenizer(directory):
        fam.write_byte_level_tokenizer(directory, PIECES, [PIECES - 2, PIECES - 1])

    base = {"vocab_size": VOCAB, "hidden_size": 64, "intermediate_size": 96,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "hidden_act": "silu",
            "rope_theta": 1000000.0, "sliding_window": 16, "max_window_layers": 1,
            "bos_token_id": PIECES - 1, "eos_token_id": PIECES - 2}
    qwen2 = dict(base, model_type="qwen2", architectures=["Qwen2ForCausalLM"],
                 num_key_value_heads=4, tie_word_embeddings=True, use_sliding_window=False,
                 rope_scaling={"type": "yarn", "factor": 4.0,
                               "original_max_position_embeddings": 32},
                 torch_dtype="bfloat16")
    fam.run(args, torch, ember, report, "qwen2", qwen2, "BF16", tokens,
            ["rope scaling yarn (factor 4, original context 32"], tokenizer)
    # Qwen3's own tokenizer (151669 pieces) and embedding (151936 rows), ids and end ids:
    # <|endoftext|> 151643, <|im_end|> 151645.
    qwen3 = dict(base, model_type="qwen3", architectures=["Qwen3ForCausalLM"], head_dim=32,
                 vocab_size=fam.REAL_VOCAB["qwen3"], attention_bias=False,
                 tie_word_embeddings=True, use_sliding_window=True, sliding_window=20,
                 bos_token_id=151643, eos_token_id=151645)
    real_tokenizer = fam.real_tokenizer(args, "qwen3")

    def qwen3_files(directory):
        real_tokenizer(directory)
        with open(os.path.join(directory, "generation_config.json"), "w") as f:
            json.dump({"eos_token_id": [151645, 151643]}, f)

    qwen3_tokens = fam.real_tokens(torch, ember, args, "qwen3", "<|im_start|>user\n"
                                   "Ça va? 2026年 12345 tokens<|im_end|>", 80)
    _, path = fam.run(args, torch, ember, report, "qwen3", qwen3, "F32", qwen3_tokens,
                      ["sliding window 20 on 1 of 2 layers GS", "qk-norm"], qwen3_files,
                      dtypes=("f16", "q8"))
    got = fam.stop_ids(ember, path)
    report.check("qwen3: <|im_end|> and <|endoftext|> stop generation",
                 sorted(got) == [151643, 151645], f"({got})")
    report.finish(ember)


if __name__ == "__main__":
    main()
