// GGML's K-quant blocks read, written, decoded and repacked into the panel layout (see
// kquant_pack.h).
#include "kernels/quantize/kquant_pack.h"

#include <cstring>

#include "kernels/half.h"

namespace ember::kernels {
namespace {

// Sets bits [shift, shift + width) of *byte to value.
void SetBits(uint8_t* byte, int shift, int width, unsigned value) {
  const unsigned mask = ((1u << width) - 1) << shift;
  *byte = static_cast<uint8_t>((*byte & ~mask) | ((value << shift) & mask));
}

}  // namespace

void PutKQuantBlock(KQuantKind kind, const KQuantBlockValues& in, size_t cols, size_t row,
                    size_t block, uint8_t* packed) {
  const KQuantBlockBytes at = LocateKQuantBlock(kind, packed, cols, row, block);
  StoreBits16(at.table, in.d);
  if (kind == KQuantKind::kQ6K) {
    for (int k = 0; k < 16; ++k) at.scales[16 * k] = static_cast<uint8_t>(in.scales[k]);
  } else {
    StoreBits16(at.table + 32, in.dmin);
    for (int j = 0; j < 8; ++j) {
      const int k = j % 4, nibble = 4 * (j / 4), pair = 2 * (j / 4);
      const unsigned sc = static_cast<unsigned>(in.scales[j]) & 63, m = in.mins[j] & 63u;
      SetBits(at.scales + 16 * k, nibble, 4, sc & 15);
      SetBits(at.scales + 64 + 16 * k, nibble, 4, m & 15);
      SetBits(at.scales + 128 + 16 * k, pair, 2, sc >> 4);
      SetBits(at.scales + 128 + 16 * k, 4 + pair, 2, m >> 4);
    }
  }
  for (size_t i = 0; i < kKQuantBlock; ++i) {
    uint8_t* group = at.groups + i / 32 * KQuantGroupBytes(kind);
    const size_t ii = i % 32, c = ii / 4, lane = ii % 4;
    const unsigned q = in.q[i];
    SetBits(group + KQuantNibbleByte(ii), KQuantNibbleShift(ii), 4, q & 15);
    if (kind == KQuantKind::kQ5K)
      SetBits(group + 256 + lane, static_cast<int>(c), 1, q >> 4);
    if (kind == KQuantKind::kQ6K) {
      SetBits(group + 256 + 64 * (c / 4) + lane, static_cast<int>(2 * (c % 4)), 2,
              q >> 4);
    }
  }
}

// GGML's blocks. get_scale_min_k4's packing of the 6-bit sc[j], m[j] in scales[12]: for
// j < 4, scales[j] = sc[j] | (sc[j+4] >> 4) << 6, scales[j+4] = m[j] | (m[j+4] >> 4) <<
// 6, scales[j+8] = (sc[j+4] & 15) | (m[j+4] & 15) << 4.
void ReadGgmlKQuantBlock(KQuantKind kind, const uint8_t* b, KQuantBlockValues* out) {
  if (kind == KQuantKind::kQ6K) {
    const uint8_t *ql = b, *qh = b + 128;
    for (int k = 0; k < 16; ++k) out->scales[k] = static_cast<int8_t>(b[192 + k]);
    out->d = LoadBits16(b + 208);
    out->dmin = 0;
    for (size_t i = 0; i < kKQuantBlock; ++i) {
      // Each half of 128 inputs: ql[64h + l] holds inputs l (low) and 64 + l (high),
      // ql[64h + 32 + l] inputs 32 + l and 96 + l; qh[32h + l] bits 2s the four's top.
      const size_t half = i / 128, s = i % 128 / 32, l = i % 32;
      const unsigned low = (ql[64 * half + 32 * (s % 2) + l] >> (4 * (s / 2))) & 15;
      const unsigned high = (qh[32 * half + l] >> (2 * s)) & 3;
      out->q[i] = static_cast<uint8_t>(low | high << 4);
    }
    return;
  }
  out->d = LoadBits16(b);
  out->dmin = LoadBits16(b + 2);
  const uint8_t* s = b + 4;
  for (int j = 0; j < 4; ++j) {
    out->scales[j] = s[j] & 63;
    out->mins[j] = s[j + 4] & 63;
    out->scales[j + 4] = static_cast<int16_t>((s[j + 8] & 15) | (s[j] >> 6) << 4);
    out->mins[j + 4] = static_cast<uint8_t>((s[j + 8] >> 4) | (s[j + 4] >> 6) << 4);
  }
  const uint8_t* qs = b + (kind == KQuantKind::kQ5K ? 48 : 16);
  for (size_t i = 0; i < kKQuantBlock; ++i) {
    // qs[32k + l]: inputs 64k + l (low nibble) and 64k + 32 + l (high nibble).
    unsigned q = (qs[i / 64 * 32 + i % 32] >> (4 * (i / 32 % 2))) & 15;
    if (kind == KQuantKind::kQ5K) q |= ((b[16 + i % 32] >> (i / 32)) & 1) << 4;
    out->q[i] = static_cast<uint8_t>(q);
  }
}

void WriteGgmlKQuantBlock(KQuantKind kind, const KQuantBlockValues& in, uint8_t* b) {
  memset(b, 0, GgmlKQuantBlockBytes(kind));
  if (kind == KQuantKind::kQ6K) {
    for (size_t i = 0; i < kKQuantBlock; ++i) {
      const size_t half = i / 128, s = i % 128 / 32, l = i % 32;
      b[64 * half + 32 * (s % 2) + l] |=
          static_cast<uint8_t>((in.q[i] & 15) << (4 * (s / 2)));
      b[128 + 32 * half + l] |= static_cast<uint8_t>((in.q[i] >> 4 & 3) << (2 * s));
    }
    for (int k = 0; k < 16; ++k) b[192 + k] = static_cast<uint8_t>(in.scales[k]);
    StoreBits16(b + 208, in.d);
    return;
  }
  StoreBits16(b, in.d);
  StoreBits16(b + 2, in.dmin);
  uint8_t* s = b + 4;
  for (int j = 0; j < 4; ++j) {
    const unsigned sc = in.scales[j] & 63, m = in.mins[j] & 63;
    const unsigned sc4 = in.scales[j + 4] & 63, m4 = in.mins[j + 4] & 63;
    s[j] = static_cast<uint8_t>(sc | (sc4 >> 4) << 6);
    s[j + 4] = static_cast<uint8_t>(m | (m4 >> 4) << 6);
    s[j + 8] = static_cast<uint8_t>((sc4 & 15) | (m4 & 15) << 4);
  }
  uint8_t* qs = b + (kind == KQuantKind::kQ5K ? 48 : 16);
  for (size_t i = 0; i < kKQuantBlock; ++i) {
    qs[i / 64 * 32 + i % 32] |=
        static_cast<uint8_t>((in.q[i] & 15) << (4 * (i / 32 % 2)));
    if (kind == KQuantKind::kQ5K)
      b[16 + i % 32] |= static_cast<uint8_t>((in.q[i] >> 4 & 1) << (i / 32));
  }
}

bool PackKQuantFromGgml(KQuantKind kind, const uint8_t* ggml_rows, size_t rows,
                        size_t cols, uint8_t* out) {
  if (rows == 0 || cols == 0 || cols % kKQuantBlock != 0) return false;
  memset(out, 0, KQuantPackedBytes(kind, rows, cols));
  const size_t blocks = KQuantSuperBlocks(cols), block_bytes = GgmlKQuantBlockBytes(kind);
  KQuantBlockValues values;
  for (size_t row = 0; row < rows; ++row) {
    for (size_t s = 0; s < blocks; ++s) {
      ReadGgmlKQuantBlock(kind, ggml_rows + (row * blocks + s) * block_bytes, &values);
      PutKQuantBlock(kind, values, cols, row, s, out);
    }
  }
  return true;
}

// Written from GGML's definitions block by block, in the order of its dequantize_row_*
// loops, sharing nothing with the readers above (the tests compare the two).
void DequantizeGgmlKQuantRow(KQuantKind kind, const uint8_t* row, size_t cols,
                             float* out) {
  for (size_t s = 0; s < KQuantSuperBlocks(cols); ++s) {
    const uint8_t* b = row + s * GgmlKQuantBlockBytes(kind);
    float* y = out + s * kKQuantBlock;
    if (kind == KQuantKind::kQ6K) {
      const float d = HalfToFloat(LoadBits16(b + 208));
      const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
      for (int half = 0; half < 2; ++half) {
        const uint8_t* ql = b + 64 * half;
        const uint8_t* qh = b + 128 + 32 * half;
        for (int l = 0; l < 32; ++l) {
          const int q[4] = {(ql[l] & 0xF) | ((qh[l] >> 0) & 3) << 4,
                            (ql[l + 32] & 0xF) | ((qh[l] >> 2) & 3) << 4,
                            (ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4,
                            (ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4};
          for (int k = 0; k < 4; ++k) {
            const int index = 128 * half + 32 * k + l;
            y[index] =
                d * static_cast<float>(sc[index / 16]) * static_cast<float>(q[k] - 32);
          }
        }
      }
      continue;
    }
    const float d = HalfToFloat(LoadBits16(b)), dmin = HalfToFloat(LoadBits16(b + 2));
    const uint8_t* scales = b + 4;
    const uint8_t* qh = b + 16;
    const uint8_t* ql = b + (kind == KQuantKind::kQ5K ? 48 : 16);
    for (int j = 0; j < 8; ++j) {  // sub-block j: inputs 32j .. 32j + 31
      int sc, m;
      if (j < 4) {
        sc = scales[j] & 63;
        m = scales[j + 4] & 63;
      } else {
        sc = (scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4);
        m = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
      }
      const float d1 = d * static_cast<float>(sc), m1 = dmin * static_cast<float>(m);
      for (int l = 0; l < 32; ++l) {
        int q = j % 2 == 0 ? ql[32 * (j / 2) + l] & 0xF : ql[32 * (j / 2) + l] >> 4;
        if (kind == KQuantKind::kQ5K && (qh[l] >> j) & 1) q += 16;
        y[32 * j + l] = d1 * static_cast<float>(q) - m1;
      }
    }
  }
}

}  // namespace ember::kernels
