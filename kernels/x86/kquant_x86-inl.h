// The x86 K-quant (q4_k, q5_k, q6_k) matvec and matmul, written once for every int8
// path: kquant_x86.cc includes this file inside one namespace per path, after defining
// there `Ops` (quant_x86_ops.h) and EMBER_X86 (the path's target attribute), as
// quant_x86-inl.h is for q8/q4. The integer dots and float steps are MatMulKQuantFn's,
// as in kquant-inl.h's portable kernel, so every path is bitwise equal to it (on FMA
// targets) and to the others.
//
// q4_k/q5_k values are unsigned (0..15, 0..31): direct operands of Ops::DotSmall (4-way
// u8 x s8 dot products into int32), no offset. q6_k's are q - 32: its dots start at -32
// times the activation sum of each half group. The high bits of q5_k/q6_k move into
// place with 16-bit shifts: a byte's bit 4 (bits 4, 5) never receives a bit of its
// neighbour for the shifts used (left <= 4, right <= 3).

// (low_nibbles & 15) | (top_at_4 & 0x30): a 6-bit value from its planes.
EMBER_X86 inline __attribute__((always_inline)) typename Ops::VI MergeSixBits(
    typename Ops::VI low_nibbles, typename Ops::VI top_at_4) {
  return Ops::Or(Ops::And(low_nibbles, Ops::Set8(0x0F)),
                 Ops::And(top_at_4, Ops::Set8(0x30)));
}

// q4_k/q5_k: the 6-bit sc[k] and m[k] of a panel's 16 rows for a whole super-block, as
// bytes (out + 16k + r: sc[k]; out + 128 + 16k + r: m[k]), decoded from kquant_layout.h's
// planes (low nibbles at 0 and 64, high pairs at 128), a vector at a time.
EMBER_X86 inline __attribute__((always_inline)) void AffineScaleBytes(
    const uint8_t* __restrict__ scales, uint8_t* __restrict__ out) {
  for (size_t at = 0; at < 64; at += Ops::kBytes) {
    const typename Ops::VI sc_low = Ops::Load(scales + at);
    const typename Ops::VI m_low = Ops::Load(scales + 64 + at);
    const typename Ops::VI high = Ops::Load(scales + 128 + at);
    Ops::Store(out + at, MergeSixBits(sc_low, Ops::template ShiftLeft16<4>(high)));
    Ops::Store(out + 64 + at, MergeSixBits(Ops::template ShiftRight16<4>(sc_low),
                                           Ops::template ShiftLeft16<2>(high)));
    Ops::Store(out + 128 + at, MergeSixBits(m_low, high));
    Ops::Store(out + 192 + at, MergeSixBits(Ops::template ShiftRight16<4>(m_low),
                                            Ops::template ShiftRight16<2>(high)));
  }
}

// kP consecutive panels (the first at `panel`, holding row row0) times kB tokens of xq
// (stride cols): y[b * y_stride + r] for the panels' rows below `rows`.
template <KQuantKind kKind, int kP, int kB>
EMBER_X86 inline __attribute__((always_inline)) void KBlock(
    const uint8_t* __restrict__ panel, size_t panel_bytes, size_t cols,
    const int8_t* __restrict__ xq, const float* __restrict__ xscales,
    const int32_t* __restrict__ xsums, const int32_t* __restrict__ xhalf_sums,
    float* __restrict__ y, size_t y_stride, size_t row0, size_t rows) {
  using VI = typename Ops::VI;
  constexpr int kV = Ops::kVecs;  // vectors per panel
  const size_t groups = cols / kQuantGroup;
  const size_t table_bytes = KQuantTableBytes(kKind, cols);
  const VI low_mask = Ops::Set8(0x0F), bit4 = Ops::Set8(0x10), bits45 = Ops::Set8(0x30);
  typename Ops::VF acc[kB][kP * kV];
  for (int b = 0; b < kB; ++b) {
    for (int v = 0; v < kP * kV; ++v) acc[b][v] = Ops::ZeroF();
  }
  alignas(64) uint8_t scale_bytes[kP][256];  // q4_k/q5_k: AffineScaleBytes
  // Decode: every line up to x86::kDecodePrefetchBytes past what a group reads, once.
  uintptr_t prefetched[kP];
  for (int p = 0; p < kP; ++p) {
    prefetched[p] = (reinterpret_cast<uintptr_t>(panel) + p * panel_bytes +
                     x86::kDecodePrefetchBytes) &
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
      for (int p = 0; p < kP; ++p) {
        AffineScaleBytes(super_block + p * panel_bytes, scale_bytes[p]);
      }
    }
    if constexpr (kB == 1) {
      // One sequential stream (see quant_x86-inl.h's decode; prefetches never fault),
      // prefetched line by line: one prefetch per group, as q8/q4 issue, left q5_k and
      // q6_k (5 and 6 lines a group besides the scales) at half the read bandwidth.
      for (int p = 0; p < kP; ++p) {
        const uintptr_t want = reinterpret_cast<uintptr_t>(values) + p * panel_bytes +
                               KQuantGroupBytes(kKind) + x86::kDecodePrefetchBytes;
        for (; prefetched[p] < want; prefetched[p] += 64) {
          _mm_prefetch(reinterpret_cast<const char*>(prefetched[p]), _MM_HINT_T1);
        }
      }
    }
    // dot: chunks 0..3 (q6_k: the first half), high: chunks 4..7.
    VI dot[kB][kP * kV], high[kB][kP * kV];
    for (int b = 0; b < kB; ++b) {
      VI start0 = Ops::Set32(0), start1 = Ops::Set32(0);
      if (kKind == KQuantKind::kQ6K) {
        const int32_t half = xhalf_sums[b * groups + g];
        start0 = Ops::Set32(-32 * half);
        start1 = Ops::Set32(-32 * (xsums[b * groups + g] - half));
      }
      for (int v = 0; v < kP * kV; ++v) {
        dot[b][v] = start0;
        high[b][v] = start1;
      }
    }
    VI planes[kP * kV][2];
    for (int p = 0; p < kP; ++p) {
      for (int v = 0; v < kV; ++v) {
        const uint8_t* at = values + p * panel_bytes + v * Ops::kBytes;
        if (kKind != KQuantKind::kQ4K) planes[p * kV + v][0] = Ops::Load(at + 256);
        if (kKind == KQuantKind::kQ6K) planes[p * kV + v][1] = Ops::Load(at + 320);
      }
    }
    for (int jj = 0; jj < 4; ++jj) {
      VI lo[kP * kV], hi[kP * kV];
      for (int p = 0; p < kP; ++p) {
        for (int v = 0; v < kV; ++v) {
          const int pv = p * kV + v;
          const VI raw = Ops::Load(values + p * panel_bytes + 64 * jj + v * Ops::kBytes);
          lo[pv] = Ops::And(raw, low_mask);  // chunk jj
          hi[pv] =
              Ops::And(Ops::template ShiftRight16<4>(raw), low_mask);  // chunk jj + 4
          if (kKind == KQuantKind::kQ5K) {  // bit c of the plane is chunk c's bit 4
            lo[pv] = Ops::Or(lo[pv], Ops::And(Ops::Shift16(planes[pv][0], 4 - jj), bit4));
            hi[pv] = Ops::Or(hi[pv], Ops::And(Ops::Shift16(planes[pv][0], -jj), bit4));
          }
          if (kKind ==
              KQuantKind::kQ6K) {  // bits 2k, 2k+1 of plane h: chunk 4h + k's 4, 5
            lo[pv] = Ops::Or(lo[pv],
                             Ops::And(Ops::Shift16(planes[pv][0], 4 - 2 * jj), bits45));
            hi[pv] = Ops::Or(hi[pv],
                             Ops::And(Ops::Shift16(planes[pv][1], 4 - 2 * jj), bits45));
          }
        }
      }
      for (int b = 0; b < kB; ++b) {
        const VI xlo = Ops::Broadcast4(xg + b * cols + 4 * jj);
        const VI xhi = Ops::Broadcast4(xg + b * cols + 16 + 4 * jj);
        for (int v = 0; v < kP * kV; ++v) {
          dot[b][v] = Ops::DotSmall(dot[b][v], lo[v], xlo);
          high[b][v] = Ops::DotSmall(high[b][v], hi[v], xhi);
        }
      }
    }
    for (int p = 0; p < kP; ++p) {
      for (int v = 0; v < kV; ++v) {
        const int pv = p * kV + v;
        const size_t r0 = v * Ops::kRows;  // the vector's first row in the panel
        const uint8_t* entry = panel + p * panel_bytes + table_at;
        const uint8_t* scales = super_block + p * panel_bytes;
        if (kKind == KQuantKind::kQ6K) {
          const VI sc0 = Ops::SignedBytes(scales + 16 * (2 * j) + r0);
          const VI sc1 = Ops::SignedBytes(scales + 16 * (2 * j + 1) + r0);
          const typename Ops::VF d = Ops::LoadScales(entry + 2 * r0);
          for (int b = 0; b < kB; ++b) {
            const VI idot =
                Ops::Add32(Ops::MulLo32(sc0, dot[b][pv]), Ops::MulLo32(sc1, high[b][pv]));
            acc[b][pv] =
                Ops::MulAddF(idot, Ops::MulF(d, xscales[b * groups + g]), acc[b][pv]);
          }
          continue;
        }
        // ws = d * float(sc_j), wm = dmin * float(m_j) (exact).
        const uint8_t* bytes = scale_bytes[p] + 16 * j + r0;
        const typename Ops::VF ws =
            Ops::Mul(Ops::LoadScales(entry + 2 * r0), Ops::ToFloat(Ops::Bytes(bytes)));
        const typename Ops::VF wm = Ops::Mul(Ops::LoadScales(entry + 32 + 2 * r0),
                                             Ops::ToFloat(Ops::Bytes(bytes + 128)));
        for (int b = 0; b < kB; ++b) {
          const VI total = Ops::Add32(dot[b][pv], high[b][pv]);
          const float xs = xscales[b * groups + g];
          const float xsum_scaled = xs * static_cast<float>(xsums[b * groups + g]);
          acc[b][pv] = Ops::MulAddF(total, Ops::MulF(ws, xs), acc[b][pv]);
          acc[b][pv] = Ops::NegMulAddF(wm, xsum_scaled, acc[b][pv]);
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
template <KQuantKind kKind, int kP, int kB>
EMBER_X86 inline __attribute__((always_inline)) void KTail(
    const uint8_t* __restrict__ panel, size_t panel_bytes, size_t cols,
    const int8_t* __restrict__ xq, const float* __restrict__ xscales,
    const int32_t* __restrict__ xsums, const int32_t* __restrict__ xhalf_sums,
    float* __restrict__ y, size_t y_stride, size_t row0, size_t rows, size_t left) {
  if constexpr (kB > 0) {
    if (left == kB) {
      KBlock<kKind, kP, kB>(panel, panel_bytes, cols, xq, xscales, xsums, xhalf_sums, y,
                            y_stride, row0, rows);
    } else {
      KTail<kKind, kP, kB - 1>(panel, panel_bytes, cols, xq, xscales, xsums, xhalf_sums,
                               y, y_stride, row0, rows, left);
    }
  }
}

// kP panels times the whole batch, kB tokens at a time, then the remaining tokens.
template <KQuantKind kKind, int kP, int kB>
EMBER_X86 __attribute__((noinline)) void KPanels(
    const uint8_t* __restrict__ panel, size_t panel_bytes, size_t cols,
    const int8_t* __restrict__ xq, const float* __restrict__ xscales,
    const int32_t* __restrict__ xsums, const int32_t* __restrict__ xhalf_sums,
    size_t batch, float* __restrict__ y, size_t y_stride, size_t row0, size_t rows) {
  const size_t groups = cols / kQuantGroup;
  const auto half = [&](size_t at) {
    return xhalf_sums ? xhalf_sums + at * groups : nullptr;
  };
  size_t b = 0;
  for (; b + kB <= batch; b += kB) {
    KBlock<kKind, kP, kB>(panel, panel_bytes, cols, xq + b * cols, xscales + b * groups,
                          xsums + b * groups, half(b), y + b * y_stride, y_stride, row0,
                          rows);
  }
  if (b < batch) {
    KTail<kKind, kP, kB - 1>(panel, panel_bytes, cols, xq + b * cols,
                             xscales + b * groups, xsums + b * groups, half(b),
                             y + b * y_stride, y_stride, row0, rows, batch - b);
  }
}

// The MatMulKQuantFn: blocks of kP panels (decode: kB = 1), the rest in halving blocks.
template <KQuantKind kKind, int kP, int kB>
EMBER_X86 void MatMulKQuant(const uint8_t* __restrict__ w, const int8_t* __restrict__ xq,
                            const float* __restrict__ xscales,
                            const int32_t* __restrict__ xsums,
                            const int32_t* __restrict__ xhalf_sums, size_t batch,
                            float* __restrict__ y, size_t y_stride, size_t rows,
                            size_t cols) {
  const size_t panel_bytes = KQuantPanelBytes(kKind, cols);
  const size_t panels = (rows + kQuantPanelRows - 1) / kQuantPanelRows;
  size_t p = 0;
  for (; p + kP <= panels; p += kP) {
    KPanels<kKind, kP, kB>(w + p * panel_bytes, panel_bytes, cols, xq, xscales, xsums,
                           xhalf_sums, batch, y, y_stride, p * kQuantPanelRows, rows);
  }
  if constexpr (kP > 1) {
    if (p < panels) {
      MatMulKQuant<kKind, kP / 2, kB>(w + p * panel_bytes, xq, xscales, xsums, xhalf_sums,
                                      batch, y + p * kQuantPanelRows, y_stride,
                                      rows - p * kQuantPanelRows, cols);
    }
  }
}

// This path's K-quant kernels into k: decode one panel at a time (one sequential stream,
// as q8/q4), prefill kPrefillPanels panels x kPrefillTokens tokens.
template <int kPrefillPanels, int kPrefillTokens>
void KQuantPathKernels(Int8Kernels* k) {
  k->matvec_q4k = &MatMulKQuant<KQuantKind::kQ4K, 1, 1>;
  k->matmul_q4k = &MatMulKQuant<KQuantKind::kQ4K, kPrefillPanels, kPrefillTokens>;
  k->matvec_q5k = &MatMulKQuant<KQuantKind::kQ5K, 1, 1>;
  k->matmul_q5k = &MatMulKQuant<KQuantKind::kQ5K, kPrefillPanels, kPrefillTokens>;
  k->matvec_q6k = &MatMulKQuant<KQuantKind::kQ6K, 1, 1>;
  k->matmul_q6k = &MatMulKQuant<KQuantKind::kQ6K, kPrefillPanels, kPrefillTokens>;
}
