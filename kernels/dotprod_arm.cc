// aarch64 sdot kernels for q8/q4 panels (quant_layout.h), behind a HWCAP check.
//
// Only these functions are compiled for armv8.2-a+dotprod (a target attribute; GCC 12's
// arm_neon.h needs the arch string, "+dotprod" alone fails to inline vdotq_laneq_s32),
// and they run only where the kernel reports HWCAP_ASIMDDP (every such CPU is armv8.2).
// A chunk is 16 rows x 4 inputs; 16 of its bytes (4 rows) times the group's 4 inputs
// 4c..4c+3 is one sdot by element: lane c % 4 of the activation vector c / 4.
//   q8: stored q + 128, so byte ^ 0x80 is q as a signed byte: the dot is exact directly.
//   q4: nibbles q + 8 are 0..15, valid signed bytes: subtract 8 * sum(xq) per group.
// The float part is that of quant-inl.h: acc = fma(float(dot), wscale * xscale, acc) per
// group in order, so decode and prefill rows are bitwise identical.
#include "kernels/dotprod_arm.h"

#if defined(__aarch64__) && defined(__linux__)
#include <arm_neon.h>
#include <sys/auxv.h>

#include "kernels/dotprod_arm_util.h"
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

}  // namespace

bool HasArmDotProd() { return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0; }

bool FillDotProdKernels(KernelTable* table) {
  if (!HasArmDotProd()) return false;
  table->matvec_q8 = &MatMulDotProd<QuantKind::kQ8>;
  table->matmul_q8 = &MatMulDotProd<QuantKind::kQ8>;
  table->matvec_q4 = &MatMulDotProd<QuantKind::kQ4>;
  table->matmul_q4 = &MatMulDotProd<QuantKind::kQ4>;
  table->int8_dot = "neon-sdot";
  return true;
}

#else  // no sdot in this build

bool HasArmDotProd() { return false; }
bool FillDotProdKernels(KernelTable* /*table*/) { return false; }

#endif

}  // namespace ember::kernels
