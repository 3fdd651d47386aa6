#!/usr/bin/env python3
"""Oracle: Llama 3.x, SmolLM2 and Mistral (hf_families.py's references after
transformers' modeling_llama.py and modeling_mistral.py), random weights saved as Hugging
Face directories: `ember convert --hf` + `ember logits --all` must match the float64
reference at every position in f32 (1 and 2 threads), f16 and bf16 (against the
reference with the same rounded weights) and q8 (rms and top-1), with `ember inspect`'s
parameter counts equal to PyTorch's and its features line naming each feature.

Variants:
  llama3    Llama 3's tokenizer and 128256-row embedding (../shared/models/hf-tokenizers),
            rope_scaling llama3 (factor 8, low 1, high 4, original context 256: with theta
            500000 and head_dim 24, 9 of the 12 frequencies change), head_dim 24 with
            hidden 64 and 4 heads (q_dim 96 != d_model), GQA 4/2, separate lm_head, BF16
            weights, eos_token_id lists in config.json and generation_config.json
            (128001/128008/128009, as Llama 3.1 Instruct's): all of them stop
  smollm2   SmolLM2's shape in small (9 heads over 3 KV heads, tied embeddings, theta 1e5)
  linear    rope_scaling linear (factor 4), attention_bias and mlp_bias, F16 weights
  yarn      rope_scaling yarn (factor 4 over an original context of 32, default
            attention factor 0.1 ln 4 + 1)
  mistral   sliding_window 24 on every layer, under the 80-token input
  mistral_full  sliding_window null (Mistral 7B v0.2 and later)
"""
import json
import os

import family_oracle as fam

VOCAB = 384


def main():
    args, torch, np, ember, report = fam.begin("llama3", __doc__)
    tokens = torch.randint(0, VOCAB - 3, (80,)).tolist()  # 80: two prefill steps of 64
    ends = [VOCAB - 3, VOCAB - 2, VOCAB - 1]

    def tokenizer(directory):
        fam.write_byte_level_tokenizer(directory, VOCAB, ends)

    base = {"model_type": "llama", "architectures": ["LlamaForCausalLM"],
            "vocab_size": VOCAB, "hidden_size": 64, "intermediate_size": 96,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "max_position_embeddings": 512, "rms_norm_eps": 1e-5, "hidden_act": "silu",
            "bos_token_id": None, "tie_word_embeddings": False}
    # Llama 3's own tokenizer and ids: <|begin_of_text|> 128000; generation ends at
    # <|end_of_text|>, <|eom_id|> (Llama 3.1's name for 128008) and <|eot_id|>.
    real_ends = [128001, 128008, 128009]
    llama3 = dict(base, vocab_size=fam.REAL_VOCAB["llama3"], head_dim=24,
                  rope_theta=500000.0, bos_token_id=128000,
                  eos_token_id=[real_ends[0], real_ends[2]],
                  rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0,
                                "original_max_position_embeddings": 256},
                  torch_dtype="bfloat16")
    real_tokenizer = fam.real_tokenizer(args, "llama3")

    def llama3_files(directory):
        real_tokenizer(directory)
        with open(os.path.join(directory, "generation_config.json"), "w") as f:
            json.dump({"eos_token_id": real_ends[1:]}, f)

    llama3_tokens = fam.real_tokens(
        torch, ember, args, "llama3", "<|begin_of_text|>It's 2026: 1234567 tokens, "
        "naïve café 🦙!<|eot_id|>", 80)
    _, path = fam.run(args, torch, ember, report, "llama3", llama3, "BF16", llama3_tokens,
                      ["rope scaling llama3 (factor 8, low 1, high 4, original context 256)"],
                      llama3_files, dtypes=("bf16", "q8"))
    got = fam.stop_ids(ember, path)
    report.check("llama3: every eos_token_id of config.json and generation_config.json "
                 "stops generation", sorted(got) == real_ends, f"({got})")

    smollm2 = dict(base, hidden_size=72, num_attention_heads=9, num_key_value_heads=3,
                   rope_theta=100000.0, tie_word_embeddings=True, eos_token_id=ends[2])
    fam.run(args, torch, ember, report, "smollm2", smollm2, "F32", tokens, [], tokenizer)
    linear = dict(base, rope_scaling={"type": "linear", "factor": 4.0}, attention_bias=True,
                  mlp_bias=True)
    fam.run(args, torch, ember, report, "linear", linear, "F16", tokens,
            ["rope scaling linear (factor 4)"], tokenizer)
    yarn = dict(base, rope_theta=10000.0, rope_scaling={
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32})
    fam.run(args, torch, ember, report, "yarn", yarn, "F32", tokens,
            ["rope scaling yarn (factor 4, original context 32, beta 32/1, attention "
             "factor 1.13863"], tokenizer)
    mistral = dict(base, model_type="mistral", architectures=["MistralForCausalLM"],
                   sliding_window=24)
    fam.run(args, torch, ember, report, "mistral", mistral, "F32", tokens,
            ["sliding window 24 on 2 of 2 layers SS"], tokenizer, dtypes=("q8",))
    mistral_full = dict(mistral, sliding_window=None)
    fam.run(args, torch, ember, report, "mistral_full", mistral_full, "F32", tokens, [],
            tokenizer, dtypes=())
    report.finish(ember)


if __name__ == "__main__":
    main()
