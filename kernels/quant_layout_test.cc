// Tests of the f16/bf16 conversions and of the q8/q4 panel packing (quant_layout.h,
// quantize/quant_pack.h).
#include "kernels/quant_layout.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/half.h"
#include "kernels/quantize/quant_pack.h"

namespace ember::kernels {
namespace {

TEST(HalfTest, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = HalfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(f)))) << bits;
      continue;
    }
    EXPECT_EQ(FloatToHalf(f), bits) << bits;
  }
}

TEST(HalfTest, RoundsToNearestEven) {
  EXPECT_EQ(FloatToHalf(1.0f + 1.0f / 2048), 0x3C00);  // halfway: down to even
  EXPECT_EQ(FloatToHalf(1.0f + 3.0f / 2048), 0x3C02);  // halfway: up to even
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);  // rounds to inf
  EXPECT_EQ(FloatToHalf(-1e-8f), 0x8000);
  EXPECT_EQ(FloatToHalf(5.9604645e-8f), 0x0001);  // smallest subnormal
  // Between subnormals: 1.5 units rounds to 2, 2.5 units to 2.
  EXPECT_EQ(FloatToHalf(1.5f * 5.9604645e-8f), 0x0002);
  EXPECT_EQ(FloatToHalf(2.5f * 5.9604645e-8f), 0x0002);
}

TEST(HalfTest, BFloat16RoundTripsAndRounds) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float f = BFloat16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToBFloat16(f), bits) << bits;
  }
  EXPECT_EQ(FloatToBFloat16(1.0f + 1.0f / 256), 0x3F80);  // halfway: to even
  EXPECT_EQ(FloatToBFloat16(1.0f + 3.0f / 256), 0x3F82);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(NAN))));
}

std::vector<float> RandomMatrix(size_t rows, size_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(rows * cols);
  for (float& v : w) v = normal(rng);
  return w;
}

class QuantLayoutTest : public ::testing::TestWithParam<QuantKind> {};

TEST_P(QuantLayoutTest, DequantizedErrorIsWithinHalfAStep) {
  const QuantKind kind = GetParam();
  for (size_t rows : {1, 15, 16, 17, 40}) {
    for (size_t cols : {1, 31, 32, 33, 100}) {
      const std::vector<float> w = RandomMatrix(rows, cols, rows * 1000 + cols);
      std::vector<uint8_t> packed(QuantPackedBytes(kind, rows, cols), 0xAB);
      PackQuant(kind, w.data(), rows, cols, packed.data());
      std::vector<float> row(cols);
      for (size_t r = 0; r < rows; ++r) {
        DequantizeRow(kind, packed.data(), cols, r, row.data());
        for (size_t c = 0; c < cols; ++c) {
          const float scale = QuantScale(kind, packed.data(), cols, r, c / kQuantGroup);
          // Round to nearest: at most half a step off. q4's scale puts the extreme at
          // exactly -8, so a value of the opposite sign may need +8 and is clamped to
          // +7: up to one step off (GGML's Q4_0 has the same asymmetry).
          const bool clamped_q4 = kind == QuantKind::kQ4 &&
                                  QuantValue(kind, packed.data(), cols, r, c) == 7;
          const float step = std::fabs(scale) * 1.001f;
          EXPECT_LE(std::fabs(row[c] - w[r * cols + c]), clamped_q4 ? step : 0.5f * step)
              << rows << "x" << cols << " (" << r << ", " << c << ")";
        }
      }
    }
  }
}

TEST_P(QuantLayoutTest, PaddingIsZeroAndValuesInRange) {
  const QuantKind kind = GetParam();
  const size_t rows = 17, cols = 40;
  const std::vector<float> w = RandomMatrix(rows, cols, 7);
  std::vector<uint8_t> packed(QuantPackedBytes(kind, rows, cols), 0xAB);
  PackQuant(kind, w.data(), rows, cols, packed.data());
  const size_t padded_rows = QuantPanels(rows) * kQuantPanelRows;
  const size_t padded_cols = QuantGroups(cols) * kQuantGroup;
  const int lo = kind == QuantKind::kQ8 ? -127 : -8, hi = kind == QuantKind::kQ8 ? 127 : 7;
  for (size_t r = 0; r < padded_rows; ++r) {
    for (size_t c = 0; c < padded_cols; ++c) {
      const int q = QuantValue(kind, packed.data(), cols, r, c);
      if (r >= rows || c >= cols) {
        EXPECT_EQ(q, 0) << r << ", " << c;
      } else {
        EXPECT_GE(q, lo);
        EXPECT_LE(q, hi);
      }
    }
    for (size_t g = 0; g < QuantGroups(cols); ++g) {
      if (r >= rows) {
        EXPECT_EQ(QuantScale(kind, packed.data(), cols, r, g), 0.0f);
      }
    }
  }
}

TEST(QuantLayoutTest, ByteLayoutMatchesTheHeader) {
  // One panel, one group; every row holds w[i] = i - 16 (absmax 16, extreme -16).
  const size_t rows = 16, cols = 32;
  std::vector<float> w(rows * cols);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < cols; ++i) w[r * cols + i] = static_cast<float>(i) - 16.0f;
  }
  std::vector<uint8_t> q8(QuantPackedBytes(QuantKind::kQ8, rows, cols));
  PackQuant(QuantKind::kQ8, w.data(), rows, cols, q8.data());
  // Chunk c, row r, input 4c + i at byte c * 64 + r * 4 + i, stored as q + 128 with
  // q = round((i' - 16) * 127 / 16).
  const size_t r = 5, i_in_group = 13;
  const size_t byte = (i_in_group / 4) * 64 + r * 4 + i_in_group % 4;
  const int expected_q = static_cast<int>(std::nearbyint((13.0f - 16.0f) / (16.0f / 127.0f)));
  EXPECT_NEAR(static_cast<int>(q8[byte]) - 128, expected_q, 1);
  EXPECT_EQ(QuantPanelBytes(QuantKind::kQ8, cols), 576u);  // 512 + 32, padded to 64
  EXPECT_EQ(QuantPanelBytes(QuantKind::kQ4, cols), 320u);  // 256 + 32, padded to 64
  EXPECT_EQ(QuantPanelBytes(QuantKind::kQ4, 768), 24u * 288);

  std::vector<uint8_t> q4(QuantPackedBytes(QuantKind::kQ4, rows, cols));
  PackQuant(QuantKind::kQ4, w.data(), rows, cols, q4.data());
  // Input 21 (chunk 5) is the high nibble of block 1; input 5 (chunk 1) the low one.
  const uint8_t b = q4[1 * 64 + r * 4 + 1];
  EXPECT_EQ((b & 0xF) - 8, QuantValue(QuantKind::kQ4, q4.data(), cols, r, 5));
  EXPECT_EQ((b >> 4) - 8, QuantValue(QuantKind::kQ4, q4.data(), cols, r, 21));
  // The extreme -16 maps to exactly -8 with scale 2.
  EXPECT_EQ(QuantValue(QuantKind::kQ4, q4.data(), cols, r, 0), -8);
  EXPECT_FLOAT_EQ(QuantScale(QuantKind::kQ4, q4.data(), cols, r, 0), 2.0f);
}

// PackQuantValues with the values and scales PackQuant chose writes the same bytes
// (padding included); and it keeps what it is given, -128 in q8 too.
TEST_P(QuantLayoutTest, PackingValuesMatchesPackQuant) {
  const QuantKind kind = GetParam();
  for (const auto& [rows, cols] :
       std::vector<std::pair<size_t, size_t>>{{1, 1}, {17, 40}, {16, 64}, {33, 100}}) {
    const std::vector<float> w = RandomMatrix(rows, cols, static_cast<uint32_t>(rows));
    std::vector<uint8_t> packed(QuantPackedBytes(kind, rows, cols));
    PackQuant(kind, w.data(), rows, cols, packed.data());
    const size_t groups = QuantGroups(cols);
    std::vector<int8_t> q(rows * cols);
    std::vector<uint16_t> scales(rows * groups);
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        q[r * cols + c] =
            static_cast<int8_t>(QuantValue(kind, packed.data(), cols, r, c));
      }
      for (size_t g = 0; g < groups; ++g) {
        scales[r * groups + g] = FloatToHalf(QuantScale(kind, packed.data(), cols, r, g));
      }
    }
    std::vector<uint8_t> repacked(packed.size(), 0xAB);
    PackQuantValues(kind, q.data(), scales.data(), rows, cols, repacked.data());
    EXPECT_EQ(repacked, packed) << rows << " x " << cols;

    const int lo = kind == QuantKind::kQ8 ? -128 : -8,
              hi = kind == QuantKind::kQ8 ? 127 : 7;
    std::mt19937 rng(static_cast<uint32_t>(cols));
    for (int8_t& v : q)
      v = static_cast<int8_t>(lo + static_cast<int>(rng() % (hi - lo + 1)));
    q[0] = static_cast<int8_t>(lo);
    PackQuantValues(kind, q.data(), scales.data(), rows, cols, repacked.data());
    for (size_t r = 0; r < rows; ++r) {
      for (size_t c = 0; c < cols; ++c) {
        ASSERT_EQ(QuantValue(kind, repacked.data(), cols, r, c), q[r * cols + c])
            << r << ", " << c;
      }
      for (size_t g = 0; g < groups; ++g) {
        ASSERT_EQ(FloatToHalf(QuantScale(kind, repacked.data(), cols, r, g)),
                  scales[r * groups + g]);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, QuantLayoutTest,
                         ::testing::Values(QuantKind::kQ8, QuantKind::kQ4));

}  // namespace
}  // namespace ember::kernels
