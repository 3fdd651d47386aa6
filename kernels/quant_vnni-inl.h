// AVX-512 VNNI (vpdpbusd) q8/q4 matvec and matmul, for Highway's AVX3_DL target only.
//
// Why intrinsics: Highway 1.0.3 has no op for vpdpbusd (u8 x s8 4-way dot products into
// int32 lanes), and its AVX3_DL target attributes lack "avx512vnni" (they name the VEX
// "avxvnni"), so the functions that use it add that attribute themselves. Everything else
// follows quant-inl.h: the same per-group integer dots (offset 128 / 8 removed as
// offset * xsum, by starting the int32 accumulator there) and the same float operations,
// so these kernels are bitwise identical to the portable ones on AVX3_DL.
//
// A chunk (64 bytes: 16 rows x 4 inputs) is exactly one vpdpbusd operand with the 4
// activation bytes broadcast to every int32 lane. Blocks of kP panels x kB batch rows
// share each weight load across kB rows and each activation broadcast across kP panels.
#if defined(EMBER_KERNELS_QUANT_VNNI_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_QUANT_VNNI_INL_H_
#undef EMBER_KERNELS_QUANT_VNNI_INL_H_
#else
#define EMBER_KERNELS_QUANT_VNNI_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/quant_layout.h"

#if HWY_TARGET == HWY_AVX3_DL
#include <immintrin.h>

#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

#define EMBER_VNNI __attribute__((target("avx512vnni")))

// How far ahead of the values it reads decode prefetches (see VnniBlock).
constexpr uintptr_t kDecodePrefetchBytes = 16384;

// The 4 activation bytes x4[0..3] as one int32 broadcast to all lanes.
EMBER_VNNI HWY_INLINE __m512i BroadcastX4(const int8_t* HWY_RESTRICT x4) {
  int32_t bits;
  memcpy(&bits, x4, 4);
  return _mm512_set1_epi32(bits);
}

// Writes the first n (<= 16) lanes of v to out (masked: nothing past them is touched).
EMBER_VNNI HWY_INLINE void StoreRows(__m512 v, size_t n, float* HWY_RESTRICT out) {
  if (n >= kQuantPanelRows) {
    _mm512_storeu_ps(out, v);
  } else {
    _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << n) - 1), v);
  }
}

// kP consecutive panels (the first at `panel`, holding row row0) times kB batch rows
// of xq (stride `padded`): y[b * y_stride + r] for the panels' rows below `rows`.
template <QuantKind kKind, int kP, int kB>
EMBER_VNNI HWY_INLINE void VnniBlock(const uint8_t* HWY_RESTRICT panel,
                                     size_t panel_bytes, size_t groups,
                                     const int8_t* HWY_RESTRICT xq, size_t padded,
                                     const float* HWY_RESTRICT xscales,
                                     const int32_t* HWY_RESTRICT xsums,
                                     float* HWY_RESTRICT y, size_t y_stride, size_t row0,
                                     size_t rows) {
  constexpr int32_t kOffset = kKind == QuantKind::kQ8 ? 128 : 8;
  constexpr size_t kGroupBytes = QuantGroupBytes(kKind);
  constexpr size_t kScales = QuantGroupValueBytes(kKind);  // within a group
  __m512 acc[kB][kP];
  for (int b = 0; b < kB; ++b) {
    for (int p = 0; p < kP; ++p) acc[b][p] = _mm512_setzero_ps();
  }
  for (size_t g = 0; g < groups; ++g) {
    // Each int32 lane starts at -offset * sum(xq): then adding the products of the
    // unsigned (q + offset) weights leaves sum(q * xq).
    __m512i dot[kB][kP];
    for (int b = 0; b < kB; ++b) {
      const __m512i start = _mm512_set1_epi32(-kOffset * xsums[b * groups + g]);
      for (int p = 0; p < kP; ++p) dot[b][p] = start;
    }
    const uint8_t* values = panel + g * kGroupBytes;
    const int8_t* xg = xq + g * kQuantGroup;
    if constexpr (kB == 1) {
      // Decode reads one panel at a time, so the matrix (and a thread's run of row tiles)
      // is one sequential stream. One L2 prefetch per group, kDecodePrefetchBytes ahead,
      // keeps the hardware prefetcher running across 4 KiB pages, into the next tile and,
      // as the file stores matrices in the order decode reads them, the next matrix.
      // Integer arithmetic: the address may lie past the matrix (prefetches never fault).
      for (int p = 0; p < kP; ++p) {
        const uintptr_t ahead =
            reinterpret_cast<uintptr_t>(values) + p * panel_bytes + kDecodePrefetchBytes;
        _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T1);
      }
    }
    if (kKind == QuantKind::kQ8) {
      for (size_t c = 0; c < kQuantGroup / 4; ++c) {
        __m512i wv[kP];
        for (int p = 0; p < kP; ++p) {
          const uint8_t* chunk = values + p * panel_bytes + c * kQuantChunkBytes;
          wv[p] = _mm512_loadu_si512(chunk);
        }
        for (int b = 0; b < kB; ++b) {
          const __m512i xv = BroadcastX4(xg + b * padded + 4 * c);
          for (int p = 0; p < kP; ++p) dot[b][p] = _mm512_dpbusd_epi32(dot[b][p], wv[p], xv);
        }
      }
    } else {
      // Low nibbles as they are; high nibbles masked in place (16 x their value) into a
      // second accumulator, divided by 16 (exactly) at the end of the group: no shift
      // per block, and two shorter dependency chains.
      const __m512i low_mask = _mm512_set1_epi8(0x0F);
      const __m512i high_mask = _mm512_set1_epi8(static_cast<char>(0xF0));
      __m512i high[kB][kP];
      for (int b = 0; b < kB; ++b) {
        for (int p = 0; p < kP; ++p) high[b][p] = _mm512_setzero_si512();
      }
      for (size_t j = 0; j < 4; ++j) {
        __m512i lo[kP], hi[kP];
        for (int p = 0; p < kP; ++p) {
          const __m512i raw =
              _mm512_loadu_si512(values + p * panel_bytes + j * kQuantChunkBytes);
          lo[p] = _mm512_and_si512(raw, low_mask);   // chunk j
          hi[p] = _mm512_and_si512(raw, high_mask);  // 16 x chunk j + 4
        }
        for (int b = 0; b < kB; ++b) {
          const __m512i xlo = BroadcastX4(xg + b * padded + 4 * j);
          const __m512i xhi = BroadcastX4(xg + b * padded + 4 * (j + 4));
          for (int p = 0; p < kP; ++p) {
            dot[b][p] = _mm512_dpbusd_epi32(dot[b][p], lo[p], xlo);
            high[b][p] = _mm512_dpbusd_epi32(high[b][p], hi[p], xhi);
          }
        }
      }
      for (int b = 0; b < kB; ++b) {
        for (int p = 0; p < kP; ++p) {
          dot[b][p] = _mm512_add_epi32(dot[b][p], _mm512_srai_epi32(high[b][p], 4));
        }
      }
    }
    // acc += float(dot) * (wscale * xscale), as MulAdd(ConvertTo(dot), Mul(ws, xs), acc).
    for (int p = 0; p < kP; ++p) {
      const __m512 ws = _mm512_cvtph_ps(_mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(values + p * panel_bytes + kScales)));
      for (int b = 0; b < kB; ++b) {
        const __m512 scale = _mm512_mul_ps(ws, _mm512_set1_ps(xscales[b * groups + g]));
        acc[b][p] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[b][p]), scale, acc[b][p]);
      }
    }
  }
  for (int p = 0; p < kP; ++p) {
    const size_t row = row0 + p * kQuantPanelRows;
    if (row >= rows) break;
    for (int b = 0; b < kB; ++b) StoreRows(acc[b][p], rows - row, y + b * y_stride + row);
  }
}

// The last `left` (< kB + 1) batch rows: one block of exactly `left` rows.
template <QuantKind kKind, int kP, int kB>
EMBER_VNNI HWY_INLINE void VnniTail(const uint8_t* HWY_RESTRICT panel, size_t panel_bytes,
                                    size_t groups, const int8_t* HWY_RESTRICT xq,
                                    size_t padded, const float* HWY_RESTRICT xscales,
                                    const int32_t* HWY_RESTRICT xsums,
                                    float* HWY_RESTRICT y, size_t y_stride, size_t row0,
                                    size_t rows, size_t left) {
  if constexpr (kB > 0) {
    if (left == kB) {
      VnniBlock<kKind, kP, kB>(panel, panel_bytes, groups, xq, padded, xscales, xsums, y,
                               y_stride, row0, rows);
    } else {
      VnniTail<kKind, kP, kB - 1>(panel, panel_bytes, groups, xq, padded, xscales, xsums,
                                  y, y_stride, row0, rows, left);
    }
  }
}

// kP panels times the whole batch, kB rows at a time, then the remaining batch rows.
template <QuantKind kKind, int kP, int kB>
EMBER_VNNI HWY_NOINLINE void VnniPanels(const uint8_t* HWY_RESTRICT panel,
                                        size_t panel_bytes, size_t groups,
                                        const int8_t* HWY_RESTRICT xq,
                                        const float* HWY_RESTRICT xscales,
                                        const int32_t* HWY_RESTRICT xsums, size_t batch,
                                        float* HWY_RESTRICT y, size_t y_stride,
                                        size_t row0, size_t rows) {
  const size_t padded = groups * kQuantGroup;
  size_t b = 0;
  for (; b + kB <= batch; b += kB) {
    VnniBlock<kKind, kP, kB>(panel, panel_bytes, groups, xq + b * padded, padded,
                             xscales + b * groups, xsums + b * groups, y + b * y_stride,
                             y_stride, row0, rows);
  }
  if (b < batch) {
    VnniTail<kKind, kP, kB - 1>(panel, panel_bytes, groups, xq + b * padded, padded,
                                xscales + b * groups, xsums + b * groups, y + b * y_stride,
                                y_stride, row0, rows, batch - b);
  }
}

// The MatMulQuantFn: blocks of kP panels (decode: kB = 1), then single panels.
template <QuantKind kKind, int kP, int kB>
EMBER_VNNI void MatMulQuantVnni(const uint8_t* HWY_RESTRICT w, const int8_t* HWY_RESTRICT xq,
                     const float* HWY_RESTRICT xscales, const int32_t* HWY_RESTRICT xsums,
                     size_t batch, float* HWY_RESTRICT y, size_t y_stride, size_t rows,
                     size_t cols) {
  const size_t groups = QuantGroups(cols);
  const size_t panel_bytes = QuantPanelBytes(kKind, cols);
  const size_t panels = QuantPanels(rows);
  size_t p = 0;
  for (; p + kP <= panels; p += kP) {
    VnniPanels<kKind, kP, kB>(w + p * panel_bytes, panel_bytes, groups, xq, xscales, xsums,
                              batch, y, y_stride, p * kQuantPanelRows, rows);
  }
  // The rest in halving blocks (e.g. 6 panels: 4 + 2), not one panel at a time.
  if constexpr (kP > 1) {
    if (p < panels) {
      MatMulQuantVnni<kKind, kP / 2, kB>(w + p * panel_bytes, xq, xscales, xsums, batch,
                                         y + p * kQuantPanelRows,
                                         y_stride, rows - p * kQuantPanelRows, cols);
    }
  }
}

#undef EMBER_VNNI

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // HWY_TARGET == HWY_AVX3_DL
#endif  // EMBER_KERNELS_QUANT_VNNI_INL_H_
