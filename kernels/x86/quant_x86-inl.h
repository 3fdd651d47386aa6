// The x86 q8/q4 matvec and matmul over panels (quant_layout.h), written once for every
// int8 path: quant_x86.cc includes this file inside one namespace per path, after
// defining there `Ops` (the path's vector type and its int8 products) and EMBER_X86
// (the function attribute naming the path's target features: the attribute must be on
// every function the intrinsics inline into, so the template cannot be shared across
// paths; clang replaces, GCC extends, the file's default target with it).
//
// Every output takes the operations of quant-inl.h's portable kernel: per group g in
// order, the exact int32 dot of (q8, q4) values with the activations, then
// acc = fma(float(dot), wscale * xscale, acc). So all paths, decode and prefill, give
// bitwise-identical rows (the tests check it), and equal the portable kernel on FMA
// targets.
//
// A chunk (64 bytes: 16 rows x 4 inputs) is Ops::kVecs vectors of Ops::kRows rows; the
// 4 activation bytes of a chunk are broadcast to every int32 lane. Blocks of kP panels x
// kB tokens share each weight load across kB tokens and each broadcast across kP panels.
//
// Precondition (QuantizeActs' contract): activations lie in [-127, 127]. The vpmaddubsw
// paths rely on it: |q8| <= 128 and |x| <= 127 keep a pair of products within int16.

// kP consecutive panels (the first at `panel`, holding row row0) times kB tokens of xq
// (stride `padded`): y[b * y_stride + r] for the panels' rows below `rows`.
template <QuantKind kKind, int kP, int kB>
EMBER_X86 inline __attribute__((always_inline)) void Block(
    const uint8_t* __restrict__ panel, size_t panel_bytes, size_t groups,
    const int8_t* __restrict__ xq, size_t padded, const float* __restrict__ xscales,
    const int32_t* __restrict__ xsums, float* __restrict__ y, size_t y_stride,
    size_t row0, size_t rows) {
  constexpr int kV = Ops::kVecs;  // vectors per panel
  constexpr size_t kGroupBytes = QuantGroupBytes(kKind);
  constexpr size_t kScales = QuantGroupValueBytes(kKind);  // within a group
  typename Ops::VF acc[kB][kP * kV];
  for (int b = 0; b < kB; ++b) {
    for (int v = 0; v < kP * kV; ++v) acc[b][v] = Ops::ZeroF();
  }
  for (size_t g = 0; g < groups; ++g) {
    const uint8_t* values = panel + g * kGroupBytes;
    const int8_t* xg = xq + g * kQuantGroup;
    if constexpr (kB == 1) {
      // Decode reads one panel at a time, so the matrix (and a thread's run of row tiles)
      // is one sequential stream. One L2 prefetch per group, kDecodePrefetchBytes ahead,
      // keeps the hardware prefetcher running across 4 KiB pages, into the next tile and,
      // as the file stores matrices in the order decode reads them, the next matrix.
      // Integer arithmetic: the address may lie past the matrix (prefetches never fault).
      for (int p = 0; p < kP; ++p) {
        const uintptr_t ahead = reinterpret_cast<uintptr_t>(values) + p * panel_bytes +
                                x86::kDecodePrefetchBytes;
        _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T1);
      }
    }
    typename Ops::VI dot[kB][kP * kV];
    if (kKind == QuantKind::kQ8) {
      for (int b = 0; b < kB; ++b) {
        const typename Ops::VI start =
            Ops::Set32(-Ops::kQ8Offset * xsums[b * groups + g]);
        for (int v = 0; v < kP * kV; ++v) dot[b][v] = start;
      }
      for (size_t c = 0; c < kQuantGroup / 4; ++c) {
        typename Ops::Q8Weights w[kP * kV];
        for (int p = 0; p < kP; ++p) {
          for (int v = 0; v < kV; ++v) {
            w[p * kV + v] = Ops::PrepareQ8(Ops::Load(
                values + p * panel_bytes + c * kQuantChunkBytes + v * Ops::kBytes));
          }
        }
        for (int b = 0; b < kB; ++b) {
          const typename Ops::VI x = Ops::Broadcast4(xg + b * padded + 4 * c);
          for (int v = 0; v < kP * kV; ++v) dot[b][v] = Ops::DotQ8(dot[b][v], w[v], x);
        }
      }
    } else {
      // Block j holds chunk j in its low nibbles, chunk j + 4 in its high ones.
      typename Ops::Q4Acc sums[kB][kP * kV];
      for (int b = 0; b < kB; ++b) {
        for (int v = 0; v < kP * kV; ++v) sums[b][v] = Ops::ZeroQ4();
      }
      for (size_t j = 0; j < 4; ++j) {
        typename Ops::VI lo[kP * kV], hi[kP * kV];
        for (int p = 0; p < kP; ++p) {
          for (int v = 0; v < kV; ++v) {
            Ops::SplitQ4(Ops::Load(values + p * panel_bytes + j * kQuantChunkBytes +
                                   v * Ops::kBytes),
                         &lo[p * kV + v], &hi[p * kV + v]);
          }
        }
        for (int b = 0; b < kB; ++b) {
          const typename Ops::VI xlo = Ops::Broadcast4(xg + b * padded + 4 * j);
          const typename Ops::VI xhi = Ops::Broadcast4(xg + b * padded + 4 * (j + 4));
          for (int v = 0; v < kP * kV; ++v) {
            sums[b][v] = Ops::DotQ4(sums[b][v], lo[v], xlo, hi[v], xhi);
          }
        }
      }
      for (int b = 0; b < kB; ++b) {
        // q4 is stored q + 8: subtract 8 * sum(xq).
        const typename Ops::VI start = Ops::Set32(-8 * xsums[b * groups + g]);
        for (int v = 0; v < kP * kV; ++v) dot[b][v] = Ops::FinishQ4(sums[b][v], start);
      }
    }
    // acc += float(dot) * (wscale * xscale), as MulAdd(ConvertTo(dot), Mul(ws, xs), acc).
    for (int p = 0; p < kP; ++p) {
      for (int v = 0; v < kV; ++v) {
        const typename Ops::VF ws =
            Ops::LoadScales(values + p * panel_bytes + kScales + v * Ops::kRows * 2);
        for (int b = 0; b < kB; ++b) {
          acc[b][p * kV + v] =
              Ops::MulAddF(dot[b][p * kV + v], Ops::MulF(ws, xscales[b * groups + g]),
                           acc[b][p * kV + v]);
        }
      }
    }
  }
  for (int v = 0; v < kP * kV; ++v) {
    const size_t row = row0 + v * Ops::kRows;
    if (row >= rows) break;
    for (int b = 0; b < kB; ++b)
      Ops::StoreRows(acc[b][v], rows - row, y + b * y_stride + row);
  }
}

// The last `left` (< kB + 1) tokens: one block of exactly `left` tokens.
template <QuantKind kKind, int kP, int kB>
EMBER_X86 inline __attribute__((always_inline)) void Tail(
    const uint8_t* __restrict__ panel, size_t panel_bytes, size_t groups,
    const int8_t* __restrict__ xq, size_t padded, const float* __restrict__ xscales,
    const int32_t* __restrict__ xsums, float* __restrict__ y, size_t y_stride,
    size_t row0, size_t rows, size_t left) {
  if constexpr (kB > 0) {
    if (left == kB) {
      Block<kKind, kP, kB>(panel, panel_bytes, groups, xq, padded, xscales, xsums, y,
                           y_stride, row0, rows);
    } else {
      Tail<kKind, kP, kB - 1>(panel, panel_bytes, groups, xq, padded, xscales, xsums, y,
                              y_stride, row0, rows, left);
    }
  }
}

// kP panels times the whole batch, kB tokens at a time, then the remaining tokens.
template <QuantKind kKind, int kP, int kB>
EMBER_X86 __attribute__((noinline)) void Panels(
    const uint8_t* __restrict__ panel, size_t panel_bytes, size_t groups,
    const int8_t* __restrict__ xq, const float* __restrict__ xscales,
    const int32_t* __restrict__ xsums, size_t batch, float* __restrict__ y,
    size_t y_stride, size_t row0, size_t rows) {
  const size_t padded = groups * kQuantGroup;
  size_t b = 0;
  for (; b + kB <= batch; b += kB) {
    Block<kKind, kP, kB>(panel, panel_bytes, groups, xq + b * padded, padded,
                         xscales + b * groups, xsums + b * groups, y + b * y_stride,
                         y_stride, row0, rows);
  }
  if (b < batch) {
    Tail<kKind, kP, kB - 1>(panel, panel_bytes, groups, xq + b * padded, padded,
                            xscales + b * groups, xsums + b * groups, y + b * y_stride,
                            y_stride, row0, rows, batch - b);
  }
}

// The MatMulQuantFn: blocks of kP panels (decode: kB = 1), the rest in halving blocks
// (e.g. 6 panels: 4 + 2), not one panel at a time.
template <QuantKind kKind, int kP, int kB>
EMBER_X86 void MatMul(const uint8_t* __restrict__ w, const int8_t* __restrict__ xq,
                      const float* __restrict__ xscales,
                      const int32_t* __restrict__ xsums, size_t batch,
                      float* __restrict__ y, size_t y_stride, size_t rows, size_t cols) {
  const size_t groups = QuantGroups(cols);
  const size_t panel_bytes = QuantPanelBytes(kKind, cols);
  const size_t panels = QuantPanels(rows);
  size_t p = 0;
  for (; p + kP <= panels; p += kP) {
    Panels<kKind, kP, kB>(w + p * panel_bytes, panel_bytes, groups, xq, xscales, xsums,
                          batch, y, y_stride, p * kQuantPanelRows, rows);
  }
  if constexpr (kP > 1) {
    if (p < panels) {
      MatMul<kKind, kP / 2, kB>(w + p * panel_bytes, xq, xscales, xsums, batch,
                                y + p * kQuantPanelRows, y_stride,
                                rows - p * kQuantPanelRows, cols);
    }
  }
}

// This path's kernels. Decode reads one panel at a time: the weights are one sequential
// stream, which a core reads faster than interleaved panel streams (on AVX-512 VNNI,
// single-thread q8 decode about 8 % and q4 about 30 % faster than 8 panels at a time;
// 2 and 4 panels measured no faster either, 2026-11-26). Prefill blocks kQ8Panels panels
// x 4 tokens for q8, kQ4Panels x kQ4Tokens for q4.
template <int kQ8Panels, int kQ4Panels, int kQ4Tokens>
void PathKernels(const char* name, Int8Kernels* k) {
  k->name = name;
  k->matvec_q8 = &MatMul<QuantKind::kQ8, 1, 1>;
  k->matmul_q8 = &MatMul<QuantKind::kQ8, kQ8Panels, 4>;
  k->matvec_q4 = &MatMul<QuantKind::kQ4, 1, 1>;
  k->matmul_q4 = &MatMul<QuantKind::kQ4, kQ4Panels, kQ4Tokens>;
}
