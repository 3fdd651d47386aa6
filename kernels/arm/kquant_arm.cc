// aarch64 sdot kernels for K-quant panels (kquant_layout.h), behind the HWCAP check of
// dotprod_arm.cc (the same target attribute and reasons).
//
// A chunk (64 bytes: 16 rows x 4 inputs) is four sdot-by-element operands of 4 rows.
// q4_k/q5_k values (0..15, 0..31) are valid signed bytes; q6_k's become q - 32 by a
// byte subtraction, so no activation sums are needed for the products. The float steps
// are MatMulKQuantFn's (fused), so decode and prefill rows are bitwise identical.
#include "kernels/arm/dotprod_arm.h"

#if defined(__aarch64__) && defined(__linux__)
#include <arm_neon.h>
#include <sys/auxv.h>

#include <cstdint>

#include "kernels/arm/dotprod_arm_util.h"
#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"
#endif

namespace ember::kernels {

#if defined(__aarch64__) && defined(__linux__) && defined(HWCAP_ASIMDDP)
namespace {

using dotprod::DotChunk;

// How far ahead of the values decode prefetches.
constexpr size_t kPrefetchBytes = 16384;

template <int kB>
EMBER_DOTPROD inline void DotLaneOf(int lane, int32x4_t (&acc)[kB][4],
                                    const int8x16_t (&w)[4], const int8x16_t (&xv)[kB]) {
  switch (lane) {
    case 0:
      DotChunk<0, kB>(acc, w, xv);
      break;
    case 1:
      DotChunk<1, kB>(acc, w, xv);
      break;
    case 2:
      DotChunk<2, kB>(acc, w, xv);
      break;
    default:
      DotChunk<3, kB>(acc, w, xv);
      break;
  }
}

// The q (q - 32 for q6_k) of chunks jj (*low) and jj + 4 (*high), quarter by quarter.
template <KQuantKind kKind>
EMBER_DOTPROD inline void ChunkPair(const uint8_t* values, int jj, int8x16_t (&low)[4],
                                    int8x16_t (&high)[4]) {
  const uint8x16_t n15 = vdupq_n_u8(0x0F);
  for (int q = 0; q < 4; ++q) {
    const uint8x16_t raw = vld1q_u8(values + 64 * jj + 16 * q);
    uint8x16_t lo = vandq_u8(raw, n15), hi = vshrq_n_u8(raw, 4);
    if (kKind == KQuantKind::kQ5K) {  // bit c of the plane is chunk c's bit 4
      const uint8x16_t plane = vld1q_u8(values + 256 + 16 * q), bit4 = vdupq_n_u8(0x10);
      lo = vorrq_u8(
          lo, vandq_u8(vshlq_u8(plane, vdupq_n_s8(static_cast<int8_t>(4 - jj))), bit4));
      hi = vorrq_u8(
          hi, vandq_u8(vshlq_u8(plane, vdupq_n_s8(static_cast<int8_t>(-jj))), bit4));
    }
    if (kKind == KQuantKind::kQ6K) {  // bits 2k, 2k+1 of plane h: chunk 4h + k's 4, 5
      const int8x16_t shift = vdupq_n_s8(static_cast<int8_t>(4 - 2 * jj));
      const uint8x16_t bits = vdupq_n_u8(0x30), offset = vdupq_n_u8(32);
      lo = vsubq_u8(
          vorrq_u8(lo, vandq_u8(vshlq_u8(vld1q_u8(values + 256 + 16 * q), shift), bits)),
          offset);
      hi = vsubq_u8(
          vorrq_u8(hi, vandq_u8(vshlq_u8(vld1q_u8(values + 320 + 16 * q), shift), bits)),
          offset);
    }
    low[q] = vreinterpretq_s8_u8(lo);
    high[q] = vreinterpretq_s8_u8(hi);
  }
}

// 16 bytes (one per row) widened to four float32x4 (rows 0-3, ...), unsigned or signed.
EMBER_DOTPROD inline void WidenU8(uint8x16_t v, float32x4_t (&out)[4]) {
  const uint16x8_t a = vmovl_u8(vget_low_u8(v)), b = vmovl_u8(vget_high_u8(v));
  out[0] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(a)));
  out[1] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(a)));
  out[2] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(b)));
  out[3] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(b)));
}
EMBER_DOTPROD inline void WidenS8(const uint8_t* p, int32x4_t (&out)[4]) {
  const int8x16_t v = vld1q_s8(reinterpret_cast<const int8_t*>(p));
  const int16x8_t a = vmovl_s8(vget_low_s8(v)), b = vmovl_s8(vget_high_s8(v));
  out[0] = vmovl_s16(vget_low_s16(a));
  out[1] = vmovl_s16(vget_high_s16(a));
  out[2] = vmovl_s16(vget_low_s16(b));
  out[3] = vmovl_s16(vget_high_s16(b));
}
EMBER_DOTPROD inline float32x4_t HalvesAt(const uint8_t* p) {
  return vcvt_f32_f16(
      vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(p))));
}

// One panel times kB tokens: y[b * y_stride + row0 + r] for rows below `rows`.
template <KQuantKind kKind, int kB>
EMBER_DOTPROD void KPanelTokens(const uint8_t* panel, size_t cols, const int8_t* xq,
                                const float* xscales, const int32_t* xsums, float* y,
                                size_t y_stride, size_t row0, size_t rows) {
  const size_t groups = cols / kQuantGroup, table_bytes = KQuantTableBytes(kKind, cols);
  float32x4_t acc[kB][4];
  for (int b = 0; b < kB; ++b) {
    for (int q = 0; q < 4; ++q) acc[b][q] = vdupq_n_f32(0.0f);
  }
  uintptr_t prefetched =
      (reinterpret_cast<uintptr_t>(panel) + kPrefetchBytes) & ~uintptr_t{63};
  for (size_t g = 0; g < groups; ++g) {
    const size_t block = g / kKQuantGroups, j = g % kKQuantGroups;
    const uint8_t* entry = panel + block * KQuantTableEntryBytes(kKind);
    const uint8_t* scales = panel + table_bytes + block * KQuantSuperBlockBytes(kKind);
    const uint8_t* values =
        scales + KQuantScaleBytes(kKind) + j * KQuantGroupBytes(kKind);
    if (kB == 1) {  // decode: every line up to kPrefetchBytes past this group, once
      const uintptr_t want =
          reinterpret_cast<uintptr_t>(values) + KQuantGroupBytes(kKind) + kPrefetchBytes;
      for (; prefetched < want; prefetched += 64) {
        __builtin_prefetch(reinterpret_cast<const void*>(prefetched));
      }
    }
    int8x16_t x0[kB], x1[kB];
    int32x4_t dot[kB][4], high[kB][4];  // chunks 0..3 (q6_k: half 0), chunks 4..7
    for (int b = 0; b < kB; ++b) {
      x0[b] = vld1q_s8(xq + b * cols + g * kQuantGroup);
      x1[b] = vld1q_s8(xq + b * cols + g * kQuantGroup + 16);
      for (int q = 0; q < 4; ++q) dot[b][q] = high[b][q] = vdupq_n_s32(0);
    }
    for (int jj = 0; jj < 4; ++jj) {
      int8x16_t lo[4], hi[4];
      ChunkPair<kKind>(values, jj, lo, hi);
      DotLaneOf<kB>(jj, dot, lo, x0);
      DotLaneOf<kB>(jj, high, hi, x1);
    }
    float32x4_t d[4];
    for (int q = 0; q < 4; ++q) d[q] = HalvesAt(entry + 8 * q);
    if (kKind == KQuantKind::kQ6K) {
      int32x4_t sc0[4], sc1[4];
      WidenS8(scales + 16 * (2 * j), sc0);
      WidenS8(scales + 16 * (2 * j + 1), sc1);
      for (int b = 0; b < kB; ++b) {
        const float32x4_t xs = vdupq_n_f32(xscales[b * groups + g]);
        for (int q = 0; q < 4; ++q) {
          const int32x4_t idot =
              vmlaq_s32(vmulq_s32(sc0[q], dot[b][q]), sc1[q], high[b][q]);
          acc[b][q] = vfmaq_f32(acc[b][q], vcvtq_f32_s32(idot), vmulq_f32(d[q], xs));
        }
      }
      continue;
    }
    // The 6-bit sc_j and m_j of 16 rows (kquant_layout.h), then ws = d sc, wm = dmin m.
    const size_t k = j % 4;
    const int8x16_t nibble =
        vdupq_n_s8(static_cast<int8_t>(-4 * static_cast<int>(j / 4)));
    const int8x16_t pair = vdupq_n_s8(static_cast<int8_t>(-2 * static_cast<int>(j / 4)));
    const int8x16_t pair_m =
        vdupq_n_s8(static_cast<int8_t>(-4 - 2 * static_cast<int>(j / 4)));
    const uint8x16_t n15 = vdupq_n_u8(15), n3 = vdupq_n_u8(3);
    const uint8x16_t top = vld1q_u8(scales + 128 + 16 * k);
    const uint8x16_t sc =
        vorrq_u8(vandq_u8(vshlq_u8(vld1q_u8(scales + 16 * k), nibble), n15),
                 vshlq_n_u8(vandq_u8(vshlq_u8(top, pair), n3), 4));
    const uint8x16_t m =
        vorrq_u8(vandq_u8(vshlq_u8(vld1q_u8(scales + 64 + 16 * k), nibble), n15),
                 vshlq_n_u8(vandq_u8(vshlq_u8(top, pair_m), n3), 4));
    float32x4_t ws[4], wm[4];
    WidenU8(sc, ws);
    WidenU8(m, wm);
    for (int q = 0; q < 4; ++q) {
      ws[q] = vmulq_f32(d[q], ws[q]);
      wm[q] = vmulq_f32(HalvesAt(entry + 32 + 8 * q), wm[q]);
    }
    for (int b = 0; b < kB; ++b) {
      const float xs = xscales[b * groups + g];
      const float32x4_t xv = vdupq_n_f32(xs);
      const float32x4_t xsum =
          vdupq_n_f32(xs * static_cast<float>(xsums[b * groups + g]));
      for (int q = 0; q < 4; ++q) {
        const int32x4_t total = vaddq_s32(dot[b][q], high[b][q]);
        acc[b][q] = vfmaq_f32(acc[b][q], vcvtq_f32_s32(total), vmulq_f32(ws[q], xv));
        acc[b][q] = vfmsq_f32(acc[b][q], wm[q], xsum);
      }
    }
  }
  const size_t n = rows - row0 < kQuantPanelRows ? rows - row0 : kQuantPanelRows;
  for (int b = 0; b < kB; ++b) {
    float* out = y + b * y_stride + row0;
    float buf[kQuantPanelRows];
    for (int q = 0; q < 4; ++q) vst1q_f32(buf + 4 * q, acc[b][q]);
    for (size_t r = 0; r < n; ++r) out[r] = buf[r];
  }
}

// The MatMulKQuantFn: per panel, two tokens at a time (each weight load feeds both).
template <KQuantKind kKind>
EMBER_DOTPROD void MatMulKQuantDotProd(const uint8_t* w, const int8_t* xq,
                                       const float* xscales, const int32_t* xsums,
                                       const int32_t* /*xhalf_sums*/, size_t batch,
                                       float* y, size_t y_stride, size_t rows,
                                       size_t cols) {
  const size_t groups = cols / kQuantGroup, panel_bytes = KQuantPanelBytes(kKind, cols);
  for (size_t p = 0; p * kQuantPanelRows < rows; ++p) {
    const uint8_t* panel = w + p * panel_bytes;
    const size_t row0 = p * kQuantPanelRows;
    size_t b = 0;
    for (; b + 2 <= batch; b += 2) {
      KPanelTokens<kKind, 2>(panel, cols, xq + b * cols, xscales + b * groups,
                             xsums + b * groups, y + b * y_stride, y_stride, row0, rows);
    }
    if (b < batch) {
      KPanelTokens<kKind, 1>(panel, cols, xq + b * cols, xscales + b * groups,
                             xsums + b * groups, y + b * y_stride, y_stride, row0, rows);
    }
  }
}

}  // namespace

bool DotProdKQuantKernels(Int8Kernels* k) {
  k->matvec_q4k = k->matmul_q4k = &MatMulKQuantDotProd<KQuantKind::kQ4K>;
  k->matvec_q5k = k->matmul_q5k = &MatMulKQuantDotProd<KQuantKind::kQ5K>;
  k->matvec_q6k = k->matmul_q6k = &MatMulKQuantDotProd<KQuantKind::kQ6K>;
  return true;
}

#else  // no sdot in this build

bool DotProdKQuantKernels(Int8Kernels* /*k*/) { return false; }

#endif

}  // namespace ember::kernels
