// Tests both rope pairings on every compiled target against the reference, and the
// tables against the rotation they describe.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/rope_test.cc"
#include "kernels/rope.h"

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
