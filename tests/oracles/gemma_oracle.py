#!/usr/bin/env python3
"""Oracle: Gemma 3 and Gemma 2 (hf_families.py's references after transformers'
modeling_gemma3.py and modeling_gemma2.py), random weights saved as Hugging Face
directories: `ember convert --hf` + `ember logits --all` must match the float64 reference
at every position in f32 (1 and 2 threads), f16 and bf16 (against the reference with the
same rounded weights) and q8 (rms and top-1), with `ember inspect`'s parameter counts equal
to PyTorch's and its features line naming each feature.

Variants:
  gemma3    Gemma3ForCausalLM with Gemma 3's tokenizer and 262144-row embedding (its
            <image_soft_token> past the rows left out), <eos> and <end_of_turn> stopping;
            layer_types sliding, full, sliding with a window of 16
            under the 80-token input; sliding layers rotate with rope_local_base_freq
            10000, the full one with rope_theta 1e6 and linear scaling 8 (as Gemma 3 4B
            and larger); q/k norms; norms before and after attention and MLP, all
            x / rms * (1 + w); GeGLU with tanh GELU; query_pre_attn_scalar 24 with
            head_dim 32 (q_dim 128 != d_model 72); BF16 weights and torch_dtype
            bfloat16, so the embedding normalizer sqrt(72) = 8.485 is 8.5 (bfloat16), as
            transformers computes it
  gemma3_mm the same weights as Gemma3ForConditionalGeneration: config.json's text_config,
            tensors under model.language_model., a small SigLIP tower and projector
            imported beside it (with stories260K's SentencePiece tokenizer, padded to
            the embedding's rows); `ember image -m` on a PNG against a float64 SigLIP
            and Gemma3MultiModalProjector
  gemma3_image  the tower with Gemma 3's tokenizer, a 262208-row embedding (as Gemma 3
            4B's, holding <image_soft_token>) and a preprocessor_config.json: `ember
            logits --image` on a chat prompt, its tokens as Gemma3Processor expands the
            prompt, its logits at every position against the reference with the image
            rows scattered in and the image block attending both ways
  gemma3_pattern  an older config (sliding_window_pattern 2 instead of layer_types),
            attn_logit_softcapping 1.5 and final_logit_softcapping 5 set, F32 weights
  gemma2    model_type gemma2: every other layer sliding, one RoPE for all layers, the
            soft-capping defaults (attention 50, final 30) from Gemma2Config
Under an emulator (the qemu matrix) the text-only variants gemma3_pattern and gemma2 and
gemma3's q8 run are left out: they check arithmetic the native run compares, and cost
minutes there.
"""
import json
import os

import family_oracle as fam

VOCAB = 512


def check_tower(torch, np, ember, report, path, vision):
    """`ember image -m`: an 8 x 8 PNG through the file's processor (SigLIP's, resizing to
    its own size, rescale and normalize by 0.5) and the tower, against a float64 PyTorch
    SigLIP + Gemma3MultiModalProjector on the same pixels and the BF16-rounded weights
    the directory holds."""
    from PIL import Image
    import torch.nn.functional as F
    pixels = np.random.default_rng(9).integers(0, 256, (8, 8, 3), dtype=np.uint8)
    png = ember.path("tile.png")
    Image.fromarray(pixels, "RGB").save(png)
    out = ember.path("embeds.npy")
    ember.run("image", "-m", path, "--image", png, "--embeds-out", out)
    got = np.load(out)

    def w(name):
        return torch.tensor(vision[name]).to(torch.bfloat16).double()
    t = "model.vision_tower.vision_model."
    x = (torch.tensor(pixels, dtype=torch.float64) / 255.0 - 0.5) / 0.5
    x = F.conv2d(x.permute(2, 0, 1)[None], w(t + "embeddings.patch_embedding.weight"),
                 w(t + "embeddings.patch_embedding.bias"), stride=2)
    h = x.flatten(2).transpose(1, 2)[0] + w(t + "embeddings.position_embedding.weight")
    l = t + "encoder.layers.0."

    def linear(name, v):
        return v @ w(l + name + ".weight").T + w(l + name + ".bias")

    def norm(name, v):
        return F.layer_norm(v, (8,), w(name + ".weight"), w(name + ".bias"), 1e-6)
    a = norm(l + "layer_norm1", h)
    q, k, v = (linear(f"self_attn.{p}_proj", a).view(16, 2, 4).transpose(0, 1)
               for p in "qkv")
    o = torch.softmax(q @ k.transpose(1, 2) / 2.0, -1) @ v
    h = h + linear("self_attn.out_proj", o.transpose(0, 1).reshape(16, 8))
    m = F.gelu(linear("mlp.fc1", norm(l + "layer_norm2", h)), approximate="tanh")
    h = norm(t + "post_layernorm", h + linear("mlp.fc2", m))
    pooled = F.avg_pool2d(h.T.reshape(1, 8, 4, 4), 2).flatten(2)[0].T
    p = "model.multi_modal_projector."
    normed = pooled * torch.rsqrt(pooled.pow(2).mean(-1, keepdim=True) + 1e-6)
    normed = normed * (1.0 + w(p + "mm_soft_emb_norm.weight"))
    want = (normed @ w(p + "mm_input_projection_weight")).numpy()
    err = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
    report.check("gemma3_mm: ember image -m's rows equal PyTorch's tower and projector",
                 err < 1e-4 * max(1.0, float(np.abs(want).max())),
                 f"(shape {got.shape}, max abs error {err:.2e}, values up to "
                 f"{float(np.abs(want).max()):.2f})")
    return png, torch.tensor(want)


def check_image_prompt(torch, np, ember, report, model, path, directory, png, rows):
    """`ember logits --image`: a chat prompt naming the image as Gemma 3's template does,
    expanded as Gemma3Processor expands it (the tokens ember's tokenizer makes of the
    expanded text, which the tokenizer oracle checks against transformers.js), and the
    logits at every position against the float64 reference given the tower's rows
    (masked_scatter into the scaled embeddings, the image block attending both ways)."""
    prompt = ("<start_of_turn>user\n<start_of_image>What is in this picture?"
              "<end_of_turn>\n<start_of_turn>model\n")
    expanded = prompt.replace("<start_of_image>", "\n\n<start_of_image>" +
                              "<image_soft_token>" * len(rows) + "<end_of_image>\n\n")
    want = [int(t) for t in ember.run("tokenize", "--tokenizer", directory, "-p", expanded,
                                      "--parse-special").split()]
    out, ids_out = ember.path("image_logits.npy"), ember.path("image_tokens.txt")
    for threads in (1, 2):
        ember.run("logits", "-m", path, "--image", png, "-p", prompt, "--all", "-o", out,
                  "--tokens-out", ids_out, "-t", threads)
        with open(ids_out) as f:
            got_ids = [int(t) for t in f.read().split()]
        report.check(f"gemma3_image: the prompt's tokens are the processor's ({threads} "
                     f"thread(s))", got_ids == want, f"({got_ids[:12]}... vs {want[:12]}...)")
        with torch.no_grad():
            ref = model(torch.tensor([want]), 262144, rows)[0].numpy()
        logits = np.load(out)
        report.compare(f"gemma3_image: f32 logits after an image prompt at all {len(want)} "
                       f"positions, {threads} thread(s)", logits, ref,
                       fam.ABS_TOL * max(1.0, abs(ref).max()), fam.REL_TOL)
    # The reference without the image block's both-way attention is far from ember's:
    # the comparison above sees the or-mask.
    with torch.no_grad():
        causal = model(torch.tensor([want]), 262144, rows, image_blocks=False)[0].numpy()
    err = float(np.abs(logits - causal).max())
    report.check("gemma3_image: a causal-only image block gives other logits",
                 err > 100 * fam.ABS_TOL * max(1.0, abs(causal).max()),
                 f"(max abs difference {err:.2e})")


def main():
    args, torch, np, ember, report = fam.begin("gemma", __doc__)
    sentencepiece = fam.sentencepiece_tokenizer(args)
    tokens = [1] + torch.randint(3, VOCAB, (79,)).tolist()

    def tokenizer(directory):  # SentencePiece-style BPE with byte fallback, as Gemma's
        sentencepiece(directory)
        with open(os.path.join(directory, "generation_config.json"), "w") as f:
            json.dump({"eos_token_id": [2, 0]}, f)

    base = {"model_type": "gemma3_text", "architectures": ["Gemma3ForCausalLM"],
            "vocab_size": VOCAB, "hidden_size": 72, "intermediate_size": 96,
            "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 32, "max_position_embeddings": 256, "rms_norm_eps": 1e-6,
            "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 24,
            "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
            "attn_logit_softcapping": None, "final_logit_softcapping": None}
    # Gemma 3's own tokenizer (262144 rows; <bos> 2, <eos> 1, <end_of_turn> 106).
    gemma3 = dict(base, vocab_size=fam.REAL_VOCAB["gemma3"], bos_token_id=2,
                  eos_token_id=1, layer_types=["sliding_attention", "full_attention",
                                               "sliding_attention"],
                  sliding_window=16, rope_theta=1000000.0, rope_local_base_freq=10000.0,
                  rope_scaling={"rope_type": "linear", "factor": 8.0},
                  torch_dtype="bfloat16")
    real_tokenizer = fam.real_tokenizer(args, "gemma3")

    def gemma3_files(directory):
        real_tokenizer(directory)
        with open(os.path.join(directory, "generation_config.json"), "w") as f:
            json.dump({"eos_token_id": [1, 106]}, f)

    # <bos> <start_of_turn>, rows anywhere in the embedding, <end_of_turn> (the tokenizer
    # takes 3 s to load: it is read once, by the conversion).
    gemma3_tokens = [2, 105] + torch.randint(0, fam.REAL_VOCAB["gemma3"], (77,)).tolist() + [106]
    features = ["rope scaling linear (factor 8)", "sliding window 16 on 2 of 3 layers SGS",
                "sliding layers' rope theta 10000", "qk-norm", "post-norms",
                "embedding scale 8.5", "attention scale 0.204124"]
    model, path = fam.run(args, torch, ember, report, "gemma3", gemma3, "BF16",
                          gemma3_tokens, features, gemma3_files,
                          dtypes=() if ember.emulator else ("q8",))
    got = fam.stop_ids(ember, path)
    report.check("gemma3: <eos> and <end_of_turn> stop generation", sorted(got) == [1, 106],
                 f"({got})")

    multimodal = {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
                  "text_config": gemma3,
                  "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 8,
                                    "intermediate_size": 12, "num_hidden_layers": 1,
                                    "num_attention_heads": 2, "image_size": 8,
                                    "patch_size": 2},
                  "mm_tokens_per_image": 4, "eos_token_id": [1, 106],
                  "torch_dtype": "bfloat16"}
    # A whole SigLIP tower and projector (their numbers: runtime/vision/vision_tower_test).
    rng = np.random.default_rng(3)
    tower = "model.vision_tower.vision_model."
    shapes = {"embeddings.patch_embedding.weight": (8, 3, 2, 2),
              "embeddings.patch_embedding.bias": (8,),
              "embeddings.position_embedding.weight": (16, 8),
              "post_layernorm.weight": (8,), "post_layernorm.bias": (8,)}
    for name, shape in (("layer_norm1", (8,)), ("layer_norm2", (8,)),
                        ("self_attn.q_proj", (8, 8)), ("self_attn.k_proj", (8, 8)),
                        ("self_attn.v_proj", (8, 8)), ("self_attn.out_proj", (8, 8)),
                        ("mlp.fc1", (12, 8)), ("mlp.fc2", (8, 12))):
        shapes[f"encoder.layers.0.{name}.weight"] = shape
        shapes[f"encoder.layers.0.{name}.bias"] = shape[:1]
    vision = {tower + k: rng.standard_normal(v).astype(np.float32) for k, v in shapes.items()}
    vision["model.multi_modal_projector.mm_soft_emb_norm.weight"] = np.zeros(8, np.float32)
    vision["model.multi_modal_projector.mm_input_projection_weight"] = (
        rng.standard_normal((8, 72)).astype(np.float32))
    _, mm_path = fam.run(args, torch, ember, report, "gemma3_mm", multimodal, "BF16",
                         gemma3_tokens, features, tokenizer,
                         rename=lambda k: k.replace("model.", "model.language_model.", 1),
                         extra=vision, dtypes=(), model=model)
    shown = ember.run("inspect", "-m", mm_path)
    report.check("gemma3_mm: ember inspect shows the tower",
                 "vision       siglip tower: 1 layers, d_model 8" in shown and
                 "average pool 2 x 2: 4 image tokens" in shown, "")
    png, rows = check_tower(torch, np, ember, report, mm_path, vision)
    # The same with Gemma 3's tokenizer and an embedding of 262208 rows, as Gemma 3 4B's,
    # so that its <image_soft_token> (262144) is a token of the model.
    image_config = dict(multimodal, text_config=dict(gemma3, vocab_size=262208),
                        image_token_index=262144)
    def image_files(directory):  # the tokenizer, and Gemma 3's processor config
        gemma3_files(directory)
        with open(os.path.join(directory, "preprocessor_config.json"), "w") as f:
            json.dump({"image_processor_type": "Gemma3ImageProcessor",
                       "processor_class": "Gemma3Processor", "do_resize": True,
                       "size": {"height": 8, "width": 8}, "resample": 3,
                       "do_rescale": True, "rescale_factor": 1 / 255,
                       "do_normalize": True, "image_mean": [0.5, 0.5, 0.5],
                       "image_std": [0.5, 0.5, 0.5], "do_convert_rgb": None,
                       "do_pan_and_scan": None}, f)
    image_model, image_path = fam.run(
        args, torch, ember, report, "gemma3_image", image_config, "BF16", gemma3_tokens,
        [], image_files, rename=lambda k: k.replace("model.", "model.language_model.", 1),
        extra=vision, dtypes=())
    shown = ember.run("inspect", "-m", image_path)
    shown = "\n".join(l for l in shown.splitlines() if "processor:" in l or "prompt:" in l)
    report.check("gemma3_image: ember inspect shows the processor and the image prompt",
                 "processor: resized to 8 x 8 (bicubic)" in shown and
                 'prompt: "<start_of_image>" becomes "\\n\\n<start_of_image>" + '
                 '"<image_soft_token>" per row + "<end_of_image>\\n\\n"' in shown,
                 f"({shown})")
    check_image_prompt(torch, np, ember, report, image_model, image_path,
                       os.path.join(ember.dir, "gemma3_image"), png, rows)
    text_only = ember.path("gemma3_text_only.ember")
    ember.run("convert", "--hf", os.path.join(ember.dir, "gemma3_mm"), "-o", text_only,
              "--dtype", "f32", "--no-vision")
    shown = ember.run("inspect", "-m", text_only)
    report.check("gemma3_mm --no-vision: no tower", "vision " not in shown and
                 os.path.getsize(text_only) < os.path.getsize(mm_path), "")

    if ember.emulator:  # under qemu: the vision path; the text-only variants run natively
        report.finish(ember)
        return
    pattern = dict(base, num_hidden_layers=2, sliding_window_pattern=2, sliding_window=16,
                   attn_logit_softcapping=1.5, final_logit_softcapping=5.0,
                   rope_theta=10000.0, torch_dtype="float32")
    fam.run(args, torch, ember, report, "gemma3_pattern", pattern, "F32", tokens,
            ["sliding window 16 on 1 of 2 layers SG", "attention softcap 1.5",
             "final logit softcap 5", "embedding scale 8.48528"], tokenizer)
    gemma2 = dict(base, model_type="gemma2", architectures=["Gemma2ForCausalLM"],
                  sliding_window=16, torch_dtype="float32")
    for key in ("attn_logit_softcapping", "final_logit_softcapping"):
        del gemma2[key]
    fam.run(args, torch, ember, report, "gemma2", gemma2, "F32", tokens,
            ["sliding window 16 on 2 of 3 layers SGS", "attention softcap 50",
             "final logit softcap 30", "post-norms"], tokenizer, dtypes=("q8",))
    report.finish(ember)


if __name__ == "__main__":
    main()
