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
#include <cstring>

#include "kernels/arm/dotprod_arm_util.h"
#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"
#endif

namespace ember::kernels {

#if defined(__aarch64__) && defined(__linux__) && defined(HWCAP_ASIMDDP)
namespace {

using dotprod::DotChunk;
using dotprod::HalfRows;
using dotprod::Halves;
using dotprod::QuarterDot;

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

// The q (q - 32 for q6_k) of chunks jj (*low) and jj + 4 (*high) for the quarter of
// rows whose bytes start at quarter (values + 16q).
template <KQuantKind kKind>
EMBER_DOTPROD inline void ChunkQuarter(const uint8_t* quarter, int jj, int8x16_t* low,
                                       int8x16_t* high) {
  const uint8x16_t raw = vld1q_u8(quarter + 64 * jj);
  uint8x16_t lo = vandq_u8(raw, vdupq_n_u8(0x0F)), hi = vshrq_n_u8(raw, 4);
  if (kKind == KQuantKind::kQ5K) {  // bit c of the plane is chunk c's bit 4
    const uint8x16_t plane = vld1q_u8(quarter + 256), bit4 = vdupq_n_u8(0x10);
    lo = vorrq_u8(
        lo, vandq_u8(vshlq_u8(plane, vdupq_n_s8(static_cast<int8_t>(4 - jj))), bit4));
    hi = vorrq_u8(hi,
                  vandq_u8(vshlq_u8(plane, vdupq_n_s8(static_cast<int8_t>(-jj))), bit4));
  }
  if (kKind == KQuantKind::kQ6K) {  // bits 2k, 2k+1 of plane h: chunk 4h + k's 4, 5
    const int8x16_t shift = vdupq_n_s8(static_cast<int8_t>(4 - 2 * jj));
    const uint8x16_t bits = vdupq_n_u8(0x30), offset = vdupq_n_u8(32);
    lo = vsubq_u8(vorrq_u8(lo, vandq_u8(vshlq_u8(vld1q_u8(quarter + 256), shift), bits)),
                  offset);
    hi = vsubq_u8(vorrq_u8(hi, vandq_u8(vshlq_u8(vld1q_u8(quarter + 320), shift), bits)),
                  offset);
  }
  *low = vreinterpretq_s8_u8(lo);
  *high = vreinterpretq_s8_u8(hi);
}

// The same for all four quarters (a whole panel's 16 rows).
template <KQuantKind kKind>
EMBER_DOTPROD inline void ChunkPair(const uint8_t* values, int jj, int8x16_t (&low)[4],
                                    int8x16_t (&high)[4]) {
  for (int q = 0; q < 4; ++q) ChunkQuarter<kKind>(values + 16 * q, jj, &low[q], &high[q]);
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

// ------------------------------ prefill: half a panel (8 rows) x kB tokens
//
// As dotprod_arm.cc's HalfPanelQuad: rows 8h .. 8h + 7 of a panel (quarters 2h, 2h + 1
// of every chunk and plane: bytes 32h .. 32h + 31; their scales at 8h .. 8h + 7), each
// weight vector feeding kB tokens, activations a 16-input half at a time, chunk lanes
// known at compile time. The float steps are KPanelTokens' per row and token.

// One chunk's half (rows of the half in w0, w1) into dot[b][0], dot[b][1] by lane kLane.
template <int kLane, int kB>
EMBER_DOTPROD inline void KHalfChunk(int32x4_t (&dot)[kB][2], int8x16_t w0, int8x16_t w1,
                                     const int8x16_t (&xv)[kB]) {
  for (int b = 0; b < kB; ++b) {
    dot[b][0] = vdotq_laneq_s32(dot[b][0], w0, xv[b], kLane);
    dot[b][1] = vdotq_laneq_s32(dot[b][1], w1, xv[b], kLane);
  }
  asm volatile("" ::: "memory");  // keeps the next chunk's loads below (HalfChunk)
}

// q (q - 32 for q6_k) of chunk jj + 4 * kHigh, rows 4z .. 4z + 3 of the half, from the
// group's values already offset to the half (values + 32h).
template <KQuantKind kKind, int kJj, bool kHigh>
EMBER_DOTPROD inline int8x16_t KHalfValues(const uint8_t* values, int z) {
  const uint8x16_t raw = vld1q_u8(values + 64 * kJj + 16 * z);
  uint8x16_t q = kHigh ? vshrq_n_u8(raw, 4) : vandq_u8(raw, vdupq_n_u8(0x0F));
  if (kKind == KQuantKind::kQ5K) {  // bit c of the plane is chunk c's bit 4
    const uint8x16_t plane = vld1q_u8(values + 256 + 16 * z);
    uint8x16_t moved = plane;  // chunk kJj + 4's bit is bit kJj + 4 already
    if constexpr (!kHigh) {
      moved = vshlq_n_u8(plane, 4 - kJj);
    } else if constexpr (kJj > 0) {
      moved = vshrq_n_u8(plane, kJj);
    }
    q = vorrq_u8(q, vandq_u8(moved, vdupq_n_u8(0x10)));
  }
  if (kKind == KQuantKind::kQ6K) {  // bits 2k, 2k+1 of plane h: chunk 4h + k's 4, 5
    const uint8x16_t plane = vld1q_u8(values + 256 + 64 * kHigh + 16 * z);
    uint8x16_t moved = plane;  // chunk 2's bits are bits 4, 5 already
    if constexpr (kJj < 2) {
      moved = vshlq_n_u8(plane, 4 - 2 * kJj);
    } else if constexpr (kJj == 3) {
      moved = vshrq_n_u8(plane, 2);
    }
    q = vsubq_u8(vorrq_u8(q, vandq_u8(moved, vdupq_n_u8(0x30))), vdupq_n_u8(32));
  }
  return vreinterpretq_s8_u8(q);
}

template <KQuantKind kKind, int kJj, bool kHigh, int kB>
EMBER_DOTPROD inline void KHalfBlock(const uint8_t* values, int32x4_t (&dot)[kB][2],
                                     const int8x16_t (&xv)[kB]) {
  KHalfChunk<kJj, kB>(dot, KHalfValues<kKind, kJj, kHigh>(values, 0),
                      KHalfValues<kKind, kJj, kHigh>(values, 1), xv);
}

// The four chunks of one 16-input half of a group (kHigh: chunks 4..7) times xv.
template <KQuantKind kKind, bool kHigh, int kB>
EMBER_DOTPROD inline void KHalfInputs(const uint8_t* values, int32x4_t (&dot)[kB][2],
                                      const int8x16_t (&xv)[kB]) {
  KHalfBlock<kKind, 0, kHigh, kB>(values, dot, xv);
  KHalfBlock<kKind, 1, kHigh, kB>(values, dot, xv);
  KHalfBlock<kKind, 2, kHigh, kB>(values, dot, xv);
  KHalfBlock<kKind, 3, kHigh, kB>(values, dot, xv);
}

// The 6-bit sc_j and m_j of group j (kquant_layout.h) from the bytes of its three scale
// fields (low sc nibbles at 16k + r, low m nibbles at 64 + 16k + r, top bits at 128 +
// 16k + r, k = j % 4), one byte per row.
EMBER_DOTPROD inline void ScaleAndMin(uint8x8_t sc_low, uint8x8_t m_low, uint8x8_t top,
                                      size_t j, uint8x8_t* sc, uint8x8_t* m) {
  const int8x8_t nibble = vdup_n_s8(static_cast<int8_t>(-4 * static_cast<int>(j / 4)));
  const int8x8_t pair = vdup_n_s8(static_cast<int8_t>(-2 * static_cast<int>(j / 4)));
  const int8x8_t pair_m =
      vdup_n_s8(static_cast<int8_t>(-4 - 2 * static_cast<int>(j / 4)));
  const uint8x8_t n15 = vdup_n_u8(15), n3 = vdup_n_u8(3);
  *sc = vorr_u8(vand_u8(vshl_u8(sc_low, nibble), n15),
                vshl_n_u8(vand_u8(vshl_u8(top, pair), n3), 4));
  *m = vorr_u8(vand_u8(vshl_u8(m_low, nibble), n15),
               vshl_n_u8(vand_u8(vshl_u8(top, pair_m), n3), 4));
}

// 8 bytes (one per row) widened to two float32x4 (rows 0-3, 4-7) or int32x4.
EMBER_DOTPROD inline void WidenU8Half(uint8x8_t v, float32x4_t (&out)[2]) {
  const uint16x8_t a = vmovl_u8(v);
  out[0] = vcvtq_f32_u32(vmovl_u16(vget_low_u16(a)));
  out[1] = vcvtq_f32_u32(vmovl_u16(vget_high_u16(a)));
}
EMBER_DOTPROD inline void WidenS8Half(const uint8_t* p, int32x4_t (&out)[2]) {
  const int16x8_t a = vmovl_s8(vld1_s8(reinterpret_cast<const int8_t*>(p)));
  out[0] = vmovl_s16(vget_low_s16(a));
  out[1] = vmovl_s16(vget_high_s16(a));
}

// Rows 8 * half .. + n - 1 of one panel times kB tokens (token b at xq + b * cols):
// y[b * y_stride + r], r from the half's first row.
template <KQuantKind kKind, int kB>
EMBER_DOTPROD __attribute__((noinline)) void KHalfPanelTokens(
    const uint8_t* panel, size_t cols, size_t half, const int8_t* xq,
    const float* xscales, const int32_t* xsums, float* y, size_t y_stride, size_t n) {
  const size_t groups = cols / kQuantGroup, table_bytes = KQuantTableBytes(kKind, cols);
  float32x4_t acc0[kB], acc1[kB];  // rows 0-3 and 4-7 of the half
  for (int b = 0; b < kB; ++b) acc0[b] = acc1[b] = vdupq_n_f32(0.0f);
  for (size_t g = 0; g < groups; ++g) {
    const size_t block = g / kKQuantGroups, j = g % kKQuantGroups;
    const uint8_t* entry = panel + block * KQuantTableEntryBytes(kKind) + 16 * half;
    const uint8_t* scales = panel + table_bytes + block * KQuantSuperBlockBytes(kKind);
    const uint8_t* values =
        scales + KQuantScaleBytes(kKind) + j * KQuantGroupBytes(kKind) + 32 * half;
    const int8_t* xg = xq + g * kQuantGroup;
    // q4_k, q5_k: one sum over the group; q6_k: its two sub-blocks apart.
    int32x4_t dot[kB][2], high[kB][2];
    int8x16_t xv[kB];
    for (int b = 0; b < kB; ++b) {
      xv[b] = vld1q_s8(xg + b * cols);
      dot[b][0] = dot[b][1] = vdupq_n_s32(0);
    }
    KHalfInputs<kKind, false, kB>(values, dot, xv);
    for (int b = 0; b < kB; ++b) xv[b] = vld1q_s8(xg + b * cols + 16);
    if (kKind != KQuantKind::kQ6K) {
      KHalfInputs<kKind, true, kB>(values, dot, xv);
    } else {
      for (int b = 0; b < kB; ++b) high[b][0] = high[b][1] = vdupq_n_s32(0);
      KHalfInputs<kKind, true, kB>(values, high, xv);
    }
    float32x4_t d[2];
    for (int z = 0; z < 2; ++z) d[z] = HalvesAt(entry + 8 * z);
    if (kKind == KQuantKind::kQ6K) {
      int32x4_t sc0[2], sc1[2];
      WidenS8Half(scales + 16 * (2 * j) + 8 * half, sc0);
      WidenS8Half(scales + 16 * (2 * j + 1) + 8 * half, sc1);
      for (int b = 0; b < kB; ++b) {
        const float32x4_t xs = vdupq_n_f32(xscales[b * groups + g]);
        const int32x4_t idot0 =
            vmlaq_s32(vmulq_s32(sc0[0], dot[b][0]), sc1[0], high[b][0]);
        const int32x4_t idot1 =
            vmlaq_s32(vmulq_s32(sc0[1], dot[b][1]), sc1[1], high[b][1]);
        acc0[b] = vfmaq_f32(acc0[b], vcvtq_f32_s32(idot0), vmulq_f32(d[0], xs));
        acc1[b] = vfmaq_f32(acc1[b], vcvtq_f32_s32(idot1), vmulq_f32(d[1], xs));
      }
      continue;
    }
    // The 6-bit sc_j and m_j of the half's rows, then ws = d sc, wm = dmin m.
    const uint8_t* sb = scales + 8 * half + 16 * (j % 4);
    uint8x8_t sc, m;
    ScaleAndMin(vld1_u8(sb), vld1_u8(sb + 64), vld1_u8(sb + 128), j, &sc, &m);
    float32x4_t ws[2], wm[2];
    WidenU8Half(sc, ws);
    WidenU8Half(m, wm);
    for (int z = 0; z < 2; ++z) {
      ws[z] = vmulq_f32(d[z], ws[z]);
      wm[z] = vmulq_f32(HalvesAt(entry + 32 + 8 * z), wm[z]);
    }
    for (int b = 0; b < kB; ++b) {
      const float xs = xscales[b * groups + g];
      const float32x4_t xv4 = vdupq_n_f32(xs);
      const float32x4_t xsum =
          vdupq_n_f32(xs * static_cast<float>(xsums[b * groups + g]));
      acc0[b] = vfmaq_f32(acc0[b], vcvtq_f32_s32(dot[b][0]), vmulq_f32(ws[0], xv4));
      acc0[b] = vfmsq_f32(acc0[b], wm[0], xsum);
      acc1[b] = vfmaq_f32(acc1[b], vcvtq_f32_s32(dot[b][1]), vmulq_f32(ws[1], xv4));
      acc1[b] = vfmsq_f32(acc1[b], wm[1], xsum);
    }
  }
  float buf[kB][8];
  for (int b = 0; b < kB; ++b) {
    vst1q_f32(buf[b], acc0[b]);
    vst1q_f32(buf[b] + 4, acc1[b]);
  }
  for (int b = 0; b < kB; ++b) memcpy(y + b * y_stride, buf[b], n * sizeof(float));
}

// ------------------------------ prefill: a quarter panel (4 rows) x kT tokens
//
// Weight-stationary, as dotprod_arm.cc's QuarterPanelTokens: a group's 32 inputs of the
// quarter's rows unpacked once into 8 sdot operands, and its scales decoded once, for kT
// tokens. Rows 4q .. 4q + 3: bytes 16q .. 16q + 15 of every block and plane, scale
// bytes 4q .. 4q + 3.

// Four bytes at p (rows of the quarter) in the low lanes of a d register.
EMBER_DOTPROD inline uint8x8_t QuarterBytes(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return vreinterpret_u8_u32(vdup_n_u32(v));
}
EMBER_DOTPROD inline float32x4_t QuarterFloats(uint8x8_t v) {
  return vcvtq_f32_u32(vmovl_u16(vget_low_u16(vmovl_u8(v))));
}

template <KQuantKind kKind, int kT>
EMBER_DOTPROD __attribute__((noinline)) void KQuarterPanelTokens(
    const uint8_t* panel, size_t cols, size_t quarter, const int8_t* xq,
    const float* xscales, const int32_t* xsums, float* y, size_t y_stride, size_t n) {
  const size_t groups = cols / kQuantGroup, table_bytes = KQuantTableBytes(kKind, cols);
  float32x4_t acc[kT];
#pragma GCC unroll 16
  for (int t = 0; t < kT; ++t) acc[t] = vdupq_n_f32(0.0f);
  for (size_t g = 0; g < groups; ++g) {
    const size_t block = g / kKQuantGroups, j = g % kKQuantGroups;
    const uint8_t* entry = panel + block * KQuantTableEntryBytes(kKind) + 8 * quarter;
    const uint8_t* scales = panel + table_bytes + block * KQuantSuperBlockBytes(kKind);
    const uint8_t* values =
        scales + KQuantScaleBytes(kKind) + j * KQuantGroupBytes(kKind) + 16 * quarter;
    // w[c]: q (q6_k: q - 32) of chunk c, the quarter's 4 rows x inputs 4c .. 4c + 3.
    int8x16_t w[8];
    for (int jj = 0; jj < 4; ++jj) ChunkQuarter<kKind>(values, jj, &w[jj], &w[jj + 4]);
    const float32x4_t d = HalvesAt(entry);
    const int8_t* x = xq + g * kQuantGroup;
    if (kKind == KQuantKind::kQ6K) {
      const int32x4_t sc0 = vmovl_s16(vget_low_s16(vmovl_s8(
          vreinterpret_s8_u8(QuarterBytes(scales + 16 * (2 * j) + 4 * quarter)))));
      const int32x4_t sc1 = vmovl_s16(vget_low_s16(vmovl_s8(
          vreinterpret_s8_u8(QuarterBytes(scales + 16 * (2 * j + 1) + 4 * quarter)))));
#pragma GCC unroll 16
      for (int t = 0; t < kT; ++t, x += cols) {
        const int32x4_t dot0 = QuarterDot<0>(vdupq_n_s32(0), w, vld1q_s8(x));
        const int32x4_t dot1 = QuarterDot<4>(vdupq_n_s32(0), w, vld1q_s8(x + 16));
        const int32x4_t idot = vmlaq_s32(vmulq_s32(sc0, dot0), sc1, dot1);
        const float32x4_t xs = vdupq_n_f32(xscales[t * groups + g]);
        acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(idot), vmulq_f32(d, xs));
        asm volatile("" ::: "memory");  // the next token's loads stay below
      }
      continue;
    }
    // The 6-bit sc_j and m_j of the quarter's rows, then ws = d sc, wm = dmin m.
    const uint8_t* sb = scales + 4 * quarter + 16 * (j % 4);
    uint8x8_t sc, m;
    ScaleAndMin(QuarterBytes(sb), QuarterBytes(sb + 64), QuarterBytes(sb + 128), j, &sc,
                &m);
    const float32x4_t ws = vmulq_f32(d, QuarterFloats(sc));
    const float32x4_t wm = vmulq_f32(HalvesAt(entry + 32), QuarterFloats(m));
#pragma GCC unroll 16
    for (int t = 0; t < kT; ++t, x += cols) {
      const int32x4_t dot = QuarterDot<4>(QuarterDot<0>(vdupq_n_s32(0), w, vld1q_s8(x)),
                                          w, vld1q_s8(x + 16));
      const float xs = xscales[t * groups + g];
      const float32x4_t xsum =
          vdupq_n_f32(xs * static_cast<float>(xsums[t * groups + g]));
      acc[t] = vfmaq_f32(acc[t], vcvtq_f32_s32(dot), vmulq_f32(ws, vdupq_n_f32(xs)));
      acc[t] = vfmsq_f32(acc[t], wm, xsum);
      asm volatile("" ::: "memory");  // the next token's loads stay below
    }
  }
  float buf[kT][4];
#pragma GCC unroll 16
  for (int t = 0; t < kT; ++t) vst1q_f32(buf[t], acc[t]);
  for (int t = 0; t < kT; ++t) memcpy(y + t * y_stride, buf[t], n * sizeof(float));
}

// The MatMulKQuantFn: per panel, sixteen tokens at a time by quarter panels, then four
// by half panels, then two, then one (decode) by whole panels.
template <KQuantKind kKind>
EMBER_DOTPROD void MatMulKQuantDotProd(const uint8_t* w, const int8_t* xq,
                                       const float* xscales, const int32_t* xsums,
                                       const int32_t* /*xhalf_sums*/, size_t batch,
                                       float* y, size_t y_stride, size_t rows,
                                       size_t cols) {
  const size_t groups = cols / kQuantGroup, panel_bytes = KQuantPanelBytes(kKind, cols);
  constexpr int kQuarterTokens = 16, kHalfTokens = 4;
  if (batch == 1) {  // decode: nothing but the one-token loop per panel
    for (size_t p = 0; p * kQuantPanelRows < rows; ++p) {
      KPanelTokens<kKind, 1>(w + p * panel_bytes, cols, xq, xscales, xsums, y, y_stride,
                             p * kQuantPanelRows, rows);
    }
    return;
  }
  for (size_t p = 0; p * kQuantPanelRows < rows; ++p) {
    const uint8_t* panel = w + p * panel_bytes;
    const size_t row0 = p * kQuantPanelRows;
    size_t b = 0;
    for (; b + kQuarterTokens <= batch; b += kQuarterTokens) {
      for (size_t q = 0; q < 4 && row0 + 4 * q < rows; ++q) {
        const size_t left = rows - row0 - 4 * q;
        KQuarterPanelTokens<kKind, kQuarterTokens>(
            panel, cols, q, xq + b * cols, xscales + b * groups, xsums + b * groups,
            y + b * y_stride + row0 + 4 * q, y_stride, left < 4 ? left : 4);
      }
    }
    for (; b + kHalfTokens <= batch; b += kHalfTokens) {
      for (size_t h = 0; h < Halves(row0, rows); ++h) {
        KHalfPanelTokens<kKind, kHalfTokens>(
            panel, cols, h, xq + b * cols, xscales + b * groups, xsums + b * groups,
            y + b * y_stride + row0 + 8 * h, y_stride, HalfRows(row0, rows, h));
      }
    }
    if (b + 2 <= batch) {
      KPanelTokens<kKind, 2>(panel, cols, xq + b * cols, xscales + b * groups,
                             xsums + b * groups, y + b * y_stride, y_stride, row0, rows);
      b += 2;
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
