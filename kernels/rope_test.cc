// Tests both rope pairings on every compiled target against the reference, and the
// tables against the rotation they describe.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/rope_test.cc"
#include "kernels/rope.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/reference.h"
#include "kernels/rope-inl.h"
#include "kernels/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

void TestRope() {
  uint32_t seed = 21;
  for (size_t head_dim : {2, 4, 6, 8, 14, 32, 34, 64, 96, 128}) {
    for (size_t n_heads : {1, 3}) {
      for (bool interleaved : {true, false}) {
        for (size_t pos : {0, 1, 17, 511}) {
          std::vector<float> cos_x(head_dim), sin_x(head_dim);
          RopeTables(pos, 10000.0f, head_dim, interleaved, cos_x.data(), sin_x.data());
          test::Buffer x(n_heads * head_dim, seed % 3, seed, 2.0f);
          ++seed;
          std::vector<float> expected = x.Copy();
          if (interleaved) {
            reference::RopeInterleaved(expected.data(), cos_x.data(), sin_x.data(),
                                       n_heads, head_dim);
            RopeInterleaved(x.data(), cos_x.data(), sin_x.data(), n_heads, head_dim);
          } else {
            reference::RopeHalf(expected.data(), cos_x.data(), sin_x.data(), n_heads,
                                head_dim);
            RopeHalf(x.data(), cos_x.data(), sin_x.data(), n_heads, head_dim);
          }
          test::ExpectClose(x.data(), expected.data(), x.size(), 1e-6f, 1e-5f, "rope");
        }
      }
    }
  }
}

// A rotation keeps each pair's length, and position 0 is the identity.
void TestRopeIsRotation() {
  const size_t head_dim = 16;
  std::vector<float> cos_x(head_dim), sin_x(head_dim);
  RopeTables(0, 10000.0f, head_dim, true, cos_x.data(), sin_x.data());
  test::Buffer x(head_dim, 0, 3);
  std::vector<float> before = x.Copy();
  RopeInterleaved(x.data(), cos_x.data(), sin_x.data(), 1, head_dim);
  test::ExpectClose(x.data(), before.data(), head_dim, 0.0f, 0.0f, "pos 0");

  RopeTables(123, 10000.0f, head_dim, false, cos_x.data(), sin_x.data());
  RopeHalf(x.data(), cos_x.data(), sin_x.data(), 1, head_dim);
  for (size_t i = 0; i < head_dim / 2; ++i) {
    const float a = before[i], b = before[i + head_dim / 2];
    const float ra = x[i], rb = x[i + head_dim / 2];
    EXPECT_NEAR(a * a + b * b, ra * ra + rb * rb, 1e-5f);
  }
  // Pair 0 rotates by angle pos * theta^0 = 123 radians.
  EXPECT_NEAR(x[0], before[0] * std::cos(123.0f) - before[8] * std::sin(123.0f), 1e-5f);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(RopeTest);
HWY_EXPORT_AND_TEST_P(RopeTest, TestRope);
HWY_EXPORT_AND_TEST_P(RopeTest, TestRopeIsRotation);

// Plain RoPE's frequencies are theta^(-2i/d) in float, as before scaling existed.
TEST(RopeFrequencyTest, PlainIsThetaPower) {
  RopeParams plain;
  plain.theta = 500000.0f;
  for (size_t head_dim : {8, 64, 128}) {
    for (size_t i = 0; i < head_dim / 2; ++i) {
      const float expected =
          1.0f / std::pow(500000.0f, static_cast<float>(2 * i) / head_dim);
      EXPECT_EQ(RopeFrequency(plain, i, head_dim), expected);
    }
  }
}

// Llama 3.1's published scaling (factor 8, low 1, high 4, original context 8192, theta
// 500000, head_dim 128): wavelengths below 2048 keep their frequency, those above 8192
// are divided by 8, the band between falls from one to the other as the wavelength
// grows. Linear divides every frequency by the factor.
TEST(RopeFrequencyTest, Llama3AndLinear) {
  const double kPi = 3.14159265358979323846;
  RopeParams p;
  p.theta = 500000.0f;
  p.scaling = RopeScalingKind::kLlama3;
  p.factor = 8.0f;
  p.low_freq_factor = 1.0f;
  p.high_freq_factor = 4.0f;
  p.original_context = 8192.0f;
  RopeParams linear = p;
  linear.scaling = RopeScalingKind::kLinear;
  size_t kept = 0, divided = 0, band = 0;
  double previous_ratio = 1.0;
  for (size_t i = 0; i < 64; ++i) {
    const double base = std::pow(500000.0, -double(2 * i) / 128.0);
    const double wavelength = 2 * kPi / base;
    const double ratio = RopeFrequency(p, i, 128) / base;
    EXPECT_NEAR(RopeFrequency(linear, i, 128) / base, 1.0 / 8, 1e-6) << i;
    if (wavelength < 2048) {
      EXPECT_NEAR(ratio, 1.0, 1e-6) << i;
      ++kept;
    } else if (wavelength > 8192) {
      EXPECT_NEAR(ratio, 1.0 / 8, 1e-6) << i;
      ++divided;
    } else {
      const double s = (8192 / wavelength - 1) / 3;
      EXPECT_NEAR(ratio, (1 - s) / 8 + s, 1e-6) << i;
      ++band;
    }
    EXPECT_LE(ratio, previous_ratio + 1e-6) << i;
    previous_ratio = ratio;
  }
  EXPECT_GT(kept, 0u);
  EXPECT_GT(divided, 0u);
  EXPECT_GT(band, 0u);
}

// YaRN (Qwen's factor 4 over 32768 positions, theta 1e6, head_dim 128): the pairs that
// turn more than beta_fast = 32 times over the original context keep their frequency,
// those turning less than beta_slow = 1 time are interpolated (divided by the factor),
// a linear ramp joins them; cos and sin carry the attention factor.
TEST(RopeFrequencyTest, Yarn) {
  const double kPi = 3.14159265358979323846;
  RopeParams p;
  p.theta = 1e6f;
  p.scaling = RopeScalingKind::kYarn;
  p.factor = 4.0f;
  p.original_context = 32768.0f;
  p.attention_factor = 1.1386294f;  // 0.1 ln 4 + 1
  const auto correction = [kPi](double rotations) {
    return 128 * std::log(32768 / (rotations * 2 * kPi)) / (2 * std::log(1e6));
  };
  const double lo = std::floor(correction(32)), hi = std::ceil(correction(1));
  ASSERT_LT(lo, hi);
  for (size_t i = 0; i < 64; ++i) {
    const double base = std::pow(1e6, -double(2 * i) / 128.0);
    const double ramp = std::min(1.0, std::max(0.0, (i - lo) / (hi - lo)));
    EXPECT_NEAR(RopeFrequency(p, i, 128) / base, ramp / 4 + (1 - ramp), 1e-6) << i;
  }
  std::vector<float> cos_x(128), sin_x(128);
  RopeTables(77, p, 128, false, cos_x.data(), sin_x.data());
  for (size_t i = 0; i < 64; ++i) {
    const double norm2 = double(cos_x[i]) * cos_x[i] + double(sin_x[i]) * sin_x[i];
    EXPECT_NEAR(norm2, 1.1386294 * 1.1386294, 1e-5) << i;
  }
}

// Frequency factors (GGUF's rope_freqs) divide the scaled frequencies: llama.cpp's
// factors for Llama 3.1's scaling give plain RoPE the llama3 frequencies.
TEST(RopeFrequencyTest, FactorsDivideTheFrequencies) {
  RopeParams llama3;
  llama3.theta = 500000.0f;
  llama3.scaling = RopeScalingKind::kLlama3;
  llama3.factor = 8.0f;
  llama3.original_context = 8192.0f;
  RopeParams plain;
  plain.theta = 500000.0f;
  std::vector<float> factors(64);
  for (size_t i = 0; i < 64; ++i) {
    factors[i] = RopeFrequency(plain, i, 128) / RopeFrequency(llama3, i, 128);
  }
  plain.freq_factors = factors.data();
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_NEAR(RopeFrequency(plain, i, 128) / RopeFrequency(llama3, i, 128), 1.0, 1e-6)
        << i;
  }
  EXPECT_NEAR(factors[0], 1.0f, 1e-6f);
  EXPECT_NEAR(factors[63], 8.0f, 1e-5f);
}

// A build with EMBER_DCHECK on (debug, or -DEMBER_DCHECKS=ON as the sanitizer stage
// builds) stops on a broken precondition: rotation pairs need an even head_dim.
TEST(RopeDcheckTest, OddHeadDimStopsADcheckBuild) {
#if !defined(NDEBUG) || defined(EMBER_DCHECK_ON)
  const KernelTable k = ChooseKernels();
  float x[3] = {1, 2, 3}, cos_x[3] = {1, 1, 1}, sin_x[3] = {0, 0, 0};
  EXPECT_DEATH(k.rope_interleaved(x, cos_x, sin_x, 1, 3), "EMBER_DCHECK failed");
#else
  GTEST_SKIP() << "EMBER_DCHECK is compiled out in this build";
#endif
}
}  // namespace ember::kernels
#endif
