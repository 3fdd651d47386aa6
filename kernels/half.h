// Scalar conversions between f32 and the 16-bit float formats (IEEE half, bfloat16),
// exact in the widening direction and round-to-nearest-even in the narrowing one.
#ifndef EMBER_KERNELS_HALF_H_
#define EMBER_KERNELS_HALF_H_

#include <cstdint>
#include <cstring>

namespace ember::kernels {

inline float HalfToFloat(uint16_t bits) {
  const uint32_t sign = uint32_t{bits & 0x8000u} << 16;
  const uint32_t exponent = (bits >> 10) & 0x1F;
  const uint32_t fraction = bits & 0x3FF;
  uint32_t out;
  if (exponent == 0x1F) {
    out = sign | 0x7F800000u | (fraction << 13);  // inf, nan
  } else if (exponent != 0) {
    out = sign | ((exponent + 112) << 23) | (fraction << 13);
  } else {  // zero or subnormal: fraction * 2^-24
    const float magnitude = static_cast<float>(fraction) * (1.0f / 16777216.0f);
    memcpy(&out, &magnitude, 4);
    out |= sign;
  }
  float f;
  memcpy(&f, &out, 4);
  return f;
}

// Rounds to the nearest half (ties to even); overflow becomes inf, NaN stays NaN.
inline uint16_t FloatToHalf(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return sign | 0x7E00u;   // NaN
  if (abs_bits >= 0x477FF000u) return sign | 0x7C00u;  // rounds to >= 65520: inf
  if (abs_bits < 0x38800000u) {
    // Below the smallest normal half (2^-14): a subnormal in units of 2^-24. The float
    // addition rounds to nearest even for us.
    float magnitude;
    memcpy(&magnitude, &abs_bits, 4);
    const float units = magnitude * 16777216.0f;  // exact: a power-of-two scale
    const float rounded = (units + 8388608.0f) - 8388608.0f;
    return sign | static_cast<uint16_t>(rounded);
  }
  // Normal: rebias the exponent, drop 13 fraction bits with round-to-nearest-even
  // (a carry into the exponent is the correct rounding up).
  const uint32_t rebased = abs_bits - (uint32_t{112} << 23);
  const uint32_t round = 0xFFFu + ((rebased >> 13) & 1u);
  return sign | static_cast<uint16_t>((rebased + round) >> 13);
}

// bf16 is the top half of an f32.
inline float BFloat16ToFloat(uint16_t bits) {
  const uint32_t out = uint32_t{bits} << 16;
  float f;
  memcpy(&f, &out, 4);
  return f;
}

// Rounds to the nearest bfloat16 (ties to even); NaN stays NaN.
inline uint16_t FloatToBFloat16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t round = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + round) >> 16);
}

// The 16-bit pattern (an f16's, a bf16's) at p, at any alignment, as the files and
// packed layouts store it (little-endian, the byte order of every target).
inline uint16_t LoadBits16(const uint8_t* p) {
  uint16_t bits;
  memcpy(&bits, p, 2);
  return bits;
}
inline void StoreBits16(uint8_t* p, uint16_t bits) { memcpy(p, &bits, 2); }

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_HALF_H_
