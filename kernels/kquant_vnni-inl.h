// AVX-512 VNNI (vpdpbusd) K-quant matvec and matmul, for Highway's AVX3_DL target only
// (why intrinsics: quant_vnni-inl.h). The integer dots and float steps are
// MatMulKQuantFn's, as in kquant-inl.h's portable kernel, so the two are bitwise equal.
//
// q4_k/q5_k values are unsigned (0..15, 0..31): direct vpdpbusd operands, no offset.
// q6_k's are q - 32: its dots start at -32 * the activation sum of each half group. The
// high bits of q5_k/q6_k move into place with 16-bit shifts: a byte's bit 4 (bits 4, 5)
// never receives a bit of its neighbour for the shifts used (left <= 4, right <= 3).
#if defined(EMBER_KERNELS_KQUANT_VNNI_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_KQUANT_VNNI_INL_H_
#undef EMBER_KERNELS_KQUANT_VNNI_INL_H_
#else
#define EMBER_KERNELS_KQUANT_VNNI_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"
#include "kernels/quant_vnni-inl.h"  // BroadcastX4, StoreRows, kDecodePrefetchBytes

#if HWY_TARGET == HWY_AVX3_DL
#include <immintrin.h>

#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

// With clang a function's own target attribute replaces Highway's AVX3_DL attributes
// (GCC adds to them), so name every extension used here (AVX3_DL has them all): the
// 16-bit shifts are AVX-512BW.
#define EMBER_KVNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))

// v shifted left by `left` bits (right by -left) in 16-bit lanes.
EMBER_KVNNI HWY_INLINE __m512i Shift16(__m512i v, int left) {
  return left >= 0 ? _mm512_sll_epi16(v, _mm_cvtsi32_si128(left))
                   : _mm512_srl_epi16(v, _mm_cvtsi32_si128(-left));
}

// 16 bytes at p as 16 int32 lanes (zero- or sign-extended).
EMBER_KVNNI HWY_INLINE __m512i Bytes32(const uint8_t* p) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
EMBER_KVNNI HWY_INLINE __m512i SignedBytes32(const uint8_t* p) {
  return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
EMBER_KVNNI HWY_INLINE __m512 Halves(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// q4_k/q5_k: the 6-bit sc[k] and m[k] of a panel's 16 rows for a whole super-block, as
// bytes (out + 16k + r: sc[k]; out + 128 + 16k + r: m[k]), decoded 64 bytes at a time
// from kquant_layout.h's planes (low nibbles at 0 and 64, high pairs at 128).
EMBER_KVNNI HWY_INLINE void VnniAffineScaleBytes(const uint8_t* scales, uint8_t* out) {
  const __m512i n15 = _mm512_set1_epi8(0x0F), pair = _mm512_set1_epi8(0x30);
  const __m512i sc_low = _mm512_loadu_si512(scales),
                m_low = _mm512_loadu_si512(scales + 64);
  const __m512i high = _mm512_loadu_si512(scales + 128);
  const auto merge = [&](__m512i low_nibbles, __m512i top_at_4) {
    return _mm512_or_si512(_mm512_and_si512(low_nibbles, n15),
                           _mm512_and_si512(top_at_4, pair));
  };
  _mm512_storeu_si512(out, merge(sc_low, _mm512_slli_epi16(high, 4)));  // sc[0..3]
  _mm512_storeu_si512(out + 64, merge(_mm512_srli_epi16(sc_low, 4),
                                      _mm512_slli_epi16(high, 2)));  // sc[4..7]
  _mm512_storeu_si512(out + 128, merge(m_low, high));                // m[0..3]
  _mm512_storeu_si512(out + 192, merge(_mm512_srli_epi16(m_low, 4),
                                       _mm512_srli_epi16(high, 2)));  // m[4..7]
}

// kP consecutive panels (the first at `panel`, holding row row0) times kB tokens of xq
// (stride cols): y[b * y_stride + r] for the panels' rows below `rows`.
template <KQuantKind kKind, int kP, int kB>
EMBER_KVNNI HWY_INLINE void KVnniBlock(
    const uint8_t* HWY_RESTRICT panel, size_t panel_bytes, size_t cols,
    const int8_t* HWY_RESTRICT xq, const float* HWY_RESTRICT xscales,
    const int32_t* HWY_RESTRICT xsums, const int32_t* HWY_RESTRICT xhalf_sums,
    float* HWY_RESTRICT y, size_t y_stride, size_t row0, size_t rows) {
  const size_t groups = cols / kQuantGroup;
  const size_t table_bytes = KQuantTableBytes(kKind, cols);
  const __m512i low_mask = _mm512_set1_epi8(0x0F);
  const __m512i bit4 = _mm512_set1_epi8(0x10), bits45 = _mm512_set1_epi8(0x30);
  __m512 acc[kB][kP];
  for (int b = 0; b < kB; ++b) {
    for (int p = 0; p < kP; ++p) acc[b][p] = _mm512_setzero_ps();
  }
  alignas(64) uint8_t scale_bytes[kP][256];  // q4_k/q5_k: VnniAffineScaleBytes
  // Decode: every line up to kDecodePrefetchBytes past what a group reads, once.
  uintptr_t prefetched[kP];
  for (int p = 0; p < kP; ++p) {
    prefetched[p] =
        (reinterpret_cast<uintptr_t>(panel) + p * panel_bytes + kDecodePrefetchBytes) &
        ~uintptr_t{63};
  }
  for (size_t g = 0; g < groups; ++g) {
    const size_t block = g / kKQuantGroups, j = g % kKQuantGroups;
    const size_t table_at = block * KQuantTableEntryBytes(kKind);
    const uint8_t* super_block =
        panel + table_bytes + block * KQuantSuperBlockBytes(kKind);
    const uint8_t* values =
        super_block + KQuantScaleBytes(kKind) + j * KQuantGroupBytes(kKind);
    const int8_t* xg = xq + g * kQuantGroup;
    if (kKind != KQuantKind::kQ6K && j == 0) {
      for (int p = 0; p < kP; ++p)
        VnniAffineScaleBytes(super_block + p * panel_bytes, scale_bytes[p]);
    }
    if constexpr (kB == 1) {
      // One sequential stream (see quant_vnni-inl.h's decode; prefetches never fault),
      // prefetched line by line: one prefetch per group, as q8/q4 issue, left q5_k and
      // q6_k (5 and 6 lines a group besides the scales) at half the read bandwidth.
      for (int p = 0; p < kP; ++p) {
        const uintptr_t want = reinterpret_cast<uintptr_t>(values) + p * panel_bytes +
                               KQuantGroupBytes(kKind) + kDecodePrefetchBytes;
        for (; prefetched[p] < want; prefetched[p] += 64) {
          _mm_prefetch(reinterpret_cast<const char*>(prefetched[p]), _MM_HINT_T1);
        }
      }
    }
    // dot: chunks 0..3 (q6_k: the first half), high: chunks 4..7.
    __m512i dot[kB][kP], high[kB][kP];
    for (int b = 0; b < kB; ++b) {
      __m512i start0 = _mm512_setzero_si512(), start1 = _mm512_setzero_si512();
      if (kKind == KQuantKind::kQ6K) {
        const int32_t half = xhalf_sums[b * groups + g];
        start0 = _mm512_set1_epi32(-32 * half);
        start1 = _mm512_set1_epi32(-32 * (xsums[b * groups + g] - half));
      }
      for (int p = 0; p < kP; ++p) {
        dot[b][p] = start0;
        high[b][p] = start1;
      }
    }
    __m512i planes[kP][2];
    for (int p = 0; p < kP; ++p) {
      if (kKind != KQuantKind::kQ4K) {
        planes[p][0] = _mm512_loadu_si512(values + p * panel_bytes + 256);
      }
      if (kKind == KQuantKind::kQ6K) {
        planes[p][1] = _mm512_loadu_si512(values + p * panel_bytes + 320);
      }
    }
    for (int jj = 0; jj < 4; ++jj) {
      __m512i lo[kP], hi[kP];
      for (int p = 0; p < kP; ++p) {
        const __m512i raw = _mm512_loadu_si512(values + p * panel_bytes + 64 * jj);
        lo[p] = _mm512_and_si512(raw, low_mask);                        // chunk jj
        hi[p] = _mm512_and_si512(_mm512_srli_epi16(raw, 4), low_mask);  // chunk jj + 4
        if (kKind == KQuantKind::kQ5K) {  // bit c of the plane is chunk c's bit 4
          lo[p] = _mm512_or_si512(lo[p],
                                  _mm512_and_si512(Shift16(planes[p][0], 4 - jj), bit4));
          hi[p] =
              _mm512_or_si512(hi[p], _mm512_and_si512(Shift16(planes[p][0], -jj), bit4));
        }
        if (kKind == KQuantKind::kQ6K) {  // bits 2k, 2k+1 of plane h: chunk 4h + k's 4, 5
          lo[p] = _mm512_or_si512(
              lo[p], _mm512_and_si512(Shift16(planes[p][0], 4 - 2 * jj), bits45));
          hi[p] = _mm512_or_si512(
              hi[p], _mm512_and_si512(Shift16(planes[p][1], 4 - 2 * jj), bits45));
        }
      }
      for (int b = 0; b < kB; ++b) {
        const __m512i xlo = BroadcastX4(xg + b * cols + 4 * jj);
        const __m512i xhi = BroadcastX4(xg + b * cols + 16 + 4 * jj);
        for (int p = 0; p < kP; ++p) {
          dot[b][p] = _mm512_dpbusd_epi32(dot[b][p], lo[p], xlo);
          high[b][p] = _mm512_dpbusd_epi32(high[b][p], hi[p], xhi);
        }
      }
    }
    for (int p = 0; p < kP; ++p) {
      const uint8_t* entry = panel + p * panel_bytes + table_at;
      const uint8_t* scales = super_block + p * panel_bytes;
      if (kKind == KQuantKind::kQ6K) {
        const __m512i sc0 = SignedBytes32(scales + 16 * (2 * j));
        const __m512i sc1 = SignedBytes32(scales + 16 * (2 * j + 1));
        const __m512 d = Halves(entry);
        for (int b = 0; b < kB; ++b) {
          const __m512i idot = _mm512_add_epi32(_mm512_mullo_epi32(sc0, dot[b][p]),
                                                _mm512_mullo_epi32(sc1, high[b][p]));
          const __m512 scale = _mm512_mul_ps(d, _mm512_set1_ps(xscales[b * groups + g]));
          acc[b][p] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(idot), scale, acc[b][p]);
        }
        continue;
      }
      // ws = d * float(sc_j), wm = dmin * float(m_j) (exact).
      const uint8_t* bytes = scale_bytes[p] + 16 * j;
      const __m512 ws = _mm512_mul_ps(Halves(entry), _mm512_cvtepi32_ps(Bytes32(bytes)));
      const __m512 wm =
          _mm512_mul_ps(Halves(entry + 32), _mm512_cvtepi32_ps(Bytes32(bytes + 128)));
      for (int b = 0; b < kB; ++b) {
        const __m512i total = _mm512_add_epi32(dot[b][p], high[b][p]);
        const float xs = xscales[b * groups + g];
        const float xsum_scaled = xs * static_cast<float>(xsums[b * groups + g]);
        acc[b][p] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total),
                                    _mm512_mul_ps(ws, _mm512_set1_ps(xs)), acc[b][p]);
        acc[b][p] = _mm512_fnmadd_ps(wm, _mm512_set1_ps(xsum_scaled), acc[b][p]);
      }
    }
  }
  for (int p = 0; p < kP; ++p) {
    const size_t row = row0 + p * kQuantPanelRows;
    if (row >= rows) break;
    for (int b = 0; b < kB; ++b) StoreRows(acc[b][p], rows - row, y + b * y_stride + row);
  }
}

// The last `left` (< kB + 1) tokens: one block of exactly `left` tokens.
template <KQuantKind kKind, int kP, int kB>
EMBER_KVNNI HWY_INLINE void KVnniTail(
    const uint8_t* HWY_RESTRICT panel, size_t panel_bytes, size_t cols,
    const int8_t* HWY_RESTRICT xq, const float* HWY_RESTRICT xscales,
    const int32_t* HWY_RESTRICT xsums, const int32_t* HWY_RESTRICT xhalf_sums,
    float* HWY_RESTRICT y, size_t y_stride, size_t row0, size_t rows, size_t left) {
  if constexpr (kB > 0) {
    if (left == kB) {
      KVnniBlock<kKind, kP, kB>(panel, panel_bytes, cols, xq, xscales, xsums, xhalf_sums,
                                y, y_stride, row0, rows);
    } else {
      KVnniTail<kKind, kP, kB - 1>(panel, panel_bytes, cols, xq, xscales, xsums,
                                   xhalf_sums, y, y_stride, row0, rows, left);
    }
  }
}

// kP panels times the whole batch, kB tokens at a time, then the remaining tokens.
template <KQuantKind kKind, int kP, int kB>
EMBER_KVNNI HWY_NOINLINE void KVnniPanels(
    const uint8_t* HWY_RESTRICT panel, size_t panel_bytes, size_t cols,
    const int8_t* HWY_RESTRICT xq, const float* HWY_RESTRICT xscales,
    const int32_t* HWY_RESTRICT xsums, const int32_t* HWY_RESTRICT xhalf_sums,
    size_t batch, float* HWY_RESTRICT y, size_t y_stride, size_t row0, size_t rows) {
  const size_t groups = cols / kQuantGroup;
  size_t b = 0;
  const auto half = [&](size_t at) {
    return xhalf_sums ? xhalf_sums + at * groups : nullptr;
  };
  for (; b + kB <= batch; b += kB) {
    KVnniBlock<kKind, kP, kB>(panel, panel_bytes, cols, xq + b * cols,
                              xscales + b * groups, xsums + b * groups, half(b),
                              y + b * y_stride, y_stride, row0, rows);
  }
  if (b < batch) {
    KVnniTail<kKind, kP, kB - 1>(panel, panel_bytes, cols, xq + b * cols,
                                 xscales + b * groups, xsums + b * groups, half(b),
                                 y + b * y_stride, y_stride, row0, rows, batch - b);
  }
}

// The MatMulKQuantFn: blocks of kP panels (decode: kB = 1), the rest in halving blocks.
template <KQuantKind kKind, int kP, int kB>
EMBER_KVNNI void MatMulKQuantVnni(const uint8_t* HWY_RESTRICT w,
                                  const int8_t* HWY_RESTRICT xq,
                                  const float* HWY_RESTRICT xscales,
                                  const int32_t* HWY_RESTRICT xsums,
                                  const int32_t* HWY_RESTRICT xhalf_sums, size_t batch,
                                  float* HWY_RESTRICT y, size_t y_stride, size_t rows,
                                  size_t cols) {
  const size_t panel_bytes = KQuantPanelBytes(kKind, cols);
  const size_t panels = (rows + kQuantPanelRows - 1) / kQuantPanelRows;
  size_t p = 0;
  for (; p + kP <= panels; p += kP) {
    KVnniPanels<kKind, kP, kB>(w + p * panel_bytes, panel_bytes, cols, xq, xscales, xsums,
                               xhalf_sums, batch, y, y_stride, p * kQuantPanelRows, rows);
  }
  if constexpr (kP > 1) {
    if (p < panels) {
      MatMulKQuantVnni<kKind, kP / 2, kB>(w + p * panel_bytes, xq, xscales, xsums,
                                          xhalf_sums, batch, y + p * kQuantPanelRows,
                                          y_stride, rows - p * kQuantPanelRows, cols);
    }
  }
}

#undef EMBER_KVNNI

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // HWY_TARGET == HWY_AVX3_DL
#endif  // EMBER_KERNELS_KQUANT_VNNI_INL_H_
