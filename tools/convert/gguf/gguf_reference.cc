// GGML's weight types decoded one element at a time from the format's definition (see
// gguf_builder.h): the oracle the importer's block decoders and repacking are checked
// against, so it shares no code with them.
#include <cstring>
#include <random>

#include "kernels/half.h"
#include "tools/convert/gguf/gguf_builder.h"

namespace ember::testing {
namespace {

float F16At(const uint8_t* p) {
  return kernels::HalfToFloat(static_cast<uint16_t>(p[0] | p[1] << 8));
}

// Nibble e (0..31) of a 32-element block's 16 bytes: element e < 16 is the low nibble of
// byte e, element e >= 16 the high nibble of byte e - 16.
int Nibble32(const uint8_t* qs, size_t e) {
  return e < 16 ? qs[e] & 15 : qs[e - 16] >> 4;
}

// Bit e of a little-endian 32-bit field.
int Bit32(const uint8_t* qh, size_t e) { return (qh[e / 8] >> (e % 8)) & 1; }

// The 6-bit scale and min of sub-block s (0..7) of a Q4_K/Q5_K block's 12 scale bytes:
// s < 4 in the low 6 bits of bytes s (scale) and s + 4 (min); s >= 4 in the low (scale)
// and high (min) nibbles of byte s + 4, with 2 more bits each in the top 2 bits of
// bytes s - 4 (scale) and s (min).
void SubBlockScaleMin(const uint8_t* s, size_t sub, int* scale, int* min) {
  if (sub < 4) {
    *scale = s[sub] & 63;
    *min = s[sub + 4] & 63;
  } else {
    *scale = (s[sub + 4] & 15) + 16 * (s[sub - 4] >> 6);
    *min = (s[sub + 4] >> 4) + 16 * (s[sub] >> 6);
  }
}

constexpr int kIq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                            1,    13,   25,  38,  53,  69,  89,  113};

}  // namespace

float GgmlReferenceValue(uint32_t type, const uint8_t* row, size_t i) {
  const size_t e = i % 32, k = i % 256;
  switch (type) {
    case 8: {  // Q8_0: d, int8 q[32]
      const uint8_t* b = row + (i / 32) * 34;
      return F16At(b) * static_cast<float>(static_cast<int8_t>(b[2 + e]));
    }
    case 2: {  // Q4_0: d, qs[16]
      const uint8_t* b = row + (i / 32) * 18;
      return F16At(b) * static_cast<float>(Nibble32(b + 2, e) - 8);
    }
    case 20: {  // IQ4_NL: d, qs[16] indexing the 16 levels
      const uint8_t* b = row + (i / 32) * 18;
      return F16At(b) * static_cast<float>(kIq4nl[Nibble32(b + 2, e)]);
    }
    case 3: {  // Q4_1: d, m, qs[16]
      const uint8_t* b = row + (i / 32) * 20;
      return F16At(b) * static_cast<float>(Nibble32(b + 4, e)) + F16At(b + 2);
    }
    case 6: {  // Q5_0: d, qh (32 bits), qs[16]
      const uint8_t* b = row + (i / 32) * 22;
      const int q = Nibble32(b + 6, e) + 16 * Bit32(b + 2, e);
      return F16At(b) * static_cast<float>(q - 16);
    }
    case 7: {  // Q5_1: d, m, qh, qs[16]
      const uint8_t* b = row + (i / 32) * 24;
      const int q = Nibble32(b + 8, e) + 16 * Bit32(b + 4, e);
      return F16At(b) * static_cast<float>(q) + F16At(b + 2);
    }
    case 12:
    case 13: {  // Q4_K (144 bytes), Q5_K (176): d, dmin, scales[12], [qh[32]], qs[128]
      const bool five = type == 13;
      const uint8_t* b = row + (i / 256) * (five ? 176 : 144);
      const size_t sub = k / 32;                   // 8 sub-blocks of 32
      const size_t byte = (k / 64) * 32 + k % 32;  // sub-blocks 2c, 2c + 1 share 32 bytes
      const uint8_t* qs = b + (five ? 48 : 16);
      int q = sub % 2 == 0 ? qs[byte] & 15 : qs[byte] >> 4;
      if (five) q += 16 * ((b[16 + k % 32] >> sub) & 1);
      int scale, min;
      SubBlockScaleMin(b + 4, sub, &scale, &min);
      return F16At(b) * static_cast<float>(scale) * static_cast<float>(q) -
             F16At(b + 2) * static_cast<float>(min);
    }
    case 14: {  // Q6_K: ql[128], qh[64], int8 scales[16], d
      const uint8_t* b = row + (i / 256) * 210;
      const size_t half = k / 128, quarter = (k % 128) / 32, l = k % 32;
      const uint8_t low_byte = b[64 * half + l + (quarter % 2 == 1 ? 32 : 0)];
      const int low = quarter < 2 ? low_byte & 15 : low_byte >> 4;
      const int high = (b[128 + 32 * half + l] >> (2 * quarter)) & 3;
      const int scale = static_cast<int8_t>(b[192 + 8 * half + 2 * quarter + l / 16]);
      return F16At(b + 208) * static_cast<float>(scale) *
             static_cast<float>(low + 16 * high - 32);
    }
    default:
      return 0.0f / 0.0f;
  }
}

std::string RandomGgmlBlocks(uint32_t type, size_t blocks, uint32_t seed) {
  struct Layout {
    uint32_t type, bytes;
    std::vector<int> halves;  // where the f16 fields are
  };
  static const Layout kLayouts[] = {
      {8, 34, {0}},      {2, 18, {0}},      {20, 18, {0}},
      {3, 20, {0, 2}},   {6, 22, {0}},      {7, 24, {0, 2}},
      {12, 144, {0, 2}}, {13, 176, {0, 2}}, {14, 210, {208}}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> magnitude(-10.0f, 0.0f);
  for (const Layout& layout : kLayouts) {
    if (layout.type != type) continue;
    std::string out(blocks * layout.bytes, '\0');
    for (char& c : out) c = static_cast<char>(rng());
    for (size_t b = 0; b < blocks; ++b) {
      for (int at : layout.halves) {
        const float v = std::exp2(magnitude(rng)) * (rng() % 2 ? 1.0f : -1.0f);
        const uint16_t bits = kernels::FloatToHalf(v);
        memcpy(&out[b * layout.bytes + at], &bits, 2);
      }
    }
    return out;
  }
  return std::string();
}

}  // namespace ember::testing
