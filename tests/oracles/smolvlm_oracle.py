#!/usr/bin/env python3
"""Oracle: SmolVLM (Idefics3ForConditionalGeneration, model_type smolvlm and idefics3)
from a Hugging Face directory of random weights, against float64 PyTorch written here
after transformers' modeling_idefics3.py, processing_idefics3.py and hf_families.py's
Llama (transformers itself is not used).

The directory: config.json (a Llama text_config, a smolvlm_vision vision_config: width
32, 2 heads of 16, ffn 72 (not a multiple of 32, as SmolVLM's 3072 over 768 is not a
multiple of the q8 group), 2 layers, 64 x 64 tiles in patches of 8 (8 x 8 patches),
layer_norm_eps left to the class default 1e-6; scale_factor 2: 16 rows a tile),
preprocessor_config.json (Idefics3ImageProcessor, longest edge 192 over tiles of 64,
Lanczos, do_image_splitting: a 150 x 90 PNG becomes 2 x 3 tiles and the global view),
processor_config.json (image_seq_len 16), model.safetensors (F32) and a tokenizer.json
(GPT-2's first 743 merges under SmolLM2's pre-tokenizer, Digits then ByteLevel, with
SmolVLM's added tokens "<fake_token_around_image>", "<image>", "<end_of_utterance>",
"<global-img>" and "<row_R_col_C>").

Checked, after `ember convert --hf`:
  - the text model alone: family_oracle.check's f32 logits at every position (1 and 2
    threads) and `ember inspect`'s parameter counts (the tower's as "vision");
  - `ember inspect` shows the tower, the pixel shuffle and the tiled prompt;
  - `ember image -m --out`: the pixels equal image_oracle.py's port of
    Idefics3ImageProcessor (itself checked against Pillow by oracle_image);
  - `ember image -m --embeds-out`: every tile's rows equal a float64 SigLIP (Conv2d patch
    embedding, positions as Idefics3VisionEmbeddings buckets them, pre-LN layers,
    post_layernorm) + Idefics3Connector's pixel shuffle + modality projection on the
    port's pixels, within 1e-4 of the largest value; a shuffle without its transposes
    is far from them;
  - `ember logits --image -p "User:<image>Describe ..." --all`: the prompt's ids equal
    Idefics3Processor's expansion tokenized here (added tokens split out, then the
    pre-tokenizer and GPT-2's merges), and the logits at every position equal the
    float64 Llama given the rows at the "<image>" positions (inputs_merger), causal
    throughout, within family_oracle's f32 tolerance (1e-4 of the logit scale), at 1
    and 2 threads; a reference whose image rows attend both ways (Gemma 3's blocks) is
    far from them;
  - model_type idefics3 with the same files converts to the same rows;
  - the same weights as llama.cpp's pair of files (gguf_writer.py, laid out as
    convert_hf_to_gguf.py and its --mmproj write them: the text model as "llama" with
    Q and K rows permuted and the tokenizer as "gpt2" with the "smollm" pre-tokenizer,
    added tokens as control tokens; the tower as clip.projector_type idefics3 with
    clip.vision.* keys, v.blk.{i}.{ln1,attn_q,...,ffn_up,ffn_down}, mm.model.fc), after
    `ember convert --gguf --mmproj`: rows equal to --hf's bit for bit (and again with
    fc1 named ffn_down, as older files name it), the prompt's tokens and logits equal to
    the reference's.
"""
import json
import math
import os
import re

import family_oracle as fam
import gguf_oracle
import gguf_writer as gw
import gpt2_oracle
import hf_families as ref
import image_oracle
import oracle_util as u

VOCAB = 1024  # GPT-2's first 999 pieces, <|endoftext|>, the added tokens, padding rows
TILE, PATCH, SCALE, WIDTH, HEADS, FFN, LAYERS = 64, 8, 2, 32, 2, 72, 2
ROWS_PER_TILE = (TILE // PATCH) ** 2 // SCALE ** 2
FAKE, IMAGE, END, GLOBAL = ("<fake_token_around_image>", "<image>", "<end_of_utterance>",
                            "<global-img>")
PROMPT = "User:<image>Describe the 2 pictures.<end_of_utterance>\nAssistant:"
PROCESSOR = {"image_processor_type": "Idefics3ImageProcessor", "do_convert_rgb": True,
             "do_resize": True, "size": {"longest_edge": 3 * TILE},
             "max_image_size": {"longest_edge": TILE}, "do_image_splitting": True,
             "resample": 1, "do_rescale": True, "rescale_factor": 1 / 255,
             "do_normalize": True, "image_mean": [0.5, 0.5, 0.5],
             "image_std": [0.5, 0.5, 0.5], "do_pad": True}


# --- the tokenizer -----------------------------------------------------------------------

def added_tokens(first_id):
    """SmolVLM's added tokens after the vocabulary: {text: id}."""
    names = [FAKE, IMAGE, END, GLOBAL] + [f"<row_{r}_col_{c}>" for r in range(1, 5)
                                          for c in range(1, 5)]
    return {name: first_id + i for i, name in enumerate(names)}


def write_tokenizer(directory, vocab, merges, eot, added):
    """tokenizer.json: BPE over `vocab` and `merges`, SmolLM2's pre-tokenizer, the added
    tokens special and matched as written; tokenizer_config.json naming the end token."""
    tokens = [{"id": eot, "content": "<|endoftext|>", "special": True}]
    tokens += [{"id": i, "content": t, "special": True, "normalized": False,
                "lstrip": False, "rstrip": False, "single_word": False}
               for t, i in added.items()]
    tok = {"version": "1.0", "added_tokens": tokens, "normalizer": None,
           "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
               {"type": "Digits", "individual_digits": True},
               {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                "use_regex": True}]},
           "post_processor": None, "decoder": {"type": "ByteLevel"},
           "model": {"type": "BPE", "vocab": vocab,
                     "merges": [f"{a} {b}" for a, b in merges]}}
    with open(os.path.join(directory, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    with open(os.path.join(directory, "tokenizer_config.json"), "w") as f:
        json.dump({"add_bos_token": False, "eos_token": END}, f)


def encode(text, vocab, merges, added):
    """The ids a Hugging Face tokenizer gives `text`: added tokens split out first (as
    written), then each digit alone (Digits, individual), then GPT-2's pattern and
    merges on the rest (gpt2_oracle.reference_encode, ASCII)."""
    ids = []
    pattern = "(" + "|".join(re.escape(t) for t in sorted(added, key=len, reverse=True)) + ")"
    for part in re.split(pattern, text):
        if part in added:
            ids.append(added[part])
            continue
        for piece in re.split(r"(\d)", part):
            if piece:
                ids += gpt2_oracle.reference_encode(piece, vocab, merges)
    return ids


def expand(text, grids):
    """Idefics3Processor: each "<image>" in turn becomes its image's tiles, per tile
    FAKE, the tile's name and the image token once per row, a newline after each row of
    tiles, then a newline and the global view as FAKE, GLOBAL, its rows, FAKE; an image
    not split (0 x 0) is the global view alone, without the newline."""
    parts = text.split(IMAGE)
    assert len(parts) == len(grids) + 1
    out = parts[0]
    for (rows, cols), after in zip(grids, parts[1:]):
        s = ""
        for r in range(rows):
            for c in range(cols):
                s += FAKE + f"<row_{r + 1}_col_{c + 1}>" + IMAGE * ROWS_PER_TILE
            s += "\n"
        if rows or cols:
            s += "\n"
        out += s + FAKE + GLOBAL + IMAGE * ROWS_PER_TILE + FAKE + after
    return out


# --- the tower -----------------------------------------------------------------------------

def position_ids(torch, side):
    """Idefics3VisionEmbeddings' position of each patch of a whole tile: its fractional
    row and column (float32 steps of 1 / side, side a count of patches in the mask)
    bucketed among the boundaries k / side."""
    boundaries = torch.arange(1 / side, 1.0, 1 / side)
    coords = torch.arange(0, 1 - 1e-6, 1 / torch.tensor(side))
    bucket = torch.bucketize(coords, boundaries, right=True)
    return (bucket[:, None] * side + bucket[None, :]).flatten()


def pixel_shuffle(x, s, plain=False):
    """Idefics3Connector.pixel_shuffle on one tile's (S * S, D) rows: the S x S grid's
    rows cut into runs of s patches whose features are laid side by side, the grid
    transposed, the other axis cut the same way, transposed back; each output row holds
    an s x s block of patches, row by row. `plain`: one reshape, no transposes (wrong)."""
    n, d = x.shape
    side = int(round(math.sqrt(n)))
    if plain:
        return x.reshape(n // (s * s), d * s * s)
    x = x.reshape(side, side // s, d * s)      # (row, column run, s patches' features)
    x = x.transpose(0, 1)                      # (column run, row, ...)
    x = x.reshape(side // s, side // s, d * s * s)  # rows grouped s at a time
    x = x.transpose(0, 1)                      # (row block, column run, ...)
    return x.reshape(n // (s * s), d * s * s)


def tower_rows(torch, w, pixels, plain=False):
    """A float64 SigLIP tower, pixel shuffle and projection over each tile (tiles, 3, H,
    W): the rows each tile takes in a prompt, concatenated in tile order."""
    F = torch.nn.functional
    t = "model.vision_model."

    def p(name):
        return torch.tensor(w[name], dtype=torch.float64)

    def norm(name, v):
        return F.layer_norm(v, (WIDTH,), p(name + ".weight"), p(name + ".bias"), 1e-6)

    side = TILE // PATCH
    out = []
    for tile in torch.tensor(pixels, dtype=torch.float64):
        h = F.conv2d(tile[None], p(t + "embeddings.patch_embedding.weight"),
                     p(t + "embeddings.patch_embedding.bias"), stride=PATCH)
        h = h.flatten(2)[0].T + p(t + "embeddings.position_embedding.weight")[
            position_ids(torch, side)]
        hd = WIDTH // HEADS
        for i in range(LAYERS):
            l = f"{t}encoder.layers.{i}."

            def linear(name, v):
                return v @ p(l + name + ".weight").T + p(l + name + ".bias")
            a = norm(l + "layer_norm1", h)
            q, k, v = (linear(f"self_attn.{x}_proj", a).view(-1, HEADS, hd).transpose(0, 1)
                       for x in "qkv")
            o = torch.softmax(q @ k.transpose(1, 2) * hd ** -0.5, -1) @ v
            h = h + linear("self_attn.out_proj", o.transpose(0, 1).reshape(-1, WIDTH))
            m = F.gelu(linear("mlp.fc1", norm(l + "layer_norm2", h)), approximate="tanh")
            h = h + linear("mlp.fc2", m)
        h = norm(t + "post_layernorm", h)
        out.append(pixel_shuffle(h, SCALE, plain) @
                   p("model.connector.modality_projection.proj.weight").T)
    return torch.cat(out)


def vision_weights(np, text_d):
    rng = np.random.default_rng(5)
    t = "model.vision_model."
    shapes = {"embeddings.patch_embedding.weight": (WIDTH, 3, PATCH, PATCH),
              "embeddings.patch_embedding.bias": (WIDTH,),
              "embeddings.position_embedding.weight": ((TILE // PATCH) ** 2, WIDTH),
              "post_layernorm.weight": (WIDTH,), "post_layernorm.bias": (WIDTH,)}
    for i in range(LAYERS):
        for name, shape in (("layer_norm1", (WIDTH,)), ("layer_norm2", (WIDTH,)),
                            ("self_attn.q_proj", (WIDTH, WIDTH)),
                            ("self_attn.k_proj", (WIDTH, WIDTH)),
                            ("self_attn.v_proj", (WIDTH, WIDTH)),
                            ("self_attn.out_proj", (WIDTH, WIDTH)),
                            ("mlp.fc1", (FFN, WIDTH)), ("mlp.fc2", (WIDTH, FFN))):
            shapes[f"encoder.layers.{i}.{name}.weight"] = shape
            shapes[f"encoder.layers.{i}.{name}.bias"] = shape[:1]
    w = {}
    for name, shape in shapes.items():
        scale = 1 / math.sqrt(shape[-1]) if len(shape) == 2 else 0.1
        if len(shape) == 4:
            scale = 1 / math.sqrt(3 * PATCH * PATCH)
        values = rng.standard_normal(shape) * scale
        if "norm" in name and name.endswith("weight"):
            values += 1.0
        w[t + name] = values.astype(np.float32)
    w["model.connector.modality_projection.proj.weight"] = (
        rng.standard_normal((text_d, WIDTH * SCALE * SCALE)) /
        math.sqrt(WIDTH * SCALE * SCALE)).astype(np.float32)
    return w


# --- llama.cpp's pair of files --------------------------------------------------------------

def gguf_text(model, c, vocab, merges, eot, added):
    """The text model and tokenizer as convert_hf_to_gguf.py writes a SmolVLM's: arch
    llama (Q and K rows permuted), a "gpt2" BPE tokenizer with the "smollm" pre-tokenizer,
    the added tokens as control tokens and [PAD{i}] rows (unused) to the embedding's."""
    tokens = [None] * VOCAB
    types = [5] * VOCAB
    for piece, i in vocab.items():
        tokens[i], types[i] = piece, 1
    types[eot] = 3
    for text, i in added.items():
        tokens[i], types[i] = text, 3
    tokens = [t if t is not None else f"[PAD{i}]" for i, t in enumerate(tokens)]
    meta = gguf_oracle.gguf_metadata("llama", c, [("vocab_size", gw.UINT32, VOCAB)]) + [
        ("general.name", gw.STRING, "smolvlm-oracle"),
        ("tokenizer.ggml.model", gw.STRING, "gpt2"),
        ("tokenizer.ggml.pre", gw.STRING, "smollm"),
        ("tokenizer.ggml.tokens", gw.ARRAY, (gw.STRING, tokens)),
        ("tokenizer.ggml.token_type", gw.ARRAY, (gw.INT32, types)),
        ("tokenizer.ggml.merges", gw.ARRAY, (gw.STRING, [f"{a} {b}" for a, b in merges])),
        ("tokenizer.ggml.eos_token_id", gw.UINT32, added[END]),
        ("tokenizer.ggml.add_bos_token", gw.BOOL, False)]
    return meta, gguf_oracle.gguf_tensors(model, c, "llama")


def gguf_mmproj(vision, legacy_ffn=False):
    """The tower as convert_hf_to_gguf.py --mmproj writes an Idefics3 / SmolVLM one."""
    u = lambda key, v: (f"clip.vision.{key}", gw.UINT32, v)
    meta = [("general.architecture", gw.STRING, "clip"),
            ("clip.has_vision_encoder", gw.BOOL, True),
            ("clip.projector_type", gw.STRING, "idefics3"),
            u("image_size", TILE), u("patch_size", PATCH), u("embedding_length", WIDTH),
            u("feed_forward_length", FFN), u("block_count", LAYERS),
            u("attention.head_count", HEADS), u("projection_dim", 64),
            u("projector.scale_factor", SCALE), u("preproc_image_size", 3 * TILE),
            ("clip.vision.attention.layer_norm_epsilon", gw.FLOAT32, 1e-6),
            ("clip.vision.image_mean", gw.ARRAY, (gw.FLOAT32, [0.5] * 3)),
            ("clip.vision.image_std", gw.ARRAY, (gw.FLOAT32, [0.5] * 3)),
            ("clip.use_gelu", gw.BOOL, True)]
    names = {"layer_norm1": "ln1", "layer_norm2": "ln2", "self_attn.q_proj": "attn_q",
             "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.out_proj": "attn_out",
             "mlp.fc1": "ffn_down" if legacy_ffn else "ffn_up",
             "mlp.fc2": "ffn_up" if legacy_ffn else "ffn_down"}
    tower = "model.vision_model."
    tensors = []
    for name, w in vision.items():
        if name.startswith(tower + "encoder.layers."):
            layer, rest = name[len(tower + "encoder.layers."):].split(".", 1)
            module, kind = rest.rsplit(".", 1)
            gguf = f"v.blk.{layer}.{names[module]}.{kind}"
        else:
            gguf = {tower + "embeddings.patch_embedding.weight": "v.patch_embd.weight",
                    tower + "embeddings.patch_embedding.bias": "v.patch_embd.bias",
                    tower + "embeddings.position_embedding.weight": "v.position_embd.weight",
                    tower + "post_layernorm.weight": "v.post_ln.weight",
                    tower + "post_layernorm.bias": "v.post_ln.bias",
                    "model.connector.modality_projection.proj.weight":
                        "mm.model.fc.weight"}[name]
        tensors.append((gguf, w))
    return meta, tensors


def check_gguf_pair(torch, np, ember, report, files, png, hf_rows, want_ids, want_logits):
    model, c, vocab, merges, eot, added, vision = files
    text = ember.path("smolvlm_text.gguf")
    gw.write(text, *gguf_text(model, c, vocab, merges, eot, added))
    rows_out = ember.path("gguf_embeds.npy")
    for legacy in (False, True):
        mmproj = ember.path("smolvlm_mmproj.gguf")
        gw.write(mmproj, *gguf_mmproj(vision, legacy))
        path = ember.path("smolvlm_gguf.ember")
        ember.run("convert", "--gguf", text, "--mmproj", mmproj, "-o", path)
        ember.run("image", "-m", path, "--image", png, "--embeds-out", rows_out)
        rows = np.load(rows_out)
        report.check("smolvlm: --gguf --mmproj rows equal --hf's bit for bit" +
                     (" (fc1 named ffn_down)" if legacy else ""),
                     rows.shape == hf_rows.shape and (rows == hf_rows).all(),
                     f"(shape {rows.shape} vs {hf_rows.shape})")
    logits_out, ids_out = ember.path("gguf_logits.npy"), ember.path("gguf_tokens.txt")
    ember.run("logits", "-m", path, "--image", png, "-p", PROMPT, "--all", "-o", logits_out,
              "--tokens-out", ids_out)
    with open(ids_out) as f:
        got_ids = [int(t) for t in f.read().split()]
    report.check(f"smolvlm: --gguf --mmproj gives Idefics3Processor's {len(want_ids)} tokens",
                 got_ids == want_ids, "")
    report.compare(f"smolvlm: --gguf --mmproj f32 logits after an image prompt at all "
                   f"{len(want_ids)} positions", np.load(logits_out), want_logits,
                   fam.ABS_TOL * max(1.0, abs(want_logits).max()), fam.REL_TOL)


# --- the test ------------------------------------------------------------------------------

def main():
    args, torch, np, ember, report = fam.begin("smolvlm", __doc__)
    u.require_model_file(args, "gpt2-bpe/encoder.json")
    _, Image = image_oracle.load_numpy_pil()
    vocab, merges, eot = gpt2_oracle.truncated_gpt2_vocab(args.models)
    added = added_tokens(len(vocab))
    text = {"model_type": "llama", "vocab_size": VOCAB, "hidden_size": 64,
            "intermediate_size": 96, "num_hidden_layers": 2, "num_attention_heads": 4,
            "num_key_value_heads": 2, "max_position_embeddings": 512, "rms_norm_eps": 1e-5,
            "rope_theta": 100000.0, "hidden_act": "silu", "tie_word_embeddings": False}
    config = {"model_type": "smolvlm", "architectures": ["SmolVLMForConditionalGeneration"],
              "text_config": text,
              "vision_config": {"model_type": "smolvlm_vision", "hidden_size": WIDTH,
                                "intermediate_size": FFN, "num_hidden_layers": LAYERS,
                                "num_attention_heads": HEADS, "image_size": TILE,
                                "patch_size": PATCH},
              "scale_factor": SCALE, "image_token_id": added[IMAGE],
              "tie_word_embeddings": False, "eos_token_id": added[END],
              "torch_dtype": "float32"}
    c = ref.resolve(torch, text)
    torch.manual_seed(17)
    model = ref.modules(torch)(c).double().eval()
    fam.randomize(torch, model, "F32")
    vision = vision_weights(np, text["hidden_size"])

    def write(name, hf):
        directory = os.path.join(ember.dir, name)
        fam.save(directory, hf, model, "F32",
                 rename=lambda k: k.replace("model.", "model.text_model.", 1), extra=vision)
        write_tokenizer(directory, vocab, merges, eot, added)
        with open(os.path.join(directory, "preprocessor_config.json"), "w") as f:
            json.dump(PROCESSOR, f)
        with open(os.path.join(directory, "processor_config.json"), "w") as f:
            json.dump({"image_seq_len": ROWS_PER_TILE, "processor_class": "SmolVLMProcessor"},
                      f)
        return directory

    directory = write("smolvlm", config)
    tokens = torch.randint(0, len(vocab), (70,)).tolist()
    path = fam.check(torch, report, ember, "smolvlm", directory, model, c, tokens, [],
                     dtypes=(), extra_kinds={"vision": sum(v.size for v in vision.values())})
    shown = ember.run("inspect", "-m", path)
    lines = "\n".join(l for l in shown.splitlines() if l.startswith(" ") or "vision" in l)
    report.check("smolvlm: ember inspect shows the tower, the shuffle and the tiled prompt",
                 f"siglip tower: {LAYERS} layers, d_model {WIDTH}, {HEADS} heads" in shown and
                 f"pixel shuffle {SCALE} x {SCALE}: {ROWS_PER_TILE} image tokens (id "
                 f"{added[IMAGE]}) per tile" in shown and
                 f"processor: longest edge {3 * TILE}, tiles of {TILE} and a global view "
                 "(lanczos)" in shown and
                 '"<image>" becomes, per tile, "<fake_token_around_image>"' in shown,
                 f"\n{lines}")

    # A 150 x 90 picture: the longest edge to 192 (192 x 116), then 192 x 128, cut into
    # 2 x 3 tiles of 64, and the global view.
    rng = np.random.default_rng(9)
    yy, xx = np.mgrid[0:90, 0:150]
    rgb = ((np.stack([xx * 255 // 149, yy * 255 // 89, (xx + yy) % 256], -1) +
            rng.integers(0, 48, (90, 150, 3))) % 256).astype(np.uint8)
    png = ember.path("picture.png")
    Image.fromarray(rgb, "RGB").save(png)
    tiles, grid_rows, grid_cols = image_oracle.idefics3(
        np, Image, image_oracle.pillow_rgb(np, Image, png, True), PROCESSOR)
    pixels = np.stack(tiles)
    out_pixels, out_rows = ember.path("pixels.npy"), ember.path("embeds.npy")
    ember.run("image", "-m", path, "--image", png, "--out", out_pixels, "--embeds-out",
              out_rows)
    got_pixels = np.load(out_pixels)
    report.check(f"smolvlm: ember image -m's pixels are the processor's ({grid_rows} x "
                 f"{grid_cols} tiles and the global view)",
                 got_pixels.shape == pixels.shape and (got_pixels == pixels).all(),
                 f"(shape {got_pixels.shape} vs {pixels.shape})")
    with torch.no_grad():
        rows = tower_rows(torch, vision, pixels)
        plain = tower_rows(torch, vision, pixels, plain=True)
    want = rows.numpy()
    got = np.load(out_rows)
    scale = max(1.0, float(np.abs(want).max()))
    report.compare(f"smolvlm: ember image -m's rows equal the float64 tower, shuffle and "
                   f"projection ({len(tiles)} tiles of {ROWS_PER_TILE} rows)", got, want,
                   1e-4 * scale, 1e-4)
    err = float(np.abs(got - plain.numpy()).max()) if got.shape == want.shape else 0.0
    report.check("smolvlm: a pixel shuffle without its transposes gives other rows",
                 err > 100 * 1e-4 * scale, f"(max abs difference {err:.2e})")

    expanded = expand(PROMPT, [(grid_rows, grid_cols)])
    want_ids = encode(expanded, vocab, merges, added)
    report.check("smolvlm: the expansion holds one image token per row",
                 want_ids.count(added[IMAGE]) == len(want), "")
    logits_out, ids_out = ember.path("image_logits.npy"), ember.path("image_tokens.txt")
    for threads in (1, 2):
        ember.run("logits", "-m", path, "--image", png, "-p", PROMPT, "--all", "-o",
                  logits_out, "--tokens-out", ids_out, "-t", threads)
        with open(ids_out) as f:
            got_ids = [int(t) for t in f.read().split()]
        first = next((i for i, (a, b) in enumerate(zip(got_ids, want_ids)) if a != b),
                     min(len(got_ids), len(want_ids)))
        report.check(f"smolvlm: the prompt's {len(want_ids)} tokens are Idefics3Processor's "
                     f"({threads} thread(s))", got_ids == want_ids,
                     "" if got_ids == want_ids else
                     f"(first difference at {first}: {got_ids[first:first + 8]} vs "
                     f"{want_ids[first:first + 8]})")
        with torch.no_grad():
            want_logits = model(torch.tensor([want_ids]), added[IMAGE], rows,
                                image_blocks=False)[0].numpy()
        logits = np.load(logits_out)
        report.compare(f"smolvlm: f32 logits after an image prompt at all {len(want_ids)} "
                       f"positions, {threads} thread(s)", logits, want_logits,
                       fam.ABS_TOL * max(1.0, abs(want_logits).max()), fam.REL_TOL)
    check_gguf_pair(torch, np, ember, report, (model, c, vocab, merges, eot, added, vision),
                    png, got, want_ids, want_logits)
    with torch.no_grad():
        blocks = model(torch.tensor([want_ids]), added[IMAGE], rows)[0].numpy()
    err = float(np.abs(logits - blocks).max()) if logits.shape == blocks.shape else 0.0
    report.check("smolvlm: image rows attending both ways (Gemma 3's blocks) give other "
                 "logits", err > 100 * fam.ABS_TOL * max(1.0, abs(blocks).max()),
                 f"(max abs difference {err:.2e})")

    # model_type idefics3 (its vision_config's model_type left to the default).
    idefics3 = dict(config, model_type="idefics3",
                    architectures=["Idefics3ForConditionalGeneration"],
                    vision_config={k: v for k, v in config["vision_config"].items()
                                   if k != "model_type"})
    other = ember.convert(write("idefics3", idefics3), "idefics3")
    ember.run("image", "-m", other, "--image", png, "--embeds-out", out_rows)
    same = np.load(out_rows)
    report.check("idefics3: the same files as model_type idefics3 give the same rows",
                 same.shape == got.shape and (same == got).all(), "")
    report.finish(ember)


if __name__ == "__main__":
    main()
