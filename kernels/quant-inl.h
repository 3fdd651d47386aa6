// Per-target int8 kernels over q8/q4 panels (quant_layout.h): activation quantization,
// and the quantized matvec (decode) and matmul (prefill) in portable Highway code. The
// ISA tier's int8 path (quant_x86.cc, dotprod_arm.cc) replaces the products where it
// has one.
//
// Every output y[b, r] takes the same operations in every kernel of one target: per
// group g in order, the exact int32 dot d = sum_i u(r, i) xq(b, i) - offset * xsum(b, g)
// (u = q + offset as stored), then acc = MulAdd(float(d), wscale(r, g) * xscale(b, g),
// acc). So decode and prefill rows are bitwise identical, whatever the blocking.
#if defined(EMBER_KERNELS_QUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_QUANT_INL_H_
#undef EMBER_KERNELS_QUANT_INL_H_
#else
#define EMBER_KERNELS_QUANT_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "kernels/dcheck.h"
#include "kernels/kernel_table.h"
#include "kernels/quant_layout.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ------------------------------ QuantizeActs (contract in kernel_table.h)

inline void QuantizeActs(const float* HWY_RESTRICT x, size_t batch, size_t cols,
                         int8_t* HWY_RESTRICT q, float* HWY_RESTRICT scales,
                         int32_t* HWY_RESTRICT sums, int32_t* HWY_RESTRICT half_sums) {
  static_assert(kQuantGroup == 32, "QuantizeGroup32 quantizes groups of 32");
  const size_t groups = QuantGroups(cols);
  const size_t padded = groups * kQuantGroup;
  for (size_t b = 0; b < batch; ++b) {
    for (size_t g = 0; g < groups; ++g) {
      const size_t begin = g * kQuantGroup;
      const size_t n = cols - begin < kQuantGroup ? cols - begin : kQuantGroup;
      const float* xg = x + b * cols + begin;
      HWY_ALIGN float buf[kQuantGroup];
      if (n < kQuantGroup) {  // the last, partial group: zero padded
        memset(buf, 0, sizeof(buf));
        memcpy(buf, xg, n * sizeof(float));
        xg = buf;
      }
      int8_t* qg = q + b * padded + begin;
      scales[b * groups + g] = QuantizeGroup32(xg, qg, sums + b * groups + g);
      if (half_sums) {  // scalar: vectors may be wider than 16 lanes
        int32_t half = 0;
        for (size_t i = 0; i < kQuantGroup / 2; ++i) half += qg[i];
        half_sums[b * groups + g] = half;
      }
    }
  }
}

// ------------------------------ Portable int8 products

// acc += the four byte products of each u32 lane of `packed` (bytes = inputs 4c..4c+3 of
// one row, each 0..255) with x4[0..3]. Lane-wise only, so any vector width works.
template <class DI, class VU>
HWY_INLINE hn::Vec<DI> AddByteDots(DI di, VU packed, const int8_t* HWY_RESTRICT x4,
                                   hn::Vec<DI> acc) {
  const hn::RebindToUnsigned<DI> du;
  const auto mask = hn::Set(du, 0xFFu);
  const auto b0 = hn::BitCast(di, hn::And(packed, mask));
  const auto b1 = hn::BitCast(di, hn::And(hn::ShiftRight<8>(packed), mask));
  const auto b2 = hn::BitCast(di, hn::And(hn::ShiftRight<16>(packed), mask));
  const auto b3 = hn::BitCast(di, hn::ShiftRight<24>(packed));
  acc = hn::Add(acc, hn::Mul(b0, hn::Set(di, x4[0])));
  acc = hn::Add(acc, hn::Mul(b1, hn::Set(di, x4[1])));
  acc = hn::Add(acc, hn::Mul(b2, hn::Set(di, x4[2])));
  return hn::Add(acc, hn::Mul(b3, hn::Set(di, x4[3])));
}

// The int32 dots of rows [row0, row0 + Lanes) of one panel with group g of xq (offset
// removed): the chunk bytes of a row are one u32 lane.
template <QuantKind kKind, class DI>
HWY_INLINE hn::Vec<DI> GroupDotsPortable(DI di, const uint8_t* HWY_RESTRICT values,
                                         size_t row0, const int8_t* HWY_RESTRICT xg,
                                         int32_t xsum) {
  const hn::RebindToUnsigned<DI> du;
  const uint8_t* base = values + row0 * 4;
  auto dot = hn::Set(di, -(kKind == QuantKind::kQ8 ? 128 : 8) * xsum);
  if (kKind == QuantKind::kQ8) {
    for (size_t c = 0; c < kQuantGroup / 4; ++c) {
      const auto v = hn::LoadU(
          du, reinterpret_cast<const uint32_t*>(base + c * kQuantChunkBytes));
      dot = AddByteDots(di, v, xg + 4 * c, dot);
    }
  } else {
    const auto nibbles = hn::Set(du, 0x0F0F0F0Fu);
    for (size_t j = 0; j < 4; ++j) {
      const auto v = hn::LoadU(
          du, reinterpret_cast<const uint32_t*>(base + j * kQuantChunkBytes));
      dot = AddByteDots(di, hn::And(v, nibbles), xg + 4 * j, dot);
      dot = AddByteDots(di, hn::And(hn::ShiftRight<4>(v), nibbles), xg + 4 * (j + 4),
                        dot);
    }
  }
  return dot;
}

// f32 of the 16-bit float scales scale_bits[0, Lanes).
template <class DF>
HWY_INLINE hn::Vec<DF> LoadHalfScales(DF df, const uint8_t* HWY_RESTRICT scale_bits) {
  const hn::Rebind<hwy::float16_t, DF> dh;
  return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(
                                             scale_bits)));
}

// Stores the first n (<= Lanes) lanes of v to out.
template <class DF>
HWY_INLINE void StoreFirst(DF df, hn::Vec<DF> v, size_t n, float* HWY_RESTRICT out) {
  if (n == hn::Lanes(df)) {
    hn::StoreU(v, df, out);
  } else {
    HWY_ALIGN float buf[kQuantPanelRows];
    hn::Store(v, df, buf);
    memcpy(out, buf, n * sizeof(float));
  }
}

// One panel times one token by byte extraction and 32-bit multiplies (any vector width,
// SCALAR included): y[0, n) for the panel's first n rows.
template <QuantKind kKind>
HWY_INLINE void MatVecPanelBytewise(const uint8_t* HWY_RESTRICT panel, size_t groups,
                                    const int8_t* HWY_RESTRICT xb,
                                    const float* HWY_RESTRICT xscales,
                                    const int32_t* HWY_RESTRICT xsums, size_t n,
                                    float* HWY_RESTRICT y) {
  const hn::CappedTag<float, kQuantPanelRows> df;  // divides 16 on every target
  const hn::RebindToSigned<decltype(df)> di;
  const size_t N = hn::Lanes(df);
  constexpr size_t kGroupBytes = QuantGroupBytes(kKind);
  constexpr size_t kScales = QuantGroupValueBytes(kKind);  // within a group
  for (size_t r0 = 0; r0 < n; r0 += N) {
    auto acc = hn::Zero(df);
    for (size_t g = 0; g < groups; ++g) {
      const uint8_t* group = panel + g * kGroupBytes;
      const auto dot =
          GroupDotsPortable<kKind>(di, group, r0, xb + g * kQuantGroup, xsums[g]);
      const auto ws = LoadHalfScales(df, group + kScales + r0 * 2);
      acc = hn::MulAdd(hn::ConvertTo(df, dot), hn::Mul(ws, hn::Set(df, xscales[g])), acc);
    }
    StoreFirst(df, acc, n - r0 < N ? n - r0 : N, y + r0);
  }
}

#if HWY_TARGET != HWY_SCALAR
// Vectors of >= 2 float lanes: int16 products summed in pairs into int32 lanes
// (ReorderWidenMulAccumulate, then RearrangeToOddPlusEven gives lane i = products 2i +
// 2i+1 on every target), so a row's 4 inputs of a chunk end in 2 adjacent lanes; the
// pairs of two vectors are then added by ConcatEven + ConcatOdd into one lane per row.
// About 2x fewer operations than byte extraction with 32-bit multiplies.
//
// Up to kPortablePanels panels (`rows` rows from the first one's) for one token: the f32
// outputs in acc[0, rows) (see the top comment). The activation patterns are built
// once per group for all the panels.
constexpr size_t kPortablePanels = 4;
template <QuantKind kKind>
HWY_INLINE void PanelsTokenPortable(const uint8_t* HWY_RESTRICT panel, size_t panel_bytes,
                                    size_t groups, const int8_t* HWY_RESTRICT xb,
                                    const float* HWY_RESTRICT xscales,
                                    const int32_t* HWY_RESTRICT xsums, size_t rows,
                                    float* HWY_RESTRICT acc) {
  const hn::CappedTag<float, kQuantPanelRows> df;  // N lanes, N divides 16
  const hn::RebindToSigned<decltype(df)> d32;
  const hn::Repartition<int16_t, decltype(d32)> d16;  // 2N lanes
  const hn::Rebind<uint8_t, decltype(d16)> du8;       // 2N bytes: N / 2 rows of a chunk
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const hn::Repartition<uint32_t, decltype(d8)> du32;
  const size_t N = hn::Lanes(df);
  constexpr int32_t kOffset = kKind == QuantKind::kQ8 ? 128 : 8;
  constexpr size_t kGroupBytes = QuantGroupBytes(kKind);
  constexpr size_t kScales = QuantGroupValueBytes(kKind);  // within a group
  // Per chunk c, the 4 activations 4c..4c+3 repeated over 2N int16 lanes.
  HWY_ALIGN int16_t pattern[8 * 2 * kQuantPanelRows];
  for (size_t r = 0; r < kPortablePanels * kQuantPanelRows; ++r) acc[r] = 0.0f;
  for (size_t g = 0; g < groups; ++g) {
    const int8_t* xg = xb + g * kQuantGroup;
    for (size_t c = 0; c < 8; ++c) {
      uint32_t bits;
      memcpy(&bits, xg + 4 * c, 4);
      hn::Store(hn::PromoteTo(d16, hn::BitCast(d8, hn::Set(du32, bits))), d16,
                pattern + c * 2 * N);
    }
    const auto start = hn::Set(d32, -kOffset * xsums[g]);
    const auto xs = hn::Set(df, xscales[g]);
    for (size_t row = 0; row < rows; row += N) {
      const size_t r0 = row % kQuantPanelRows;  // within panel row / 16
      const uint8_t* this_panel = panel + row / kQuantPanelRows * panel_bytes;
      const uint8_t* values = this_panel + g * kGroupBytes;
      // a: rows r0 .. r0 + N/2, b: the next N/2 rows; 0/1: Reorder's two sums.
      auto a0 = hn::Zero(d32), a1 = hn::Zero(d32), b0 = hn::Zero(d32), b1 = hn::Zero(d32);
      const uint8_t* base = values + r0 * 4;
      if (kKind == QuantKind::kQ8) {
        for (size_t c = 0; c < 8; ++c) {
          const auto x = hn::Load(d16, pattern + c * 2 * N);
          const uint8_t* chunk = base + c * kQuantChunkBytes;
          const auto wa = hn::BitCast(d16, hn::PromoteTo(hn::RebindToUnsigned<decltype(d16)>(),
                                                         hn::LoadU(du8, chunk)));
          const auto wb = hn::BitCast(d16, hn::PromoteTo(hn::RebindToUnsigned<decltype(d16)>(),
                                                         hn::LoadU(du8, chunk + 2 * N)));
          a0 = hn::ReorderWidenMulAccumulate(d32, wa, x, a0, a1);
          b0 = hn::ReorderWidenMulAccumulate(d32, wb, x, b0, b1);
        }
      } else {
        const auto low = hn::Set(d16, 0x0F);
        for (size_t j = 0; j < 4; ++j) {
          const auto xlo = hn::Load(d16, pattern + j * 2 * N);
          const auto xhi = hn::Load(d16, pattern + (j + 4) * 2 * N);
          const uint8_t* block = base + j * kQuantChunkBytes;
          const auto ra = hn::BitCast(d16, hn::PromoteTo(hn::RebindToUnsigned<decltype(d16)>(),
                                                         hn::LoadU(du8, block)));
          const auto rb = hn::BitCast(d16, hn::PromoteTo(hn::RebindToUnsigned<decltype(d16)>(),
                                                         hn::LoadU(du8, block + 2 * N)));
          a0 = hn::ReorderWidenMulAccumulate(d32, hn::And(ra, low), xlo, a0, a1);
          a0 = hn::ReorderWidenMulAccumulate(d32, hn::ShiftRight<4>(ra), xhi, a0, a1);
          b0 = hn::ReorderWidenMulAccumulate(d32, hn::And(rb, low), xlo, b0, b1);
          b0 = hn::ReorderWidenMulAccumulate(d32, hn::ShiftRight<4>(rb), xhi, b0, b1);
        }
      }
      const auto pa = hn::RearrangeToOddPlusEven(a0, a1);  // lane 2i + h: row i, half h
      const auto pb = hn::RearrangeToOddPlusEven(b0, b1);
      const auto dot = hn::Add(start, hn::Add(hn::ConcatEven(d32, pb, pa),
                                              hn::ConcatOdd(d32, pb, pa)));
      const auto ws = LoadHalfScales(df, values + kScales + r0 * 2);
      hn::Store(hn::MulAdd(hn::ConvertTo(df, dot), hn::Mul(ws, xs), hn::Load(df, acc + row)),
                df, acc + row);
    }
  }
}
#endif  // HWY_TARGET != HWY_SCALAR

template <QuantKind kKind>
void MatMulQuantPortable(const uint8_t* HWY_RESTRICT w, const int8_t* HWY_RESTRICT xq,
                         const float* HWY_RESTRICT xscales,
                         const int32_t* HWY_RESTRICT xsums, size_t batch,
                         float* HWY_RESTRICT y, size_t y_stride, size_t rows,
                         size_t cols) {
  EMBER_DCHECK(batch == 1 || y_stride >= rows);
  const size_t groups = QuantGroups(cols);
  const size_t padded = groups * kQuantGroup;
  const size_t panel_bytes = QuantPanelBytes(kKind, cols);
#if HWY_TARGET == HWY_SCALAR
  for (size_t p = 0; p * kQuantPanelRows < rows; ++p) {
    const size_t row0 = p * kQuantPanelRows;
    const size_t n = rows - row0 < kQuantPanelRows ? rows - row0 : kQuantPanelRows;
    for (size_t b = 0; b < batch; ++b) {
      MatVecPanelBytewise<kKind>(w + p * panel_bytes, groups, xq + b * padded,
                                 xscales + b * groups, xsums + b * groups, n,
                                 y + b * y_stride + row0);
    }
  }
#else
  // Blocks of kPortablePanels panels (a few tens of KiB: they stay in cache across the
  // batch).
  constexpr size_t kBlockRows = kPortablePanels * kQuantPanelRows;
  for (size_t row0 = 0; row0 < rows; row0 += kBlockRows) {
    const size_t n = rows - row0 < kBlockRows ? rows - row0 : kBlockRows;
    const uint8_t* panel = w + row0 / kQuantPanelRows * panel_bytes;
    for (size_t b = 0; b < batch; ++b) {
      HWY_ALIGN float acc[kBlockRows];
      PanelsTokenPortable<kKind>(panel, panel_bytes, groups, xq + b * padded,
                                 xscales + b * groups, xsums + b * groups, n, acc);
      memcpy(y + b * y_stride + row0, acc, n * sizeof(float));
    }
  }
#endif
}

// This target's entries of the table (quant.cc; the tests call it per target).
inline void FillQuant(KernelTable* table) {
  table->quantize_acts = &QuantizeActs;
  table->matvec_q8 = &MatMulQuantPortable<QuantKind::kQ8>;
  table->matmul_q8 = &MatMulQuantPortable<QuantKind::kQ8>;
  table->matvec_q4 = &MatMulQuantPortable<QuantKind::kQ4>;
  table->matmul_q4 = &MatMulQuantPortable<QuantKind::kQ4>;
  table->int8_dot = "highway";
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_QUANT_INL_H_
