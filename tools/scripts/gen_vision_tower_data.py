#!/usr/bin/python3
"""Writes runtime/vision/vision_tower_test_data.h: PyTorch's answers for a small
SigLIP-style vision tower and the two connectors that follow it.

  /usr/bin/python3 tools/scripts/gen_vision_tower_data.py
  clang-format-14 -i runtime/vision/vision_tower_test_data.h

Run with Debian's python3-torch (/usr/bin/python3). Weights and pixels are seeded random
multiples of 1/256 (exact in float, asserted); the oracle runs in float64:
  - patch embedding: F.conv2d(stride = kernel = patch) with bias,
    flatten(2).transpose(1, 2), plus the position embedding;
  - kLayers pre-LayerNorm encoder layers: bidirectional multi-head attention (no mask),
    out_proj, residual; LayerNorm, fc1, gelu (tanh), fc2, residual;
  - post_layernorm -> kHidden;
  - connector A (Idefics3): the pixel_shuffle view/permute chain, then a Linear
    without bias -> kShuffleOut;
  - connector B (Gemma3): avg_pool2d on the (dim, side, side) grid, Gemma RMSNorm
    (x * rsqrt(mean(x^2) + eps) * (1 + w)), then x @ W with W (dim, text) -> kPoolOut.
The expected outputs are float64 results printed with %.9g (not exact in float).
The script also checks the closed form of the pixel shuffle against the chain, the conv
against unfold-then-matmul, the attention against nn.MultiheadAttention and the gelu
formula against F.gelu(approximate="tanh").
"""

import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_vision_connector_data import pixel_shuffle_chain, pixel_shuffle_closed  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "runtime", "vision", "vision_tower_test_data.h")

DIM, HEADS, FFN, LAYERS, IMAGE, PATCH, FACTOR, TEXT = 16, 2, 24, 2, 16, 4, 2, 24
HEAD_DIM = DIM // HEADS
SIDE = IMAGE // PATCH  # 4 patches a side
PATCHES = SIDE * SIDE  # 16
TOKENS = PATCHES // (FACTOR * FACTOR)  # 4
LN_EPS = 1e-6
RMS_EPS = 1e-6


class Seeds:
    def __init__(self, seed):
        self.seed = seed

    def ints(self, low, high, *shape, offset=0.0):
        g = torch.Generator().manual_seed(self.seed)
        self.seed += 1
        return offset + torch.randint(low, high, shape, generator=g,
                                      dtype=torch.int64).double() / 256


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def attention(h, p):
    # Bidirectional multi-head attention on (seq, dim) rows.
    seq = h.shape[0]
    q = F.linear(h, p["attn_q.weight"], p["attn_q.bias"])
    k = F.linear(h, p["attn_k.weight"], p["attn_k.bias"])
    v = F.linear(h, p["attn_v.weight"], p["attn_v.bias"])
    q, k, v = (t.view(seq, HEADS, HEAD_DIM).transpose(0, 1) for t in (q, k, v))
    scores = q @ k.transpose(1, 2) / math.sqrt(HEAD_DIM)
    out = torch.softmax(scores, dim=-1) @ v  # (heads, seq, head_dim)
    out = out.transpose(0, 1).reshape(seq, DIM)
    return F.linear(out, p["attn_output.weight"], p["attn_output.bias"])


def check_attention(h, p, ours):
    mha = torch.nn.MultiheadAttention(DIM, HEADS, bias=True, batch_first=True).double()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat(
            [p["attn_q.weight"], p["attn_k.weight"], p["attn_v.weight"]]))
        mha.in_proj_bias.copy_(torch.cat(
            [p["attn_q.bias"], p["attn_k.bias"], p["attn_v.bias"]]))
        mha.out_proj.weight.copy_(p["attn_output.weight"])
        mha.out_proj.bias.copy_(p["attn_output.bias"])
        theirs = mha(h[None], h[None], h[None], need_weights=False)[0][0]
    if not torch.allclose(ours, theirs, rtol=0, atol=1e-12):
        sys.exit("attention disagrees with nn.MultiheadAttention")


def fmt(values, exact):
    out = []
    for v in values:
        f = float(v)
        if exact:
            assert float(torch.tensor(f, dtype=torch.float32).item()) == f, f
        s = "%.9g" % f
        out.append(s + "f" if ("." in s or "e" in s) else s + ".0f")
    return out


def array(name, tensor, lines, exact=True):
    items = fmt(tensor.reshape(-1).tolist(), exact)
    lines.append("const float %s[] = {" % name)
    row = "   "
    for item in items:
        if len(row) + 1 + len(item) + 1 > 90:
            lines.append(row)
            row = "   "
        row += " " + item + ","
    lines.append(row)
    lines.append("};")


def ident(name):
    # "v.blk.0.attn_q.weight" -> "kVBlk0AttnQWeight".
    parts = name.replace("_", ".").split(".")
    return "k" + "".join(part[:1].upper() + part[1:] for part in parts)


def named(table, entries, lines):
    lines.append("const NamedTensor %s[] = {" % table)
    for name, tensor in entries:
        rows, cols = (tensor.shape[0], 0) if tensor.dim() == 1 else tuple(tensor.shape)
        lines.append('    {"%s", %d, %d, %s},' % (name, rows, cols, ident(name)))
    lines.append("};")


def main():
    torch.set_grad_enabled(False)
    s = Seeds(1234)

    def weight(*shape):
        return s.ints(-64, 64, *shape)

    def bias(*shape):
        return s.ints(-32, 32, *shape)

    def norm(*shape):
        return s.ints(-16, 16, *shape, offset=1.0)

    pixels = s.ints(-256, 256, 3, IMAGE, IMAGE)
    conv_w = weight(DIM, 3, PATCH, PATCH)
    conv_b = bias(DIM)
    pos = s.ints(-128, 128, PATCHES, DIM)
    tower = [("v.patch_embd.weight", conv_w.reshape(DIM, -1)),
             ("v.patch_embd.bias", conv_b),
             ("v.position_embd.weight", pos)]
    layers = []
    for i in range(LAYERS):
        p = {}
        p["attn_norm.weight"], p["attn_norm.bias"] = norm(DIM), bias(DIM)
        for proj in ("attn_q", "attn_k", "attn_v", "attn_output"):
            p[proj + ".weight"], p[proj + ".bias"] = weight(DIM, DIM), bias(DIM)
        p["ffn_norm.weight"], p["ffn_norm.bias"] = norm(DIM), bias(DIM)
        p["ffn_up.weight"], p["ffn_up.bias"] = weight(FFN, DIM), bias(FFN)
        p["ffn_down.weight"], p["ffn_down.bias"] = weight(DIM, FFN), bias(DIM)
        layers.append(p)
        tower += [("v.blk.%d.%s" % (i, key), value) for key, value in p.items()]
    post_w, post_b = norm(DIM), bias(DIM)
    tower += [("v.output_norm.weight", post_w), ("v.output_norm.bias", post_b)]
    fc = weight(TEXT, DIM * FACTOR * FACTOR)
    soft_w = bias(DIM)  # the Gemma RMSNorm weight w; the model scales by 1 + w
    proj_w = weight(DIM, TEXT)  # mm_input_projection_weight: x @ W

    # Patch embedding.
    conv = F.conv2d(pixels[None], conv_w, conv_b, stride=PATCH).flatten(2).transpose(1, 2)[0]
    patches = F.unfold(pixels[None], PATCH, stride=PATCH)[0].transpose(0, 1)
    if not torch.allclose(patches @ conv_w.view(DIM, -1).t() + conv_b, conv,
                          rtol=0, atol=1e-12):
        sys.exit("conv2d disagrees with unfold-then-matmul")
    x = conv + pos

    # Encoder layers.
    for p in layers:
        h = F.layer_norm(x, (DIM,), p["attn_norm.weight"], p["attn_norm.bias"], LN_EPS)
        attn = attention(h, p)
        check_attention(h, p, attn)
        x = x + attn
        h = F.layer_norm(x, (DIM,), p["ffn_norm.weight"], p["ffn_norm.bias"], LN_EPS)
        up = F.linear(h, p["ffn_up.weight"], p["ffn_up.bias"])
        if not torch.allclose(gelu_tanh(up), F.gelu(up, approximate="tanh"),
                              rtol=0, atol=1e-12):
            sys.exit("gelu formula disagrees with F.gelu(approximate='tanh')")
        x = x + F.linear(gelu_tanh(up), p["ffn_down.weight"], p["ffn_down.bias"])
    hidden = F.layer_norm(x, (DIM,), post_w, post_b, LN_EPS)

    # Connector A: pixel shuffle, then a Linear without bias.
    shuffled = pixel_shuffle_chain(hidden[None], FACTOR)[0]
    if not torch.equal(shuffled, pixel_shuffle_closed(hidden, SIDE, DIM, FACTOR)):
        sys.exit("pixel_shuffle: the closed form disagrees with the chain")
    shuffle_out = F.linear(shuffled, fc)

    # Connector B: average pool, Gemma RMSNorm, x @ W.
    grid = hidden.t().reshape(1, DIM, SIDE, SIDE)
    pooled = F.avg_pool2d(grid, kernel_size=FACTOR, stride=FACTOR).flatten(2)[0].t()
    normed = pooled * torch.rsqrt(pooled.pow(2).mean(-1, keepdim=True) + RMS_EPS)
    normed = normed * (1 + soft_w)
    pool_out = normed @ proj_w
    assert shuffle_out.shape == (TOKENS, TEXT) and pool_out.shape == (TOKENS, TEXT)

    shuffle_conn = [("mm.model.fc.weight", fc)]
    pool_conn = [("mm.soft_emb_norm.weight", 1 + soft_w),
                 ("mm.input_projection.weight", proj_w.t().contiguous())]

    lines = []
    array("kPixels", pixels, lines)
    for name, tensor in tower + shuffle_conn + pool_conn:
        array(ident(name), tensor, lines)
    lines.append("")
    lines.append("// Expected outputs (float64 oracle, not exact in float).")
    array("kHidden", hidden, lines, exact=False)
    array("kShuffleOut", shuffle_out, lines, exact=False)
    array("kPoolOut", pool_out, lines, exact=False)
    lines.append("")
    named("kTower", tower, lines)
    named("kShuffleConnector", shuffle_conn, lines)
    named("kPoolConnector", pool_conn, lines)

    head = [
        "// Generated by tools/scripts/gen_vision_tower_data.py with PyTorch %s"
        " (float64" % torch.__version__,
        "// oracle, weights and pixels exact in float); do not edit. A SigLIP-style vision",
        "// tower (pre-LN, bidirectional attention, gelu tanh) and its two connectors:",
        "// Idefics3 pixel shuffle + Linear, Gemma3 average pool + RMSNorm + projection.",
        "#ifndef EMBER_RUNTIME_VISION_VISION_TOWER_TEST_DATA_H_",
        "#define EMBER_RUNTIME_VISION_VISION_TOWER_TEST_DATA_H_",
        "",
        "#include <cstddef>",
        "",
        "namespace ember::tower_oracle {",
        "",
        "constexpr size_t kDim = %d, kHeads = %d, kFfn = %d, kLayers = %d, kImage = %d,"
        " kPatch = %d," % (DIM, HEADS, FFN, LAYERS, IMAGE, PATCH),
        "                 kFactor = %d, kTextDim = %d;" % (FACTOR, TEXT),
        "",
        "// LayerNorm eps %g; RMSNorm eps %g. kPixels (3, kImage, kImage) planar; kHidden"
        % (LN_EPS, RMS_EPS),
        "// (patches, kDim) after post_layernorm; kShuffleOut and kPoolOut (tokens,"
        " kTextDim).",
        "// mm.soft_emb_norm.weight is stored as 1 + w; mm.input_projection.weight is",
        "// (kTextDim, kDim), the transpose of HF's mm_input_projection_weight.",
        "// cols 0: a vector.",
        "struct NamedTensor {",
        "  const char* name;",
        "  size_t rows;",
        "  size_t cols;",
        "  const float* values;",
        "};",
        "",
    ]
    tail = [
        "",
        "}  // namespace ember::tower_oracle",
        "",
        "#endif  // EMBER_RUNTIME_VISION_VISION_TOWER_TEST_DATA_H_",
    ]
    with open(OUT, "w") as f:
        f.write("\n".join(head + lines + tail) + "\n")
    print("wrote", OUT)
    for name, t in (("kHidden", hidden), ("kShuffleOut", shuffle_out),
                    ("kPoolOut", pool_out)):
        print("%s max abs %.6g" % (name, t.abs().max().item()))


if __name__ == "__main__":
    main()
