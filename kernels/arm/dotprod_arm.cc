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

// The MatMulQuantFn: per panel, two tokens at a time (each weight load feeds both).
template <QuantKind kKind>
EMBER_DOTPROD void MatMulDotProd(const uint8_t* w, const int8_t* xq, const float* xscales,
                                 const int32_t* xsums, size_t batch, float* y,
                                 size_t y_stride, size_t rows, size_t cols) {
  const size_t groups = QuantGroups(cols);
  const size_t padded = groups * kQuantGroup;
  const size_t panel_bytes = QuantPanelBytes(kKind, cols);
  for (size_t p = 0; p * kQuantPanelRows < rows; ++p) {
    const uint8_t* panel = w + p * panel_bytes;
    const size_t row0 = p * kQuantPanelRows;
    size_t b = 0;
    for (; b + 2 <= batch; b += 2) {
      PanelTokens<kKind, 2>(panel, groups, xq + b * padded, padded, xscales + b * groups,
                            xsums + b * groups, y + b * y_stride, y_stride, row0, rows);
    }
    if (b < batch) {
      PanelTokens<kKind, 1>(panel, groups, xq + b * padded, padded, xscales + b * groups,
                            xsums + b * groups, y + b * y_stride, y_stride, row0, rows);
    }
  }
}

// ------------------------------ smmla (i8mm): prefill, two tokens at a time
//
// smmla(acc, a, b) adds to acc = [a0.b0, a0.b1, a1.b0, a1.b1] the dot products of the
// 8-byte halves of a (two rows' 8 inputs) and b (two tokens' same 8 inputs): twice the
// multiply-adds of an sdot. A chunk holds 4 inputs of 16 rows, so a row's 8 inputs come
// from two chunks, interleaved in 32-bit lanes: zip1/zip2 of a quarter (4 rows) of each
// give rows (4q, 4q + 1) and (4q + 2, 4q + 3). q8 pairs chunks c, c + 1 (inputs 4c ..
// 4c + 7, contiguous in xq); q4 pairs the low and high nibbles of block j (chunks j and
// j + 4: inputs 4j .. 4j + 3 and 16 + 4j .. 16 + 4j + 3). The integer dots are exact and
// the float steps per row and token those of the sdot kernels, so rows are bitwise equal.
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

// The MatMulQuantFn: per panel, four tokens at a time (each weight operand feeds two
// smmla per pair), then a pair, then an odd last token by sdot.
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
    for (; b + 4 <= batch; b += 4) {
      PanelPairs<kKind, 2>(panel, groups, xq + b * padded, padded, xscales + b * groups,
                           xsums + b * groups, y + b * y_stride, y_stride, row0, rows);
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
