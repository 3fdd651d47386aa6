// GGML block decoding (see gguf_blocks.h for the layouts and the arithmetic).
#include "tools/convert/gguf/gguf_blocks.h"

#include <cstring>

#include "kernels/half.h"
#include "tools/convert/gguf/gguf_reader.h"

namespace ember::tools {
namespace {

using kernels::BFloat16ToFloat;
using kernels::HalfToFloat;

float Half(const uint8_t* p) {
  uint16_t bits;
  memcpy(&bits, p, 2);
  return HalfToFloat(bits);
}

uint32_t U32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

// Q4_K/Q5_K: the 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes:
// sub-blocks 0-3 in the low 6 bits of bytes j and j + 4; 4-7 in the nibbles of byte
// j + 4 with their top 2 bits in the top bits of bytes j - 4 and j.
void ScaleMinK4(int j, const uint8_t* q, int* scale, int* min) {
  if (j < 4) {
    *scale = q[j] & 63;
    *min = q[j + 4] & 63;
  } else {
    *scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// One block of 32 of the scaled-integer types: q[0, 32) and the scale bits.
void ScaledInt32Block(GgmlType type, const uint8_t* b, int8_t* q, uint16_t* scale_bits) {
  memcpy(scale_bits, b, 2);
  switch (type) {
    case GgmlType::kQ8_0:
      memcpy(q, b + 2, 32);
      return;
    case GgmlType::kQ4_0:
      for (int j = 0; j < 16; ++j) {
        q[j] = static_cast<int8_t>((b[2 + j] & 0xF) - 8);
        q[j + 16] = static_cast<int8_t>((b[2 + j] >> 4) - 8);
      }
      return;
    case GgmlType::kQ5_0: {
      const uint32_t qh = U32(b + 2);
      for (int j = 0; j < 16; ++j) {
        const int high0 = ((qh >> j) & 1) << 4, high1 = ((qh >> (j + 16)) & 1) << 4;
        q[j] = static_cast<int8_t>(((b[6 + j] & 0xF) | high0) - 16);
        q[j + 16] = static_cast<int8_t>(((b[6 + j] >> 4) | high1) - 16);
      }
      return;
    }
    case GgmlType::kIQ4_NL:
      for (int j = 0; j < 16; ++j) {
        q[j] = kIq4nlValues[b[2 + j] & 0xF];
        q[j + 16] = kIq4nlValues[b[2 + j] >> 4];
      }
      return;
    default:
      return;
  }
}

// Q4_1 and Q5_1 (five_bits): y = d q + m.
void DecodeAffine32(const uint8_t* b, bool five_bits, float* y) {
  const float d = Half(b), m = Half(b + 2);
  const uint32_t qh = five_bits ? U32(b + 4) : 0;
  const uint8_t* qs = b + (five_bits ? 8 : 4);
  for (int j = 0; j < 16; ++j) {
    const int high0 = ((qh >> j) & 1) << 4, high1 = ((qh >> (j + 16)) & 1) << 4;
    y[j] = static_cast<float>((qs[j] & 0xF) | high0) * d + m;
    y[j + 16] = static_cast<float>((qs[j] >> 4) | high1) * d + m;
  }
}

// Q4_K and Q5_K (qh non-null): 4 chunks of 64, each the low then the high nibbles of 32
// bytes, sub-blocks 2c and 2c + 1.
void DecodeK4K5(const uint8_t* b, bool five_bits, float* y) {
  const float d = Half(b), dmin = Half(b + 2);
  const uint8_t* scales = b + 4;
  const uint8_t* qh = five_bits ? b + 16 : nullptr;
  const uint8_t* qs = b + (five_bits ? 48 : 16);
  for (int c = 0; c < 4; ++c) {
    int sc0, m0, sc1, m1;
    ScaleMinK4(2 * c, scales, &sc0, &m0);
    ScaleMinK4(2 * c + 1, scales, &sc1, &m1);
    const float d0 = d * static_cast<float>(sc0), min0 = dmin * static_cast<float>(m0);
    const float d1 = d * static_cast<float>(sc1), min1 = dmin * static_cast<float>(m1);
    for (int l = 0; l < 32; ++l) {
      int low = qs[32 * c + l] & 0xF, high = qs[32 * c + l] >> 4;
      if (qh) {
        low |= ((qh[l] >> (2 * c)) & 1) << 4;
        high |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
      }
      y[64 * c + l] = d0 * static_cast<float>(low) - min0;
      y[64 * c + 32 + l] = d1 * static_cast<float>(high) - min1;
    }
  }
}

// Q6_K: two halves of 128; in each, l < 32 gives elements l, l + 32, l + 64, l + 96
// from the nibbles of ql[l], ql[l + 32] and the bit pairs of qh[l].
void DecodeQ6K(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = Half(b + 208);
  for (int half = 0; half < 2; ++half) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q[4] = {((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32,
                        ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32,
                        ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32,
                        ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32};
      for (int k = 0; k < 4; ++k) {
        const float ds = d * static_cast<float>(sc[is + 2 * k]);
        y[l + 32 * k] = ds * static_cast<float>(q[k]);
      }
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

}  // namespace

bool CanDecodeGgml(uint32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kBF16:
    case GgmlType::kF64:
    case GgmlType::kQ8_0:
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ5_0:
    case GgmlType::kQ5_1:
    case GgmlType::kIQ4_NL:
    case GgmlType::kQ4_K:
    case GgmlType::kQ5_K:
    case GgmlType::kQ6_K:
      return true;
    default:
      return false;
  }
}

bool IsScaledInt32(uint32_t type, int* min_q, int* max_q) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kQ8_0:
      *min_q = -128, *max_q = 127;
      return true;
    case GgmlType::kQ4_0:
      *min_q = -8, *max_q = 7;
      return true;
    case GgmlType::kQ5_0:
      *min_q = -16, *max_q = 15;
      return true;
    case GgmlType::kIQ4_NL:
      *min_q = -127, *max_q = 113;
      return true;
    default:
      return false;
  }
}

void ReadScaledInt32(uint32_t type, const uint8_t* data, size_t n, int8_t* q,
                     uint16_t* scale_bits) {
  const GgmlTypeInfo* info = FindGgmlType(type);
  for (size_t i = 0; i < n / 32; ++i) {
    ScaledInt32Block(static_cast<GgmlType>(type), data + i * info->block_bytes,
                     q + 32 * i, scale_bits + i);
  }
}

void DecodeGgmlRow(uint32_t type, const uint8_t* data, size_t n, float* out) {
  const GgmlType t = static_cast<GgmlType>(type);
  switch (t) {
    case GgmlType::kF32:
      memcpy(out, data, n * 4);
      return;
    case GgmlType::kF16:
    case GgmlType::kBF16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t bits;
        memcpy(&bits, data + 2 * i, 2);
        out[i] = t == GgmlType::kF16 ? HalfToFloat(bits) : BFloat16ToFloat(bits);
      }
      return;
    case GgmlType::kF64:
      for (size_t i = 0; i < n; ++i) {
        double v;
        memcpy(&v, data + 8 * i, 8);
        out[i] = static_cast<float>(v);
      }
      return;
    default:
      break;
  }
  const GgmlTypeInfo* info = FindGgmlType(type);
  const size_t block = info->block_elements;
  for (size_t i = 0; i < n / block; ++i) {
    const uint8_t* b = data + i * info->block_bytes;
    float* y = out + i * block;
    switch (t) {
      case GgmlType::kQ8_0:
      case GgmlType::kQ4_0:
      case GgmlType::kQ5_0:
      case GgmlType::kIQ4_NL: {
        int8_t q[32];
        uint16_t bits;
        ScaledInt32Block(t, b, q, &bits);
        const float d = HalfToFloat(bits);
        for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(q[j]) * d;
        break;
      }
      case GgmlType::kQ4_1:
      case GgmlType::kQ5_1:
        DecodeAffine32(b, t == GgmlType::kQ5_1, y);
        break;
      case GgmlType::kQ4_K:
      case GgmlType::kQ5_K:
        DecodeK4K5(b, t == GgmlType::kQ5_K, y);
        break;
      case GgmlType::kQ6_K:
        DecodeQ6K(b, y);
        break;
      default:
        break;
    }
  }
}

}  // namespace ember::tools
