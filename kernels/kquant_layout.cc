// Scalar decoding of the K-quant panel layout (see kquant_layout.h).
#include "kernels/kquant_layout.h"

#include "kernels/half.h"

namespace ember::kernels {

bool KQuantsBuiltIn() { return true; }

void GetKQuantBlock(KQuantKind kind, const uint8_t* packed, size_t cols, size_t row,
                    size_t block, KQuantBlockValues* out) {
  const KQuantBlockBytes at = LocateKQuantBlock(kind, packed, cols, row, block);
  out->d = LoadBits16(at.table);
  out->dmin = kind == KQuantKind::kQ6K ? 0 : LoadBits16(at.table + 32);
  if (kind == KQuantKind::kQ6K) {
    for (int k = 0; k < 16; ++k) out->scales[k] = static_cast<int8_t>(at.scales[16 * k]);
  } else {
    for (int j = 0; j < 8; ++j) {
      const int k = j % 4, nibble = 4 * (j / 4), pair = 2 * (j / 4);
      const unsigned high = at.scales[128 + 16 * k];
      out->scales[j] = static_cast<int16_t>(((at.scales[16 * k] >> nibble) & 15) |
                                            ((high >> pair) & 3) << 4);
      out->mins[j] = static_cast<uint8_t>(((at.scales[64 + 16 * k] >> nibble) & 15) |
                                          ((high >> (4 + pair)) & 3) << 4);
    }
  }
  for (size_t i = 0; i < kKQuantBlock; ++i) {
    const uint8_t* group = at.groups + i / 32 * KQuantGroupBytes(kind);
    const size_t ii = i % 32, c = ii / 4, lane = ii % 4;
    unsigned q = (group[KQuantNibbleByte(ii)] >> KQuantNibbleShift(ii)) & 15;
    if (kind == KQuantKind::kQ5K) q |= ((group[256 + lane] >> c) & 1) << 4;
    if (kind == KQuantKind::kQ6K) {
      q |= ((group[256 + 64 * (c / 4) + lane] >> (2 * (c % 4))) & 3) << 4;
    }
    out->q[i] = static_cast<uint8_t>(q);
  }
}

void KQuantBlockWeights(KQuantKind kind, const KQuantBlockValues& b, float* out) {
  const float d = HalfToFloat(b.d);
  if (kind == KQuantKind::kQ6K) {
    for (size_t i = 0; i < kKQuantBlock; ++i) {
      out[i] = d * static_cast<float>(b.scales[i / 16]) * static_cast<float>(b.q[i] - 32);
    }
    return;
  }
  const float dmin = HalfToFloat(b.dmin);
  for (size_t i = 0; i < kKQuantBlock; ++i) {
    const float scale = d * static_cast<float>(b.scales[i / 32]);  // exact
    const float min = dmin * static_cast<float>(b.mins[i / 32]);   // exact
    out[i] = scale * static_cast<float>(b.q[i]) - min;
  }
}

void DequantizeKQuantRow(KQuantKind kind, const uint8_t* packed, size_t cols, size_t row,
                         float* out) {
  KQuantBlockValues values;
  for (size_t s = 0; s < KQuantSuperBlocks(cols); ++s) {
    GetKQuantBlock(kind, packed, cols, row, s, &values);
    KQuantBlockWeights(kind, values, out + s * kKQuantBlock);
  }
}

}  // namespace ember::kernels
