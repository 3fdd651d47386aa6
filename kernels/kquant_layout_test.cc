// Tests of the K-quant panel layout, the GGML packer and decoders, and the f32
// quantizer (kquant_layout.h, quantize/kquant_pack.h, quantize/kquant_quantize.h),
// against llama.cpp's own decoding and quantization (kernels/testdata/kquant_vectors.bin,
// tools/scripts/gen_kquant_vectors.c).
#include "kernels/kquant_layout.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/half.h"
#include "kernels/quant_layout.h"
#include "kernels/quantize/kquant_pack.h"
#include "kernels/quantize/kquant_quantize.h"
#include "kernels/reference.h"

namespace ember::kernels {
namespace {

constexpr KQuantKind kKinds[] = {KQuantKind::kQ4K, KQuantKind::kQ5K, KQuantKind::kQ6K};
const char* Name(KQuantKind kind) {
  return kind == KQuantKind::kQ4K ? "q4_k" : kind == KQuantKind::kQ5K ? "q5_k" : "q6_k";
}

TEST(KQuantLayoutTest, SizesMatchGgmlAndKeepLoadsAligned) {
  for (KQuantKind kind : kKinds) {
    EXPECT_EQ(KQuantSuperBlockBytes(kind) % 64, 0u);
    EXPECT_EQ(KQuantGroupBytes(kind) % 64, 0u);
    EXPECT_EQ(KQuantScaleBytes(kind) % 64, 0u);
    for (uint64_t blocks : {1, 2, 3, 16}) {
      const uint64_t cols = blocks * kKQuantBlock;
      EXPECT_EQ(KQuantPanelBytes(kind, cols) % 64, 0u);
      const uint64_t ggml = kQuantPanelRows * GgmlKQuantRowBytes(kind, cols);
      // Equal to GGML's bytes, but q6_k's table padding when the count is odd.
      EXPECT_EQ(KQuantPanelBytes(kind, cols),
                ggml + (kind == KQuantKind::kQ6K && blocks % 2 ? 32 : 0))
          << Name(kind) << " " << cols;
    }
  }
  EXPECT_EQ(GgmlKQuantBlockBytes(KQuantKind::kQ4K), 144u);
  EXPECT_EQ(GgmlKQuantBlockBytes(KQuantKind::kQ5K), 176u);
  EXPECT_EQ(GgmlKQuantBlockBytes(KQuantKind::kQ6K), 210u);
  EXPECT_EQ(KQuantPackedBytes(KQuantKind::kQ4K, 17, 512), 2 * 2 * 2304u);
}

// Random GGML blocks: every byte random but d and dmin, finite f16 values.
std::vector<uint8_t> RandomGgml(KQuantKind kind, size_t rows, size_t cols,
                                uint32_t seed) {
  std::mt19937 rng(seed);
  const size_t block_bytes = GgmlKQuantBlockBytes(kind);
  std::vector<uint8_t> out(rows * GgmlKQuantRowBytes(kind, cols));
  for (uint8_t& b : out) b = static_cast<uint8_t>(rng());
  for (size_t at = 0; at < out.size(); at += block_bytes) {
    for (size_t h = 0; h < (kind == KQuantKind::kQ6K ? 1u : 2u); ++h) {
      const uint16_t bits = static_cast<uint16_t>(rng() % 0x7C00);  // below inf, any sign
      const uint16_t sign = rng() % 2 ? 0x8000 : 0;
      const uint16_t value = static_cast<uint16_t>(bits | sign);
      memcpy(out.data() + at + (kind == KQuantKind::kQ6K ? 208 : 2 * h), &value, 2);
    }
  }
  return out;
}

TEST(KQuantLayoutTest, PackingKeepsEveryGgmlByteAndValue) {
  for (KQuantKind kind : kKinds) {
    for (size_t rows : {1, 15, 16, 17, 40}) {
      for (size_t cols : {256, 768}) {
        SCOPED_TRACE(testing::Message()
                     << Name(kind) << " rows " << rows << " cols " << cols);
        const std::vector<uint8_t> ggml = RandomGgml(kind, rows, cols, rows * 7 + cols);
        // Misaligned input and a poisoned output: every byte must be written.
        std::vector<uint8_t> input(ggml.size() + 1);
        memcpy(input.data() + 1, ggml.data(), ggml.size());
        std::vector<uint8_t> packed(KQuantPackedBytes(kind, rows, cols), 0xA5);
        ASSERT_TRUE(
            PackKQuantFromGgml(kind, input.data() + 1, rows, cols, packed.data()));
        std::vector<uint8_t> back(ggml.size(), 0x5A);
        reference::UnpackKQuantToGgml(kind, packed.data(), rows, cols, back.data());
        ASSERT_EQ(0, memcmp(back.data(), ggml.data(), ggml.size()));
        std::vector<float> a(cols), b(cols);
        for (size_t r = 0; r < rows; ++r) {
          DequantizeKQuantRow(kind, packed.data(), cols, r, a.data());
          DequantizeGgmlKQuantRow(kind, ggml.data() + r * GgmlKQuantRowBytes(kind, cols),
                                  cols, b.data());
          ASSERT_EQ(0, memcmp(a.data(), b.data(), cols * sizeof(float))) << "row " << r;
        }
        // Rows past the last are zero bytes: weights 0.
        for (size_t r = rows; r < (rows + 15) / 16 * 16; ++r) {
          DequantizeKQuantRow(kind, packed.data(), cols, r, a.data());
          for (float v : a) ASSERT_EQ(v, 0.0f) << "padding row " << r;
        }
        // Packing again over the first result changes nothing (Put overwrites fields).
        std::vector<uint8_t> again = packed;
        KQuantBlockValues block;
        for (size_t r = 0; r < rows; ++r) {
          for (size_t s = 0; s < cols / kKQuantBlock; ++s) {
            GetKQuantBlock(kind, packed.data(), cols, r, s, &block);
            PutKQuantBlock(kind, block, cols, r, s, again.data());
          }
        }
        ASSERT_EQ(again, packed);
      }
    }
  }
}

TEST(KQuantLayoutTest, RefusesShapesWithoutWholeSuperBlocks) {
  std::vector<uint8_t> in(4096), out(1 << 16, 0x11);
  for (KQuantKind kind : kKinds) {
    EXPECT_FALSE(PackKQuantFromGgml(kind, in.data(), 1, 0, out.data()));
    EXPECT_FALSE(PackKQuantFromGgml(kind, in.data(), 1, 100, out.data()));
    EXPECT_FALSE(PackKQuantFromGgml(kind, in.data(), 1, 288, out.data()));
    EXPECT_FALSE(PackKQuantFromGgml(kind, in.data(), 0, 256, out.data()));
    std::vector<float> w(288);
    EXPECT_FALSE(PackKQuant(kind, w.data(), 1, 288, out.data()));
    EXPECT_EQ(out[0], 0x11);  // nothing written
  }
}

// The byte positions of kquant_layout.h's comment, checked on hand-placed values.
TEST(KQuantLayoutTest, BytesSitWhereTheHeaderSays) {
  const size_t cols = 512;  // two super-blocks
  for (KQuantKind kind : kKinds) {
    std::vector<uint8_t> packed(KQuantPackedBytes(kind, 16, cols), 0);
    KQuantBlockValues block;
    block.d = 0x3C00;
    block.dmin = 0x4000;
    const bool q6 = kind == KQuantKind::kQ6K;
    for (int k = 0; k < (q6 ? 16 : 8); ++k)
      block.scales[k] = static_cast<int16_t>(q6 ? -k - 100 : 40 + k);
    for (int k = 0; k < 8; ++k) block.mins[k] = static_cast<uint8_t>(50 + k);
    const int qmax = kind == KQuantKind::kQ4K ? 15 : kind == KQuantKind::kQ5K ? 31 : 63;
    for (size_t i = 0; i < kKQuantBlock; ++i)
      block.q[i] = static_cast<uint8_t>((i * 7 + 3) % (qmax + 1));
    const size_t row = 5, s = 1;
    PutKQuantBlock(kind, block, cols, row, s, packed.data());
    const uint8_t* table = packed.data() + s * KQuantTableEntryBytes(kind);
    uint16_t d;
    memcpy(&d, table + 2 * row, 2);
    EXPECT_EQ(d, 0x3C00);
    const uint8_t* sb =
        packed.data() + KQuantTableBytes(kind, cols) + s * KQuantSuperBlockBytes(kind);
    if (q6) {
      EXPECT_EQ(static_cast<int8_t>(sb[16 * 9 + row]), -109);
    } else {
      memcpy(&d, table + 32 + 2 * row, 2);
      EXPECT_EQ(d, 0x4000);
      // sc[6] = 46 = 0b101110: low nibble 14 in the high nibble of byte 16 * 2 + r, top
      // bits 2 at bits 2, 3 of byte 128 + 16 * 2 + r; m[6] = 56 = 0b111000: 8 and 3.
      EXPECT_EQ(sb[16 * 2 + row] >> 4, 14);
      EXPECT_EQ((sb[128 + 16 * 2 + row] >> 2) & 3, 2);
      EXPECT_EQ(sb[64 + 16 * 2 + row] >> 4, 8);
      EXPECT_EQ((sb[128 + 16 * 2 + row] >> 6) & 3, 3);
    }
    // Input 32 * 3 + 4 * 5 + 2 (group 3, chunk 5, lane 2): high nibble of byte
    // 64 * 1 + 4 * row + 2 of group 3; its bit 4 (q5_k) at bit 5 of byte 256 + 4 * row +
    // 2; bits 4, 5 (q6_k) at bits 2, 3 of byte 256 + 64 + 4 * row + 2.
    const size_t i = 32 * 3 + 4 * 5 + 2;
    const uint8_t* group = sb + KQuantScaleBytes(kind) + 3 * KQuantGroupBytes(kind);
    EXPECT_EQ(group[64 + 4 * row + 2] >> 4, block.q[i] & 15);
    if (kind == KQuantKind::kQ5K) {
      EXPECT_EQ((group[256 + 4 * row + 2] >> 5) & 1, block.q[i] >> 4);
    }
    if (q6) {
      EXPECT_EQ((group[320 + 4 * row + 2] >> 2) & 3, block.q[i] >> 4);
    }
  }
}

// The PRNG and inputs of tools/scripts/gen_kquant_vectors.c.
struct VectorInputs {
  uint32_t state = 0;
  uint32_t Next() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  }
  float Uniform() {
    return static_cast<float>(Next() >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
  std::vector<uint8_t> Blocks(int kind, size_t blocks, size_t block_bytes) {
    state = 1u + static_cast<uint32_t>(kind);
    std::vector<uint8_t> out(blocks * block_bytes);
    for (uint8_t& b : out) b = static_cast<uint8_t>(Next());
    for (size_t b = 0; b < blocks; ++b) {
      for (int h = 0; h < (kind == 2 ? 1 : 2); ++h) {
        const uint16_t bits = static_cast<uint16_t>(0x1800u + Next() % 0x800u);
        memcpy(out.data() + b * block_bytes + (kind == 2 ? 208 : 0) + 2 * h, &bits, 2);
      }
    }
    return out;
  }
  std::vector<float> Matrix(int kind, size_t rows, size_t cols) {
    state = 100u + static_cast<uint32_t>(kind);
    std::vector<float> m(rows * cols);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        float v = Uniform();
        if (r == 1) v += 0.5f;
        if (r == 2) v = c / 32 == 3 ? 0.0f : c / 32 == 5 ? 0.25f : v / 1000;
        for (int i = 0; r == 3 && i < 3; ++i) v += Uniform();
        if (r == 3) v *= 2;
        m[r * cols + c] = v;
      }
    }
    return m;
  }
};

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::vector<uint8_t> out;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return out;
  uint8_t buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.insert(out.end(), buf, buf + n);
  fclose(f);
  return out;
}

TEST(KQuantLayoutTest, DecodingAndQuantizingAgreeWithLlamaCpp) {
  const std::vector<uint8_t> file = ReadFile(EMBER_KQUANT_VECTORS);
  ASSERT_GT(file.size(), 8u) << "cannot read " << EMBER_KQUANT_VECTORS;
  ASSERT_EQ(0, memcmp(file.data(), "EKQV\1\0\0\0", 8));
  size_t at = 8;
  const auto u32 = [&]() {
    uint32_t v;
    memcpy(&v, file.data() + at, 4);
    at += 4;
    return v;
  };
  VectorInputs inputs;
  for (int k = 0; k < 3; ++k) {
    const KQuantKind kind = kKinds[k];
    SCOPED_TRACE(Name(kind));
    const size_t block_bytes = GgmlKQuantBlockBytes(kind);
    // Decoding: bit for bit what ggml's to_float gives.
    const uint32_t blocks = u32();
    ASSERT_EQ(blocks, 4u);
    const std::vector<uint8_t> raw = inputs.Blocks(k, blocks, block_bytes);
    std::vector<float> want(blocks * kKQuantBlock), got(blocks * kKQuantBlock);
    memcpy(want.data(), file.data() + at, want.size() * sizeof(float));
    at += want.size() * sizeof(float);
    DequantizeGgmlKQuantRow(kind, raw.data(), blocks * kKQuantBlock, got.data());
    EXPECT_EQ(0, memcmp(want.data(), got.data(), want.size() * sizeof(float)));
    // And through the panels.
    std::vector<uint8_t> packed(KQuantPackedBytes(kind, 1, blocks * kKQuantBlock));
    ASSERT_TRUE(
        PackKQuantFromGgml(kind, raw.data(), 1, blocks * kKQuantBlock, packed.data()));
    DequantizeKQuantRow(kind, packed.data(), blocks * kKQuantBlock, 0, got.data());
    EXPECT_EQ(0, memcmp(want.data(), got.data(), want.size() * sizeof(float)));

    // Quantizing: the same search as llama.cpp's, its float steps in the same order
    // (and never fused: kernels/CMakeLists.txt), so the same bytes.
    const uint32_t rows = u32(), cols = u32();
    const size_t row_bytes = GgmlKQuantRowBytes(kind, cols);
    const std::vector<float> x = inputs.Matrix(k, rows, cols);
    std::vector<uint8_t> mine(rows * row_bytes);
    for (size_t r = 0; r < rows; ++r) {
      QuantizeKQuantRowGgml(kind, x.data() + r * cols, cols, mine.data() + r * row_bytes);
    }
    for (size_t b = 0; b < rows * cols / kKQuantBlock; ++b) {
      EXPECT_EQ(0, memcmp(file.data() + at + b * block_bytes,
                          mine.data() + b * block_bytes, block_bytes))
          << "block " << b;
    }
    at += rows * row_bytes;
  }
  EXPECT_EQ(at, file.size());
}

TEST(KQuantQuantizeTest, ErrorShrinksWithBitsAndPackMatchesGgmlPath) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const size_t rows = 20, cols = 512;
  std::vector<float> w(rows * cols);
  for (float& v : w) v = normal(rng) * 0.05f;
  double previous = 1e30;
  for (KQuantKind kind : kKinds) {
    std::vector<uint8_t> packed(KQuantPackedBytes(kind, rows, cols));
    ASSERT_TRUE(PackKQuant(kind, w.data(), rows, cols, packed.data()));
    std::vector<uint8_t> ggml(GgmlKQuantRowBytes(kind, cols)), from_ggml(packed.size());
    std::vector<float> a(cols);
    double err = 0, energy = 0;
    for (size_t r = 0; r < rows; ++r) {
      DequantizeKQuantRow(kind, packed.data(), cols, r, a.data());
      for (size_t c = 0; c < cols; ++c) {
        err += double(a[c] - w[r * cols + c]) * (a[c] - w[r * cols + c]);
        energy += double(w[r * cols + c]) * w[r * cols + c];
      }
      // PackKQuant = QuantizeKQuantRowGgml, then the GGML packer.
      QuantizeKQuantRowGgml(kind, w.data() + r * cols, cols, ggml.data());
      std::vector<float> b(cols);
      DequantizeGgmlKQuantRow(kind, ggml.data(), cols, b.data());
      ASSERT_EQ(0, memcmp(a.data(), b.data(), cols * sizeof(float)))
          << Name(kind) << " " << r;
    }
    const double relative = std::sqrt(err / energy);
    printf("[ember] %s: relative RMS error %.4f on Gaussian weights\n", Name(kind),
           relative);
    // 4, 5 and 6 bits: roughly halving per bit (q4_k measured ~0.09 when set).
    EXPECT_LT(relative, previous * 0.7);
    EXPECT_LT(relative, kind == KQuantKind::kQ4K ? 0.12 : 1.0);
    previous = relative;
  }
}

TEST(KQuantQuantizeTest, ZeroAndConstantSubBlocks) {
  std::vector<float> x(kKQuantBlock, 0.0f);
  for (KQuantKind kind : kKinds) {
    KQuantBlockValues b;
    QuantizeKQuantBlock(kind, x.data(), &b);
    std::vector<float> w(kKQuantBlock);
    KQuantBlockWeights(kind, b, w.data());
    for (float v : w) EXPECT_EQ(v, 0.0f) << Name(kind);
  }
  // A negative constant is held by the minimum alone (q4_k/q5_k) or the scale (q6_k).
  for (float& v : x) v = -0.375f;
  for (KQuantKind kind : kKinds) {
    KQuantBlockValues b;
    QuantizeKQuantBlock(kind, x.data(), &b);
    std::vector<float> w(kKQuantBlock);
    KQuantBlockWeights(kind, b, w.data());
    for (float v : w) EXPECT_NEAR(v, -0.375f, 0.375f / 30) << Name(kind);
  }
}

}  // namespace
}  // namespace ember::kernels
