// aarch64 sdot and smmla kernels for q8/q4 panels (quant_layout.h), behind HWCAP checks.
//
// Only these functions are compiled for armv8.2-a+dotprod (+i8mm for smmla: a target
// attribute; GCC 12's arm_neon.h needs the arch string, "+dotprod" alone fails to inline
// vdotq_laneq_s32), and they run only where the kernel reports HWCAP_ASIMDDP (and
// HWCAP2_I8MM; every such CPU is armv8.2 or later).
// A chunk is 16 rows x 4 inputs; 16 of its bytes (4 rows) times the group's 4 inputs
// 4c..4c+3 is one sdot by element: lane c % 4 of the activation vector c / 4.
//   q8: stored q + 128, so byte ^ 0x80 is q as a signed byte: the dot is exact directly.
//   q4: nibbles q + 8 are 0..15, valid signed bytes: subtract 8 * sum(xq) per group.
// The float part is that of quant-inl.h: acc = fma(float(dot), wscale * xscale, acc) per
// group in order, so decode and prefill rows are bitwise identical.
// Prefill tiles keep their sums in the 32 registers: sixteen tokens x a quarter panel
// (QuarterPanelTokens), four x half a panel (HalfPanelQuad, HalfPanelQuadMmla), then
// two and one x a whole panel. Whole panels two tokens at a time spilled: 5.0 (sdot q8)
// and 5.6 (smmla q8) multiply-adds per instruction in the loop against 7.1 to 7.3 now
// (docs/benchmarks.md, "Arm: instructions per token").
#include "kernels/arm/dotprod_arm.h"

#if defined(__aarch64__) && defined(__linux__)
#include <arm_neon.h>
#include <sys/auxv.h>

#include <cstring>
#include <initializer_list>

#include "kernels/arm/dotprod_arm_util.h"
#include "kernels/quant_layout.h"
#endif

namespace ember::kernels {

#if defined(__aarch64__) && defined(__linux__) && defined(HWCAP_ASIMDDP)
namespace {

using dotprod::DotChunk;
using dotprod::HalfRows;
using dotprod::Halves;

EMBER_DOTPROD inline void LoadQ8(const uint8_t* chunk, int8x16_t (&w)[4]) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  for (int q = 0; q < 4; ++q) {
    w[q] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(chunk + 16 * q), flip));
  }
}

// The int32 dots of one panel's group (16 rows) with kB tokens' 32 activations each
// (token b at xg + b * padded); each weight load feeds all kB tokens.
template <QuantKind kKind, int kB>
EMBER_DOTPROD inline void GroupDots(const uint8_t* values, const int8_t* xg, size_t padded,
                                    const int32_t* xsum, size_t groups,
                                    int32x4_t (&dot)[kB][4]) {
  int8x16_t x0[kB], x1[kB];
  for (int b = 0; b < kB; ++b) {
    x0[b] = vld1q_s8(xg + b * padded);
    x1[b] = vld1q_s8(xg + b * padded + 16);
    const int32x4_t start = vdupq_n_s32(kKind == QuantKind::kQ8 ? 0 : -8 * xsum[b * groups]);
    for (int q = 0; q < 4; ++q) dot[b][q] = start;
  }
  int8x16_t w[4];
  if (kKind == QuantKind::kQ8) {
    LoadQ8(values + 0 * kQuantChunkBytes, w), DotChunk<0, kB>(dot, w, x0);
    LoadQ8(values + 1 * kQuantChunkBytes, w), DotChunk<1, kB>(dot, w, x0);
    LoadQ8(values + 2 * kQuantChunkBytes, w), DotChunk<2, kB>(dot, w, x0);
    LoadQ8(values + 3 * kQuantChunkBytes, w), DotChunk<3, kB>(dot, w, x0);
    LoadQ8(values + 4 * kQuantChunkBytes, w), DotChunk<0, kB>(dot, w, x1);
    LoadQ8(values + 5 * kQuantChunkBytes, w), DotChunk<1, kB>(dot, w, x1);
    LoadQ8(values + 6 * kQuantChunkBytes, w), DotChunk<2, kB>(dot, w, x1);
    LoadQ8(values + 7 * kQuantChunkBytes, w), DotChunk<3, kB>(dot, w, x1);
  } else {
    // Block j: chunk j in the low nibbles (x0 lane j), chunk j + 4 in the high (x1 lane j).
    const uint8x16_t low = vdupq_n_u8(0x0F);
    int8x16_t hi[4];
    for (int j = 0; j < 4; ++j) {
      for (int q = 0; q < 4; ++q) {
        const uint8x16_t raw = vld1q_u8(values + j * kQuantChunkBytes + 16 * q);
        w[q] = vreinterpretq_s8_u8(vandq_u8(raw, low));
        hi[q] = vreinterpretq_s8_u8(vshrq_n_u8(raw, 4));
      }
      switch (j) {
        case 0: DotChunk<0, kB>(dot, w, x0), DotChunk<0, kB>(dot, hi, x1); break;
        case 1: DotChunk<1, kB>(dot, w, x0), DotChunk<1, kB>(dot, hi, x1); break;
        case 2: DotChunk<2, kB>(dot, w, x0), DotChunk<2, kB>(dot, hi, x1); break;
        default: DotChunk<3, kB>(dot, w, x0), DotChunk<3, kB>(dot, hi, x1); break;
      }
    }
  }
}

// One panel times kB tokens: y[b * y_stride + row0 + r] for rows below `rows`.
template <QuantKind kKind, int kB>
EMBER_DOTPROD void PanelTokens(const uint8_t* panel, size_t groups, const int8_t* xq,
                               size_t padded, const float* xscales, const int32_t* xsums,
                               float* y, size_t y_stride, size_t row0, size_t rows) {
  float32x4_t acc[kB][4];
  for (int b = 0; b < kB; ++b) {
    for (int q = 0; q < 4; ++q) acc[b][q] = vdupq_n_f32(0.0f);
  }
  for (size_t g = 0; g < groups; ++g) {
    const uint8_t* values = panel + g * QuantGroupBytes(kKind);
    const uint16_t* scale_bits =
        reinterpret_cast<const uint16_t*>(values + QuantGroupValueBytes(kKind));
    float32x4_t ws[4];
    for (int q = 0; q < 4; ++q) {
      ws[q] = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(scale_bits + 4 * q)));
    }
    int32x4_t dot[kB][4];
    GroupDots<kKind, kB>(values, xq + g * kQuantGroup, padded, xsums + g, groups, dot);
    for (int b = 0; b < kB; ++b) {
      const float32x4_t xs = vdupq_n_f32(xscales[b * groups + g]);
      for (int q = 0; q < 4; ++q) {
        acc[b][q] = vfmaq_f32(acc[b][q], vcvtq_f32_s32(dot[b][q]), vmulq_f32(ws[q], xs));
      }
    }
  }
  for (int b = 0; b < kB; ++b) {
    float* out = y + b * y_stride + row0;
    const size_t n = rows - row0 < kQuantPanelRows ? rows - row0 : kQuantPanelRows;
    if (n == kQuantPanelRows) {
      for (int q = 0; q < 4; ++q) vst1q_f32(out + 4 * q, acc[b][q]);
    } else {
      float buf[kQuantPanelRows];
      for (int q = 0; q < 4; ++q) vst1q_f32(buf + 4 * q, acc[b][q]);
      for (size_t r = 0; r < n; ++r) out[r] = buf[r];
    }
  }
}

// ------------------------------ sdot prefill: half a panel (8 rows) x 4 tokens
//
// Each weight vector feeds four tokens' sdots and each activation vector eight rows.
// The tile's int32 dots (8 vectors), float sums (8) and four tokens' activations, 16
// inputs at a time (4), fit the 32 registers with the weights; a whole panel x 4 tokens
// would need 32 for the dots and sums alone and spill. Half h holds quarters 2h, 2h + 1
// of every chunk (bytes 32h .. 32h + 31) and scales 8h .. 8h + 7: rows 8h .. 8h + 7 of
// the panel. The tile functions stay out of line, so that the registers are theirs.

// dot[b][z] (rows 4z .. 4z + 3 of the half) += w[z] . lane kLane of token b's xv[b].
// The empty asm keeps the compiler from hoisting the next chunk's loads above these
// sdots: GCC 12 otherwise loads a whole group's weights first and spills the sums.
template <int kLane>
EMBER_DOTPROD inline void HalfChunk(int32x4_t (&dot)[4][2], int8x16_t w0, int8x16_t w1,
                                    const int8x16_t (&xv)[4]) {
  for (int b = 0; b < 4; ++b) {
    dot[b][0] = vdotq_laneq_s32(dot[b][0], w0, xv[b], kLane);
    dot[b][1] = vdotq_laneq_s32(dot[b][1], w1, xv[b], kLane);
  }
  asm volatile("" ::: "memory");
}

// q8 chunk c's half (stored q + 128: ^ 0x80 is q) times lane c % 4 of xv.
template <int kLane>
EMBER_DOTPROD inline void HalfChunkQ8(const uint8_t* chunk, int32x4_t (&dot)[4][2],
                                      const int8x16_t (&xv)[4]) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  HalfChunk<kLane>(dot, vreinterpretq_s8_u8(veorq_u8(vld1q_u8(chunk), flip)),
                   vreinterpretq_s8_u8(veorq_u8(vld1q_u8(chunk + 16), flip)), xv);
}

// q4 block j's half, one nibble (kHigh: chunk j + 4, else chunk j) times lane j of xv.
template <int kLane, bool kHigh>
EMBER_DOTPROD inline void HalfBlockQ4(const uint8_t* block, int32x4_t (&dot)[4][2],
                                      const int8x16_t (&xv)[4]) {
  const uint8x16_t raw0 = vld1q_u8(block), raw1 = vld1q_u8(block + 16);
  if (kHigh) {
    HalfChunk<kLane>(dot, vreinterpretq_s8_u8(vshrq_n_u8(raw0, 4)),
                     vreinterpretq_s8_u8(vshrq_n_u8(raw1, 4)), xv);
  } else {
    const uint8x16_t low = vdupq_n_u8(0x0F);
    HalfChunk<kLane>(dot, vreinterpretq_s8_u8(vandq_u8(raw0, low)),
                     vreinterpretq_s8_u8(vandq_u8(raw1, low)), xv);
  }
}

// The four chunks of one 16-input half of a group (kHigh: inputs 16-31) times xv.
template <QuantKind kKind, bool kHigh>
EMBER_DOTPROD inline void HalfInputs(const uint8_t* values, int32x4_t (&dot)[4][2],
                                     const int8x16_t (&xv)[4]) {
  if (kKind == QuantKind::kQ8) {
    const uint8_t* chunks = values + (kHigh ? 4 : 0) * kQuantChunkBytes;
    HalfChunkQ8<0>(chunks + 0 * kQuantChunkBytes, dot, xv);
    HalfChunkQ8<1>(chunks + 1 * kQuantChunkBytes, dot, xv);
    HalfChunkQ8<2>(chunks + 2 * kQuantChunkBytes, dot, xv);
    HalfChunkQ8<3>(chunks + 3 * kQuantChunkBytes, dot, xv);
  } else {
    HalfBlockQ4<0, kHigh>(values + 0 * kQuantChunkBytes, dot, xv);
    HalfBlockQ4<1, kHigh>(values + 1 * kQuantChunkBytes, dot, xv);
    HalfBlockQ4<2, kHigh>(values + 2 * kQuantChunkBytes, dot, xv);
    HalfBlockQ4<3, kHigh>(values + 3 * kQuantChunkBytes, dot, xv);
  }
}

// Rows 8 * half .. + n - 1 of one panel times 4 tokens (token b at xq + b * padded):
// y[b * y_stride + r], r from the half's first row, with the float steps of
// PanelTokens per row and token (so rows are bitwise those of decode).
template <QuantKind kKind>
EMBER_DOTPROD __attribute__((noinline)) void HalfPanelQuad(
    const uint8_t* panel, size_t groups, size_t half, const int8_t* xq, size_t padded,
    const float* xscales, const int32_t* xsums, float* y, size_t y_stride, size_t n) {
  float32x4_t acc0[4], acc1[4];  // rows 0-3 and 4-7 of the half, per token
  for (int b = 0; b < 4; ++b) acc0[b] = acc1[b] = vdupq_n_f32(0.0f);
  for (size_t g = 0; g < groups; ++g) {
    const uint8_t* group = panel + g * QuantGroupBytes(kKind);
    const uint8_t* values = group + 32 * half;
    const int8_t* xg = xq + g * kQuantGroup;
    // Inputs 0-15 of each token, then 16-31 (q4 reads its blocks twice, a nibble at
    // a time).
    int8x16_t xv[4];
    int32x4_t dot[4][2];
    for (int b = 0; b < 4; ++b) {
      xv[b] = vld1q_s8(xg + b * padded);
      dot[b][0] = dot[b][1] =
          vdupq_n_s32(kKind == QuantKind::kQ8 ? 0 : -8 * xsums[b * groups + g]);
    }
    HalfInputs<kKind, false>(values, dot, xv);
    for (int b = 0; b < 4; ++b) xv[b] = vld1q_s8(xg + b * padded + 16);
    HalfInputs<kKind, true>(values, dot, xv);
    const uint16x8_t bits =
        vld1q_u16(reinterpret_cast<const uint16_t*>(group + QuantGroupValueBytes(kKind)) +
                  8 * half);
    const float32x4_t ws[2] = {vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(bits))),
                               vcvt_high_f32_f16(vreinterpretq_f16_u16(bits))};
    for (int b = 0; b < 4; ++b) {
      const float32x4_t xs = vdupq_n_f32(xscales[b * groups + g]);
      acc0[b] = vfmaq_f32(acc0[b], vcvtq_f32_s32(dot[b][0]), vmulq_f32(ws[0], xs));
      acc1[b] = vfmaq_f32(acc1[b], vcvtq_f32_s32(dot[b][1]), vmulq_f32(ws[1], xs));
    }
  }
  float buf[4][8];
  for (int b = 0; b < 4; ++b) {
    vst1q_f32(buf[b], acc0[b]);
    vst1q_f32(buf[b] + 4, acc1[b]);
  }
  for (int b = 0; b < 4; ++b) memcpy(y + b * y_stride, buf[b], n * sizeof(float));
}

// ------------------------------ sdot prefill: a quarter panel (4 rows) x kT tokens
//
// Weight-stationary: a quarter's 32 inputs of a group, 8 vectors of 4 rows x 4 inputs
// made signed once (q8 ^ 0x80, q4 nibble - 8: no activation sums), feed kT tokens'
// 8 sdots each, so unpacking and flipping are shared by kT tokens (HalfPanelQuad's by 4).
// A token's dot is one register, its float sums one; kT of them fit beside the weights.
template <QuantKind kKind, int kT>
EMBER_DOTPROD __attribute__((noinline)) void QuarterPanelTokens(
    const uint8_t* panel, size_t groups, size_t quarter, const int8_t* xq, size_t padded,
    const float* xscales, float* y, size_t y_stride, size_t n) {
  float32x4_t acc[kT];
#pragma GCC unroll 16
  for (int t = 0; t < kT; ++t) acc[t] = vdupq_n_f32(0.0f);
  for (size_t g = 0; g < groups; ++g) {
    const uint8_t* group = panel + g * QuantGroupBytes(kKind);
    const uint8_t* values = group + 16 * quarter;
    int8x16_t w[8];  // chunk c: inputs 4c .. 4c + 3 of the quarter's rows
    if (kKind == QuantKind::kQ8) {
      for (int c = 0; c < 8; ++c) {
        w[c] = vreinterpretq_s8_u8(
            veorq_u8(vld1q_u8(values + c * kQuantChunkBytes), vdupq_n_u8(0x80)));
      }
    } else {
      for (int j = 0; j < 4; ++j) {
        const uint8x16_t raw = vld1q_u8(values + j * kQuantChunkBytes);
        w[j] =
            vsubq_s8(vreinterpretq_s8_u8(vandq_u8(raw, vdupq_n_u8(0x0F))), vdupq_n_s8(8));
        w[j + 4] = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(raw, 4)), vdupq_n_s8(8));
      }
    }
    const float32x4_t ws = vcvt_f32_f16(vreinterpret_f16_u16(
        vld1_u16(reinterpret_cast<const uint16_t*>(group + QuantGroupValueBytes(kKind)) +
                 4 * quarter)));
    const int8_t* x = xq + g * kQuantGroup;
#pragma GCC unroll 16  // acc[t] with constant t stays in its register
    for (int t = 0; t < kT; ++t, x += padded) {
      const int32x4_t dot = dotprod::QuarterDot<4>(
          dotprod::QuarterDot<0>(vdupq_n_s32(0), w, vld1q_s8(x)), w, vld1q_s8(x + 16));
      const float32x4_t xs = vdupq_n_f32(xscales[t * groups + g]);
      acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(dot), vmulq_f32(ws, xs));
      asm volatile("" ::: "memory");  // the next token's loads stay below (HalfChunk)
    }
  }
  float buf[kT][4];
#pragma GCC unroll 16
  for (int t = 0; t < kT; ++t) vst1q_f32(buf[t], acc[t]);
  for (int t = 0; t < kT; ++t) memcpy(y + t * y_stride, buf[t], n * sizeof(float));
}

// The panel at row0 times tokens [0, b) by quarter tiles, kQuarterTokens at a time; b.
inline constexpr int kQuarterTokens = 16;
template <QuantKind kKind>
EMBER_DOTPROD size_t QuarterTiles(const uint8_t* panel, size_t groups, size_t row0,
                                  size_t rows, const int8_t* xq, size_t padded,
                                  const float* xscales, size_t batch, float* y,
                                  size_t y_stride) {
  size_t b = 0;
  for (; b + kQuarterTokens <= batch; b += kQuarterTokens) {
    for (size_t q = 0; q < 4 && row0 + 4 * q < rows; ++q) {
      const size_t left = rows - row0 - 4 * q;
      QuarterPanelTokens<kKind, kQuarterTokens>(
          panel, groups, q, xq + b * padded, padded, xscales + b * groups,
          y + b * y_stride + row0 + 4 * q, y_stride, left < 4 ? left : 4);
    }
  }
  return b;
}

// The MatMulQuantFn: per panel, kQuarterTokens tokens at a time by quarter panels,
// then four by half panels, then two, then one (decode) by whole panels.
template <QuantKind kKind>
EMBER_DOTPROD void MatMulDotProd(const uint8_t* w, const int8_t* xq, const float* xscales,
                                 const int32_t* xsums, size_t batch, float* y,
                                 size_t y_stride, size_t rows, size_t cols) {
  const size_t groups = QuantGroups(cols);
  const size_t padded = groups * kQuantGroup;
  const size_t panel_bytes = QuantPanelBytes(kKind, cols);
  if (batch == 1) {  // decode: nothing but the one-token loop per panel
    for (size_t p = 0; p * kQuantPanelRows < rows; ++p) {
      PanelTokens<kKind, 1>(w + p * panel_bytes, groups, xq, padded, xscales, xsums, y,
                            y_stride, p * kQuantPanelRows, rows);
    }
    return;
  }
  for (size_t p = 0; p * kQuantPanelRows < rows; ++p) {
    const uint8_t* panel = w + p * panel_bytes;
    const size_t row0 = p * kQuantPanelRows;
    size_t b = QuarterTiles<kKind>(panel, groups, row0, rows, xq, padded, xscales, batch,
                                   y, y_stride);
    for (; b + 4 <= batch; b += 4) {
      for (size_t h = 0; h < Halves(row0, rows); ++h) {
        HalfPanelQuad<kKind>(panel, groups, h, xq + b * padded, padded,
                             xscales + b * groups, xsums + b * groups,
                             y + b * y_stride + row0 + 8 * h, y_stride,
                             HalfRows(row0, rows, h));
      }
    }
    if (b + 2 <= batch) {
      PanelTokens<kKind, 2>(panel, groups, xq + b * padded, padded, xscales + b * groups,
                            xsums + b * groups, y + b * y_stride, y_stride, row0, rows);
      b += 2;
    }
    if (b < batch) {
      PanelTokens<kKind, 1>(panel, groups, xq + b * padded, padded, xscales + b * groups,
                            xsums + b * groups, y + b * y_stride, y_stride, row0, rows);
    }
  }
}

// ------------------------------ smmla (i8mm): prefill
//
// smmla(acc, a, b) adds to acc = [a0.b0, a0.b1, a1.b0, a1.b1] the dot products of the
// 8-byte halves of a (two rows' 8 inputs) and b (two tokens' same 8 inputs): twice the
// multiply-adds of an sdot. A chunk holds 4 inputs of 16 rows, so a row's 8 inputs come
// from two chunks, interleaved in 32-bit lanes: zip1/zip2 of a quarter (4 rows) of each
// give rows (4q, 4q + 1) and (4q + 2, 4q + 3). q8 pairs chunks c, c + 1 (inputs 4c ..
// 4c + 7, contiguous in xq); q4 pairs the low and high nibbles of block j (chunks j and
// j + 4: inputs 4j .. 4j + 3 and 16 + 4j .. 16 + 4j + 3). The integer dots are exact and
// the float steps per row and token those of the sdot kernels, so rows are bitwise equal.
// PanelPairs takes a last pair of tokens; four at a time go to HalfPanelQuadMmla.
#define EMBER_I8MM __attribute__((target("arch=armv8.2-a+dotprod+i8mm")))

// The 8-byte halves for pair j of a group (token at x): q8 inputs 8j .. 8j + 7; q4 the
// 4 inputs of chunk j, then those of chunk j + 4.
template <QuantKind kKind>
EMBER_I8MM inline int8x8_t PairInputs(const int8_t* x, int j) {
  if (kKind == QuantKind::kQ8) return vld1_s8(x + 8 * j);
  int32_t lo, hi;
  memcpy(&lo, x + 4 * j, 4);
  memcpy(&hi, x + 16 + 4 * j, 4);
  return vreinterpret_s8_s32(vset_lane_s32(hi, vdup_n_s32(lo), 1));
}

// The signed weight bytes of chunk pair j of a group, rows (4q + 2z, 4q + 2z + 1) in
// w[2q + z]: q8 chunks 2j, 2j + 1 (stored q + 128: ^ 0x80); q4 block j's nibbles (q + 8,
// 0..15: the -8 is taken off through the activation sum).
template <QuantKind kKind>
EMBER_I8MM inline void PairWeights(const uint8_t* values, int j, int8x16_t (&w)[8]) {
  for (int q = 0; q < 4; ++q) {
    int8x16_t first, second;
    if (kKind == QuantKind::kQ8) {
      const uint8x16_t flip = vdupq_n_u8(0x80);
      first = vreinterpretq_s8_u8(
          veorq_u8(vld1q_u8(values + 2 * j * kQuantChunkBytes + 16 * q), flip));
      second = vreinterpretq_s8_u8(
          veorq_u8(vld1q_u8(values + (2 * j + 1) * kQuantChunkBytes + 16 * q), flip));
    } else {
      const uint8x16_t raw = vld1q_u8(values + j * kQuantChunkBytes + 16 * q);
      first = vreinterpretq_s8_u8(vandq_u8(raw, vdupq_n_u8(0x0F)));
      second = vreinterpretq_s8_u8(vshrq_n_u8(raw, 4));
    }
    const int32x4_t a = vreinterpretq_s32_s8(first), b = vreinterpretq_s32_s8(second);
    w[2 * q] = vreinterpretq_s8_s32(vzip1q_s32(a, b));
    w[2 * q + 1] = vreinterpretq_s8_s32(vzip2q_s32(a, b));
  }
}

// One panel times kPairs pairs of tokens (token t at xq + t * padded): y rows below rows.
template <QuantKind kKind, int kPairs>
EMBER_I8MM void PanelPairs(const uint8_t* panel, size_t groups, const int8_t* xq,
                           size_t padded, const float* xscales, const int32_t* xsums,
                           float* y, size_t y_stride, size_t row0, size_t rows) {
  // acc[t][k]: rows (2k, 2k + 1) of the panel x tokens (2t, 2t + 1), smmla's order.
  float32x4_t acc[kPairs][8];
  for (int t = 0; t < kPairs; ++t) {
    for (int k = 0; k < 8; ++k) acc[t][k] = vdupq_n_f32(0.0f);
  }
  for (size_t g = 0; g < groups; ++g) {
    const uint8_t* values = panel + g * QuantGroupBytes(kKind);
    int32x4_t dot[kPairs][8];
    for (int t = 0; t < kPairs; ++t) {
      // q4: -8 * sum(xq) of each token, in its lanes (1, 3 are token 2t + 1).
      int32x4_t start = vdupq_n_s32(0);
      if (kKind == QuantKind::kQ4) {
        const int32_t s0 = -8 * xsums[(2 * t) * groups + g];
        const int32_t s1 = -8 * xsums[(2 * t + 1) * groups + g];
        const int32x2_t pair = vset_lane_s32(s1, vdup_n_s32(s0), 1);
        start = vcombine_s32(pair, pair);
      }
      for (int k = 0; k < 8; ++k) dot[t][k] = start;
    }
    for (int j = 0; j < 4; ++j) {
      int8x16_t w[8];
      PairWeights<kKind>(values, j, w);
      for (int t = 0; t < kPairs; ++t) {
        const int8_t* x0 = xq + (2 * t) * padded + g * kQuantGroup;
        const int8x16_t x =
            vcombine_s8(PairInputs<kKind>(x0, j), PairInputs<kKind>(x0 + padded, j));
        for (int k = 0; k < 8; ++k) dot[t][k] = vmmlaq_s32(dot[t][k], w[k], x);
      }
    }
    // acc += float(dot) * (wscale * xscale) per row and token, as the sdot kernels.
    const uint16_t* scale_bits =
        reinterpret_cast<const uint16_t*>(values + QuantGroupValueBytes(kKind));
    for (int q = 0; q < 4; ++q) {
      const float32x4_t ws =
          vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(scale_bits + 4 * q)));
      const float32x4_t ws_pairs[2] = {vzip1q_f32(ws, ws), vzip2q_f32(ws, ws)};
      for (int t = 0; t < kPairs; ++t) {
        const float32x2_t xs =
            vset_lane_f32(xscales[(2 * t + 1) * groups + g],
                          vdup_n_f32(xscales[(2 * t) * groups + g]), 1);
        const float32x4_t xs_pairs = vcombine_f32(xs, xs);  // tokens 2t, 2t + 1
        for (int z = 0; z < 2; ++z) {
          acc[t][2 * q + z] =
              vfmaq_f32(acc[t][2 * q + z], vcvtq_f32_s32(dot[t][2 * q + z]),
                        vmulq_f32(ws_pairs[z], xs_pairs));
        }
      }
    }
  }
  const size_t n = rows - row0 < kQuantPanelRows ? rows - row0 : kQuantPanelRows;
  for (int t = 0; t < kPairs; ++t) {
    float out[2][kQuantPanelRows];
    for (int q = 0; q < 4; ++q) {
      // [r.t0, r.t1, r'.t0, r'.t1] of rows (4q, 4q + 1) and (4q + 2, 4q + 3).
      vst1q_f32(out[0] + 4 * q, vuzp1q_f32(acc[t][2 * q], acc[t][2 * q + 1]));
      vst1q_f32(out[1] + 4 * q, vuzp2q_f32(acc[t][2 * q], acc[t][2 * q + 1]));
    }
    for (int u = 0; u < 2; ++u) {
      memcpy(y + (2 * t + u) * y_stride + row0, out[u], n * sizeof(float));
    }
  }
}

// Half a panel (rows 8h .. 8h + 7, as HalfPanelQuad) x 4 tokens by usmmla: weights
// unsigned as stored (q8 q + 128, q4 q + 8), activations signed; the offset times the
// token's sum starts each dot, so no weight byte needs flipping.

// Rows (2k, 2k + 1) of the half in w[k], 8 inputs each in PairWeights' order, unsigned.
template <QuantKind kKind>
EMBER_I8MM inline void HalfPairWeights(const uint8_t* values, int j, uint8x16_t (&w)[4]) {
  for (int z = 0; z < 2; ++z) {
    uint8x16_t first, second;
    if (kKind == QuantKind::kQ8) {
      first = vld1q_u8(values + 2 * j * kQuantChunkBytes + 16 * z);
      second = vld1q_u8(values + (2 * j + 1) * kQuantChunkBytes + 16 * z);
    } else {
      const uint8x16_t raw = vld1q_u8(values + j * kQuantChunkBytes + 16 * z);
      first = vandq_u8(raw, vdupq_n_u8(0x0F));
      second = vshrq_n_u8(raw, 4);
    }
    const uint32x4_t f = vreinterpretq_u32_u8(first), s = vreinterpretq_u32_u8(second);
    w[2 * z] = vreinterpretq_u8_u32(vzip1q_u32(f, s));
    w[2 * z + 1] = vreinterpretq_u8_u32(vzip2q_u32(f, s));
  }
}

// Pairs j = 2u, 2u + 1 of a group: xv[b] holds token b's inputs of both pairs (64 bits
// each), dot0/dot1 tokens (0, 1) and (2, 3) by row pair. As HalfChunk, the empty asm
// keeps the next loads below these products.
template <QuantKind kKind>
EMBER_I8MM inline void HalfPairs(const uint8_t* values, int u, const int8x16_t (&xv)[4],
                                 int32x4_t (&dot0)[4], int32x4_t (&dot1)[4]) {
  for (int v = 0; v < 2; ++v) {
    const int j = 2 * u + v;
    const int64x2_t x0 = vreinterpretq_s64_s8(xv[0]), x1 = vreinterpretq_s64_s8(xv[1]);
    const int64x2_t x2 = vreinterpretq_s64_s8(xv[2]), x3 = vreinterpretq_s64_s8(xv[3]);
    const int8x16_t pair0 =
        vreinterpretq_s8_s64(v == 0 ? vzip1q_s64(x0, x1) : vzip2q_s64(x0, x1));
    const int8x16_t pair1 =
        vreinterpretq_s8_s64(v == 0 ? vzip1q_s64(x2, x3) : vzip2q_s64(x2, x3));
    uint8x16_t w[4];
    HalfPairWeights<kKind>(values, j, w);
    for (int k = 0; k < 4; ++k) {
      dot0[k] = vusmmlaq_s32(dot0[k], w[k], pair0);
      dot1[k] = vusmmlaq_s32(dot1[k], w[k], pair1);
    }
    asm volatile("" ::: "memory");
  }
}

// Token b's inputs of pairs 2u, 2u + 1 (PairInputs' order): q8 inputs 16u .. 16u + 15;
// q4 inputs 8u .. 8u + 3, 16 + 8u .. 16 + 8u + 3, 8u + 4 .. 8u + 7, 16 + 8u + 4 ...
template <QuantKind kKind>
EMBER_I8MM inline int8x16_t PairsInputs(const int8_t* x, int u) {
  if (kKind == QuantKind::kQ8) return vld1q_s8(x + 16 * u);
  const int32x4_t lo = vreinterpretq_s32_s8(vld1q_s8(x));
  const int32x4_t hi = vreinterpretq_s32_s8(vld1q_s8(x + 16));
  return vreinterpretq_s8_s32(u == 0 ? vzip1q_s32(lo, hi) : vzip2q_s32(lo, hi));
}

template <QuantKind kKind>
EMBER_I8MM __attribute__((noinline)) void HalfPanelQuadMmla(
    const uint8_t* panel, size_t groups, size_t half, const int8_t* xq, size_t padded,
    const float* xscales, const int32_t* xsums, float* y, size_t y_stride, size_t n) {
  // acc0[k], acc1[k]: rows (2k, 2k + 1) of the half x tokens (0, 1) and (2, 3), smmla's
  // order; only constant indices, so that the sums stay in registers.
  float32x4_t acc0[4], acc1[4];
  for (int k = 0; k < 4; ++k) acc0[k] = acc1[k] = vdupq_n_f32(0.0f);
  constexpr int32_t kOffset = kKind == QuantKind::kQ8 ? 128 : 8;
  for (size_t g = 0; g < groups; ++g) {
    const uint8_t* group = panel + g * QuantGroupBytes(kKind);
    const uint8_t* values = group + 32 * half;
    const int8_t* xg = xq + g * kQuantGroup;
    int32x4_t dot0[4], dot1[4];
    {
      const int32x4_t sums = {-kOffset * xsums[g], -kOffset * xsums[groups + g],
                              -kOffset * xsums[2 * groups + g],
                              -kOffset * xsums[3 * groups + g]};
      const int32x4_t start0 = vcombine_s32(vget_low_s32(sums), vget_low_s32(sums));
      const int32x4_t start1 = vcombine_s32(vget_high_s32(sums), vget_high_s32(sums));
      for (int k = 0; k < 4; ++k) dot0[k] = start0, dot1[k] = start1;
    }
    for (int u = 0; u < 2; ++u) {
      int8x16_t xv[4];
      for (int b = 0; b < 4; ++b) xv[b] = PairsInputs<kKind>(xg + b * padded, u);
      HalfPairs<kKind>(values, u, xv, dot0, dot1);
    }
    // acc += float(dot) * (wscale * xscale) per row and token, as the sdot kernels.
    const uint16x8_t bits =
        vld1q_u16(reinterpret_cast<const uint16_t*>(group + QuantGroupValueBytes(kKind)) +
                  8 * half);
    const float32x4_t ws_lo = vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(bits)));
    const float32x4_t ws_hi = vcvt_high_f32_f16(vreinterpretq_f16_u16(bits));
    const float32x4_t ws_pairs[4] = {vzip1q_f32(ws_lo, ws_lo), vzip2q_f32(ws_lo, ws_lo),
                                     vzip1q_f32(ws_hi, ws_hi), vzip2q_f32(ws_hi, ws_hi)};
    const float32x4_t xs = {xscales[g], xscales[groups + g], xscales[2 * groups + g],
                            xscales[3 * groups + g]};
    const float32x4_t xs0 = vcombine_f32(vget_low_f32(xs), vget_low_f32(xs));
    const float32x4_t xs1 = vcombine_f32(vget_high_f32(xs), vget_high_f32(xs));
    for (int k = 0; k < 4; ++k) {
      acc0[k] = vfmaq_f32(acc0[k], vcvtq_f32_s32(dot0[k]), vmulq_f32(ws_pairs[k], xs0));
      acc1[k] = vfmaq_f32(acc1[k], vcvtq_f32_s32(dot1[k]), vmulq_f32(ws_pairs[k], xs1));
    }
  }
  // [r.t0, r.t1, r'.t0, r'.t1] of rows (4z, 4z + 1) and (4z + 2, 4z + 3), per pair.
  float out[4][8];
  for (int z = 0; z < 2; ++z) {
    vst1q_f32(out[0] + 4 * z, vuzp1q_f32(acc0[2 * z], acc0[2 * z + 1]));
    vst1q_f32(out[1] + 4 * z, vuzp2q_f32(acc0[2 * z], acc0[2 * z + 1]));
    vst1q_f32(out[2] + 4 * z, vuzp1q_f32(acc1[2 * z], acc1[2 * z + 1]));
    vst1q_f32(out[3] + 4 * z, vuzp2q_f32(acc1[2 * z], acc1[2 * z + 1]));
  }
  for (int b = 0; b < 4; ++b) memcpy(y + b * y_stride, out[b], n * sizeof(float));
}

// The MatMulQuantFn: per panel, q4 by sdot's quarter tiles first, then four tokens at a
// time by usmmla on half panels, then a pair by smmla, then an odd last token by sdot.
template <QuantKind kKind>
EMBER_I8MM void MatMulI8mm(const uint8_t* w, const int8_t* xq, const float* xscales,
                           const int32_t* xsums, size_t batch, float* y, size_t y_stride,
                           size_t rows, size_t cols) {
  const size_t groups = QuantGroups(cols);
  const size_t padded = groups * kQuantGroup;
  const size_t panel_bytes = QuantPanelBytes(kKind, cols);
  for (size_t p = 0; p * kQuantPanelRows < rows; ++p) {
    const uint8_t* panel = w + p * panel_bytes;
    const size_t row0 = p * kQuantPanelRows;
    size_t b = 0;
    // q4 by sdot's quarter tiles: fewer instructions than usmmla's (unpacked once).
    if (kKind == QuantKind::kQ4) {
      b = QuarterTiles<kKind>(panel, groups, row0, rows, xq, padded, xscales, batch, y,
                              y_stride);
    }
    for (; b + 4 <= batch; b += 4) {
      for (size_t h = 0; h < Halves(row0, rows); ++h) {
        HalfPanelQuadMmla<kKind>(panel, groups, h, xq + b * padded, padded,
                                 xscales + b * groups, xsums + b * groups,
                                 y + b * y_stride + row0 + 8 * h, y_stride,
                                 HalfRows(row0, rows, h));
      }
    }
    if (b + 2 <= batch) {
      PanelPairs<kKind, 1>(panel, groups, xq + b * padded, padded, xscales + b * groups,
                           xsums + b * groups, y + b * y_stride, y_stride, row0, rows);
      b += 2;
    }
    if (b < batch) {
      PanelTokens<kKind, 1>(panel, groups, xq + b * padded, padded, xscales + b * groups,
                            xsums + b * groups, y + b * y_stride, y_stride, row0, rows);
    }
  }
}

#undef EMBER_I8MM

}  // namespace

bool HasArmDotProd() { return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0; }

uint32_t ArmInt8Features() {
  uint32_t features = HasArmDotProd() ? static_cast<uint32_t>(kInt8ArmDotProd) : 0u;
#if defined(HWCAP2_I8MM)
  if (features != 0 && (getauxval(AT_HWCAP2) & HWCAP2_I8MM) != 0)
    features |= kInt8ArmI8mm;
#endif
  return features;
}

bool ArmInt8Kernels(Int8Feature path, Int8Kernels* kernels) {
  if (path != kInt8ArmDotProd && path != kInt8ArmI8mm) return false;
  const bool i8mm = path == kInt8ArmI8mm;
  kernels->name = i8mm ? "neon-i8mm" : "neon-sdot";
  kernels->matvec_q8 = &MatMulDotProd<QuantKind::kQ8>;
  kernels->matmul_q8 =
      i8mm ? &MatMulI8mm<QuantKind::kQ8> : &MatMulDotProd<QuantKind::kQ8>;
  kernels->matvec_q4 = &MatMulDotProd<QuantKind::kQ4>;
  kernels->matmul_q4 =
      i8mm ? &MatMulI8mm<QuantKind::kQ4> : &MatMulDotProd<QuantKind::kQ4>;
  return DotProdKQuantKernels(kernels);
}

bool FillDotProdKernels(KernelTable* table, uint32_t int8) {
  for (Int8Feature path : {kInt8ArmI8mm, kInt8ArmDotProd}) {
    Int8Kernels k;
    if ((int8 & path) == 0 || !ArmInt8Kernels(path, &k)) continue;
    UseInt8Kernels(table, k);
    return true;
  }
  return false;
}

#else  // no sdot in this build

bool HasArmDotProd() { return false; }
uint32_t ArmInt8Features() { return 0; }
bool ArmInt8Kernels(Int8Feature /*path*/, Int8Kernels* /*kernels*/) { return false; }
bool FillDotProdKernels(KernelTable* /*table*/, uint32_t /*int8*/) { return false; }

#endif

}  // namespace ember::kernels
