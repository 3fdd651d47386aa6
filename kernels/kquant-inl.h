// Per-target K-quant (q4_k, q5_k, q6_k) matvec and matmul over the panels of
// kquant_layout.h, in portable Highway code; kquant_vnni-inl.h replaces them with
// AVX-512 VNNI on the AVX3_DL target (the float steps are MatMulKQuantFn's, so the two
// are bitwise identical there).
//
// Weights are unpacked to their q (q - 32 for q6_k) in 16-bit lanes and multiplied with
// the int8 activations as q8/q4's portable kernel does (quant-inl.h): each row's 4
// inputs of a chunk end in adjacent int32 lanes, summed into one lane per row. The
// SCALAR target (one lane) takes bytes out of 32-bit lanes instead.
#if defined(EMBER_KERNELS_KQUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_KQUANT_INL_H_
#undef EMBER_KERNELS_KQUANT_INL_H_
#else
#define EMBER_KERNELS_KQUANT_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "kernels/dcheck.h"
#include "kernels/kernel_table.h"
#include "kernels/kquant_layout.h"
#include "kernels/kquant_vnni-inl.h"
#include "kernels/quant-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Panels per block of the portable kernel (a few tens of KiB: in cache across a batch).
constexpr size_t kKPortablePanels = 4;

// Where one group of one super-block lies in a panel, for the rows from r0.
struct KGroupAt {
  const uint8_t* entry;   // the super-block's scale table entry, at row r0's d
  const uint8_t* scales;  // the super-block's sub-block scales, at row r0's byte
  const uint8_t* values;  // the group's values, at row r0's first byte (4 * r0)
};

template <KQuantKind kKind>
HWY_INLINE KGroupAt LocateGroup(const uint8_t* panel, size_t table_bytes, size_t block,
                                size_t j, size_t r0) {
  const uint8_t* super_block = panel + table_bytes + block * KQuantSuperBlockBytes(kKind);
  return {panel + block * KQuantTableEntryBytes(kKind) + 2 * r0, super_block + r0,
          super_block + KQuantScaleBytes(kKind) + j * KQuantGroupBytes(kKind) + 4 * r0};
}

// q4_k/q5_k: *ws = d * float(sc_j) and *wm = dmin * float(m_j) of the rows at `at`, for
// sub-block j (kquant_layout.h: low nibbles at 16k, 64 + 16k, high pairs at 128 + 16k).
template <class DF>
HWY_INLINE void AffineScales(DF df, const KGroupAt& at, size_t j, hn::Vec<DF>* ws,
                             hn::Vec<DF>* wm) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint8_t, DF> d8;
  const size_t k = j % 4;
  const int nibble = static_cast<int>(4 * (j / 4)), pair = static_cast<int>(2 * (j / 4));
  const auto low_sc = hn::PromoteTo(du, hn::LoadU(d8, at.scales + 16 * k));
  const auto low_m = hn::PromoteTo(du, hn::LoadU(d8, at.scales + 64 + 16 * k));
  const auto high = hn::PromoteTo(du, hn::LoadU(d8, at.scales + 128 + 16 * k));
  const auto n15 = hn::Set(du, 15u), n3 = hn::Set(du, 3u);
  const auto sc = hn::Or(hn::And(hn::ShiftRightSame(low_sc, nibble), n15),
                         hn::ShiftLeft<4>(hn::And(hn::ShiftRightSame(high, pair), n3)));
  const auto m =
      hn::Or(hn::And(hn::ShiftRightSame(low_m, nibble), n15),
             hn::ShiftLeft<4>(hn::And(hn::ShiftRightSame(high, 4 + pair), n3)));
  *ws = hn::Mul(LoadHalfScales(df, at.entry), hn::ConvertTo(df, hn::BitCast(di, sc)));
  *wm = hn::Mul(LoadHalfScales(df, at.entry + 32), hn::ConvertTo(df, hn::BitCast(di, m)));
}

// q6_k: the int8 scales of sub-block k for the rows at `at`, as int32.
template <class DI>
HWY_INLINE hn::Vec<DI> SymmetricScale(DI di, const KGroupAt& at, size_t k) {
  const hn::Rebind<int8_t, DI> d8;
  return hn::PromoteTo(
      di, hn::LoadU(d8, reinterpret_cast<const int8_t*>(at.scales) + 16 * k));
}

#if HWY_TARGET != HWY_SCALAR
// The weights of chunk c (q, or q - 32 for q6_k) for the lanes' bytes at values +
// offset: lane i of the result is byte i (row (offset + i) / 4 - r0, input i % 4).
template <KQuantKind kKind, class D16>
HWY_INLINE hn::Vec<D16> ChunkWeights(D16 d16, const uint8_t* HWY_RESTRICT values,
                                     size_t c, size_t offset) {
  const hn::RebindToUnsigned<D16> du;
  const hn::Rebind<uint8_t, D16> d8;
  auto v = hn::PromoteTo(du, hn::LoadU(d8, values + 64 * (c % 4) + offset));
  v = c < 4 ? hn::And(v, hn::Set(du, 15)) : hn::ShiftRight<4>(v);
  if (kKind == KQuantKind::kQ5K) {
    const auto high = hn::PromoteTo(du, hn::LoadU(d8, values + 256 + offset));
    v = hn::Or(v, hn::ShiftLeft<4>(hn::And(hn::ShiftRightSame(high, static_cast<int>(c)),
                                           hn::Set(du, 1))));
  }
  if (kKind == KQuantKind::kQ6K) {
    const auto high =
        hn::PromoteTo(du, hn::LoadU(d8, values + 256 + 64 * (c / 4) + offset));
    v = hn::Or(
        v, hn::ShiftLeft<4>(hn::And(
               hn::ShiftRightSame(high, static_cast<int>(2 * (c % 4))), hn::Set(du, 3))));
    return hn::Sub(hn::BitCast(d16, v), hn::Set(d16, 32));
  }
  return hn::BitCast(d16, v);
}

// The int32 dots of chunks [c0, c1) (their inputs times `pattern`, the group's
// activations as in PanelsTokenPortable) for the Lanes rows at values.
template <KQuantKind kKind, class D32>
HWY_INLINE hn::Vec<D32> ChunkDots(D32 d32, const uint8_t* HWY_RESTRICT values,
                                  const int16_t* HWY_RESTRICT pattern, size_t c0,
                                  size_t c1, int32_t /*offset_sum*/) {
  const hn::Repartition<int16_t, D32> d16;
  const size_t N = hn::Lanes(d32);
  // a: the first N/2 rows, b: the next N/2; 0/1: ReorderWidenMulAccumulate's two sums.
  auto a0 = hn::Zero(d32), a1 = hn::Zero(d32), b0 = hn::Zero(d32), b1 = hn::Zero(d32);
  for (size_t c = c0; c < c1; ++c) {
    const auto x = hn::Load(d16, pattern + c * 2 * N);
    a0 = hn::ReorderWidenMulAccumulate(d32, ChunkWeights<kKind>(d16, values, c, 0), x, a0,
                                       a1);
    b0 = hn::ReorderWidenMulAccumulate(d32, ChunkWeights<kKind>(d16, values, c, 2 * N), x,
                                       b0, b1);
  }
  const auto pa = hn::RearrangeToOddPlusEven(a0, a1);  // lane 2i + h: row i, half h
  const auto pb = hn::RearrangeToOddPlusEven(b0, b1);
  return hn::Add(hn::ConcatEven(d32, pb, pa), hn::ConcatOdd(d32, pb, pa));
}

// Per chunk c, the activations 4c .. 4c+3 of xg repeated over 2N int16 lanes.
template <class D32>
HWY_INLINE void ActivationPattern(D32 d32, const int8_t* HWY_RESTRICT xg,
                                  int16_t* HWY_RESTRICT pattern) {
  const hn::Repartition<int16_t, D32> d16;
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const hn::Repartition<uint32_t, decltype(d8)> du32;
  const size_t N = hn::Lanes(d32);
  for (size_t c = 0; c < 8; ++c) {
    uint32_t bits;
    memcpy(&bits, xg + 4 * c, 4);
    hn::Store(hn::PromoteTo(d16, hn::BitCast(d8, hn::Set(du32, bits))), d16,
              pattern + c * 2 * N);
  }
}
#else
// SCALAR: a row's 4 bytes of chunk c as one u32 lane, q unsigned (q6_k without the
// offset: ChunkDots subtracts 32 * the activations' sum).
template <KQuantKind kKind, class DU>
HWY_INLINE hn::Vec<DU> ChunkBytes(DU du, const uint8_t* HWY_RESTRICT values, size_t c) {
  const auto load = [&](size_t at) {
    return hn::LoadU(du, reinterpret_cast<const uint32_t*>(values + at));
  };
  const auto nibbles = hn::Set(du, 0x0F0F0F0Fu);
  const auto raw = load(64 * (c % 4));
  auto v = c < 4 ? hn::And(raw, nibbles) : hn::And(hn::ShiftRight<4>(raw), nibbles);
  if (kKind == KQuantKind::kQ5K) {
    v = hn::Or(
        v, hn::ShiftLeft<4>(hn::And(hn::ShiftRightSame(load(256), static_cast<int>(c)),
                                    hn::Set(du, 0x01010101u))));
  }
  if (kKind == KQuantKind::kQ6K) {
    v = hn::Or(v,
               hn::ShiftLeft<4>(hn::And(hn::ShiftRightSame(load(256 + 64 * (c / 4)),
                                                           static_cast<int>(2 * (c % 4))),
                                        hn::Set(du, 0x03030303u))));
  }
  return v;
}

template <KQuantKind kKind, class D32>
HWY_INLINE hn::Vec<D32> ChunkDots(D32 d32, const uint8_t* HWY_RESTRICT values,
                                  const int8_t* HWY_RESTRICT xg, size_t c0, size_t c1,
                                  int32_t offset_sum) {
  const hn::RebindToUnsigned<D32> du;
  auto dot = hn::Set(d32, kKind == KQuantKind::kQ6K ? -32 * offset_sum : 0);
  for (size_t c = c0; c < c1; ++c) {
    dot = AddByteDots(d32, ChunkBytes<kKind>(du, values, c), xg + 4 * c, dot);
  }
  return dot;
}
#endif  // HWY_TARGET != HWY_SCALAR

// Up to kKPortablePanels panels (`rows` rows from the first one's) for one token: the
// f32 outputs in acc[0, rows) (MatMulKQuantFn's operations).
template <KQuantKind kKind>
HWY_INLINE void KPanelsToken(const uint8_t* HWY_RESTRICT panel, size_t panel_bytes,
                             size_t cols, const int8_t* HWY_RESTRICT xb,
                             const float* HWY_RESTRICT xscales,
                             const int32_t* HWY_RESTRICT xsums,
                             const int32_t* HWY_RESTRICT xhalf_sums, size_t rows,
                             float* HWY_RESTRICT acc) {
  const hn::CappedTag<float, kQuantPanelRows> df;  // N lanes, N divides 16
  const hn::RebindToSigned<decltype(df)> d32;
  const size_t N = hn::Lanes(df);
  const size_t table_bytes = KQuantTableBytes(kKind, cols);
  for (size_t r = 0; r < kKPortablePanels * kQuantPanelRows; ++r) acc[r] = 0.0f;
#if HWY_TARGET != HWY_SCALAR
  HWY_ALIGN int16_t pattern[8 * 2 * kQuantPanelRows];
#endif
  for (size_t g = 0; g < cols / kQuantGroup; ++g) {
    const size_t block = g / kKQuantGroups, j = g % kKQuantGroups;
    const int8_t* xg = xb + g * kQuantGroup;
#if HWY_TARGET != HWY_SCALAR
    ActivationPattern(d32, xg, pattern);
    const int16_t* x = pattern;
#else
    const int8_t* x = xg;
#endif
    const float xs = xscales[g];
    const float xsum_scaled = xs * static_cast<float>(xsums[g]);
    const int32_t half0 = kKind == KQuantKind::kQ6K ? xhalf_sums[g] : 0;
    for (size_t row = 0; row < rows; row += N) {
      const KGroupAt at =
          LocateGroup<kKind>(panel + row / kQuantPanelRows * panel_bytes, table_bytes,
                             block, j, row % kQuantPanelRows);
      auto sum = hn::Load(df, acc + row);
      if (kKind == KQuantKind::kQ6K) {
        const auto dot0 = ChunkDots<kKind>(d32, at.values, x, 0, 4, half0);
        const auto dot1 = ChunkDots<kKind>(d32, at.values, x, 4, 8, xsums[g] - half0);
        const auto idot = hn::Add(hn::Mul(SymmetricScale(d32, at, 2 * j), dot0),
                                  hn::Mul(SymmetricScale(d32, at, 2 * j + 1), dot1));
        sum = hn::MulAdd(hn::ConvertTo(df, idot),
                         hn::Mul(LoadHalfScales(df, at.entry), hn::Set(df, xs)), sum);
      } else {
        hn::Vec<decltype(df)> ws, wm;
        AffineScales(df, at, j, &ws, &wm);
        const auto dot = ChunkDots<kKind>(d32, at.values, x, 0, 8, 0);
        sum = hn::MulAdd(hn::ConvertTo(df, dot), hn::Mul(ws, hn::Set(df, xs)), sum);
        sum = hn::NegMulAdd(wm, hn::Set(df, xsum_scaled), sum);
      }
      hn::Store(sum, df, acc + row);
    }
  }
}

template <KQuantKind kKind>
void MatMulKQuantPortable(const uint8_t* HWY_RESTRICT w, const int8_t* HWY_RESTRICT xq,
                          const float* HWY_RESTRICT xscales,
                          const int32_t* HWY_RESTRICT xsums,
                          const int32_t* HWY_RESTRICT xhalf_sums, size_t batch,
                          float* HWY_RESTRICT y, size_t y_stride, size_t rows,
                          size_t cols) {
  EMBER_DCHECK(batch == 1 || y_stride >= rows);
  EMBER_DCHECK(cols % kKQuantBlock == 0);
  const size_t groups = cols / kQuantGroup;
  const size_t panel_bytes = KQuantPanelBytes(kKind, cols);
  constexpr size_t kBlockRows = kKPortablePanels * kQuantPanelRows;
  for (size_t row0 = 0; row0 < rows; row0 += kBlockRows) {
    const size_t n = rows - row0 < kBlockRows ? rows - row0 : kBlockRows;
    const uint8_t* panel = w + row0 / kQuantPanelRows * panel_bytes;
    for (size_t b = 0; b < batch; ++b) {
      HWY_ALIGN float acc[kBlockRows];
      KPanelsToken<kKind>(panel, panel_bytes, cols, xq + b * cols, xscales + b * groups,
                          xsums + b * groups,
                          xhalf_sums ? xhalf_sums + b * groups : nullptr, n, acc);
      memcpy(y + b * y_stride + row0, acc, n * sizeof(float));
    }
  }
}

// This target's K-quant entries of the table (kquant.cc; the tests call it per target).
inline void FillKQuant(KernelTable* table) {
#if HWY_TARGET == HWY_AVX3_DL
  // Decode one panel at a time (one sequential stream, as q8/q4); prefill 2 panels x 4
  // tokens.
  table->matvec_q4k = &MatMulKQuantVnni<KQuantKind::kQ4K, 1, 1>;
  table->matmul_q4k = &MatMulKQuantVnni<KQuantKind::kQ4K, 2, 4>;
  table->matvec_q5k = &MatMulKQuantVnni<KQuantKind::kQ5K, 1, 1>;
  table->matmul_q5k = &MatMulKQuantVnni<KQuantKind::kQ5K, 2, 4>;
  table->matvec_q6k = &MatMulKQuantVnni<KQuantKind::kQ6K, 1, 1>;
  table->matmul_q6k = &MatMulKQuantVnni<KQuantKind::kQ6K, 2, 4>;
#else
  table->matvec_q4k = &MatMulKQuantPortable<KQuantKind::kQ4K>;
  table->matmul_q4k = &MatMulKQuantPortable<KQuantKind::kQ4K>;
  table->matvec_q5k = &MatMulKQuantPortable<KQuantKind::kQ5K>;
  table->matmul_q5k = &MatMulKQuantPortable<KQuantKind::kQ5K>;
  table->matvec_q6k = &MatMulKQuantPortable<KQuantKind::kQ6K>;
  table->matmul_q6k = &MatMulKQuantPortable<KQuantKind::kQ6K>;
#endif
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_KQUANT_INL_H_
