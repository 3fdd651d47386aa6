// Tests RMSNorm and LayerNorm on every compiled target against the reference.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/norm_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/norm-inl.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

void TestRmsNorm() {
  uint32_t seed = 7;
  for (size_t n : test::OddSizes()) {
    test::Buffer x(n, seed % 3, seed, 3.0f);
    ++seed;
    test::Buffer w(n, 1, seed++);
    test::Buffer out(n, 2, seed++);
    std::vector<float> expected(n);
    reference::RmsNorm(x.data(), w.data(), 1e-5f, expected.data(), n);
    RmsNorm(x.data(), w.data(), 1e-5f, out.data(), n);
    test::ExpectClose(out.data(), expected.data(), n, 1e-6f, 1e-5f, "rmsnorm");
  }
}

// The per-head norm, in place over rows (heads) that share one weight vector: against the
// reference and bitwise equal to RmsNorm row by row.
void TestRmsNormRows() {
  uint32_t seed = 17;
  for (size_t n : test::OddSizes()) {
    for (size_t rows : {1, 2, 5}) {
      test::Buffer x(rows * n, seed % 3, seed, 3.0f);
      ++seed;
      test::Buffer w(n, 1, seed++);
      std::vector<float> expected = x.Copy();
      std::vector<float> one_by_one(rows * n);
      for (size_t r = 0; r < rows; ++r) {
        RmsNorm(x.data() + r * n, w.data(), 1e-6f, one_by_one.data() + r * n, n);
      }
      reference::RmsNormRows(expected.data(), w.data(), 1e-6f, rows, n);
      RmsNormRows(x.data(), w.data(), 1e-6f, rows, n);
      test::ExpectClose(x.data(), expected.data(), rows * n, 1e-6f, 1e-5f, "rows");
      test::ExpectClose(x.data(), one_by_one.data(), rows * n, 0.0f, 0.0f, "bitwise");
    }
  }
}

void TestLayerNorm() {
  uint32_t seed = 70;
  for (size_t n : test::OddSizes()) {
    for (bool with_bias : {false, true}) {
      test::Buffer x(n, 1, seed++, 2.0f);
      for (size_t i = 0; i < n; ++i) x[i] += 50.0f;  // a large mean: two-pass matters
      test::Buffer w(n, 3, seed++);
      test::Buffer b(n, 0, seed++);
      test::Buffer out(n, 2, seed++);
      std::vector<float> expected(n);
      const float* bias = with_bias ? b.data() : nullptr;
      reference::LayerNorm(x.data(), w.data(), bias, 1e-5f, expected.data(), n);
      LayerNorm(x.data(), w.data(), bias, 1e-5f, out.data(), n);
      test::ExpectClose(out.data(), expected.data(), n, 2e-5f, 1e-4f, "layernorm");
    }
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(NormTest);
HWY_EXPORT_AND_TEST_P(NormTest, TestRmsNorm);
HWY_EXPORT_AND_TEST_P(NormTest, TestLayerNorm);
HWY_EXPORT_AND_TEST_P(NormTest, TestRmsNormRows);
}  // namespace ember::kernels
#endif
