// Tests softmax, the activations, add, mul and add-bias on every compiled target.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/elementwise-inl.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

using InPlaceFn = void (*)(float*, size_t);

void CheckInPlace(InPlaceFn kernel, InPlaceFn ref, float scale, float abs_tol,
                  float rel_tol, const char* what) {
  uint32_t seed = 11;
  for (size_t n : test::OddSizes()) {
    test::Buffer x(n, seed % 4, seed, scale);
    ++seed;
    std::vector<float> expected = x.Copy();
    ref(expected.data(), n);
    kernel(x.data(), n);
    test::ExpectClose(x.data(), expected.data(), n, abs_tol, rel_tol, what);
  }
}

void TestSoftmax() {
  CheckInPlace(&Softmax, &reference::Softmax, 20.0f, 1e-7f, 1e-5f, "softmax");
  // Probabilities sum to one, even for large logits.
  test::Buffer x(1000, 1, 5, 80.0f);
  Softmax(x.data(), x.size());
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += x[i];
  EXPECT_NEAR(sum, 1.0, 1e-5);
}

void TestArgMax() {
  uint32_t seed = 70;
  for (size_t n : test::OddSizes()) {
    test::Buffer x(n, seed % 4, seed, 10.0f);
    ++seed;
    size_t index = n;
    ArgMax(x.data(), n, &index);
    EXPECT_EQ(index, reference::ArgMax(x.data(), n)) << "n " << n;
    // Ties go to the first position; NaNs are skipped wherever they are.
    if (n >= 3) {
      x[n - 1] = 50.0f;
      x[n / 2] = 50.0f;
      x[0] = std::nanf("");
      ArgMax(x.data(), n, &index);
      EXPECT_EQ(index, n / 2) << "n " << n;
      EXPECT_EQ(reference::ArgMax(x.data(), n), n / 2);
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> all_nan(37, std::nanf("")), lowest(37, -inf);
  size_t index = 99;
  ArgMax(all_nan.data(), all_nan.size(), &index);
  EXPECT_EQ(index, 0u);
  lowest[20] = std::nanf("");
  ArgMax(lowest.data(), lowest.size(), &index);
  EXPECT_EQ(index, 0u);
  lowest[33] = inf;
  ArgMax(lowest.data(), lowest.size(), &index);
  EXPECT_EQ(index, 33u);
}

void TestActivations() {
  CheckInPlace(&Silu, &reference::Silu, 8.0f, 1e-6f, 1e-5f, "silu");
  CheckInPlace(&Relu, &reference::Relu, 8.0f, 0.0f, 0.0f, "relu");
  CheckInPlace(&GeluTanh, &reference::GeluTanh, 6.0f, 1e-6f, 1e-5f, "gelu_tanh");
  CheckInPlace(&GeluErf, &reference::GeluErf, 6.0f, 1e-6f, 1e-5f, "gelu_erf");
}

void TestBinary() {
  uint32_t seed = 300;
  for (size_t n : test::OddSizes()) {
    test::Buffer a(n, 1, seed++);
    test::Buffer b(n, 2, seed++);
    std::vector<float> sum = a.Copy(), product = a.Copy();
    reference::Add(sum.data(), b.data(), n);
    reference::Mul(product.data(), b.data(), n);
    test::Buffer a2(n, 3, seed - 2);
    Add(a.data(), b.data(), n);
    Mul(a2.data(), b.data(), n);
    test::ExpectClose(a.data(), sum.data(), n, 0.0f, 0.0f, "add");
    test::ExpectClose(a2.data(), product.data(), n, 0.0f, 0.0f, "mul");

    const size_t rows = 3;
    test::Buffer x(rows * n, 1, seed++);
    std::vector<float> expected = x.Copy();
    reference::AddBias(expected.data(), b.data(), rows, n);
    AddBias(x.data(), b.data(), rows, n);
    test::ExpectClose(x.data(), expected.data(), rows * n, 0.0f, 0.0f, "add_bias");
  }
}

// The embedding scale and soft-capping: x s, and cap tanh(x / cap) for caps below,
// near and above the inputs' range (tanh's saturation is where an approximation fails).
void TestScaleAndSoftCap() {
  uint32_t seed = 500;
  for (size_t n : test::OddSizes()) {
    test::Buffer x(n, seed % 4, seed, 8.0f);
    ++seed;
    std::vector<float> expected = x.Copy();
    reference::Scale(expected.data(), 25.25f, n);
    Scale(x.data(), 25.25f, n);
    test::ExpectClose(x.data(), expected.data(), n, 0.0f, 0.0f, "scale");
    for (float cap : {1.0f, 5.0f, 30.0f, 50.0f}) {
      test::Buffer y(n, seed % 4, seed, 60.0f);
      ++seed;
      std::vector<float> capped = y.Copy();
      reference::SoftCap(capped.data(), cap, n);
      SoftCap(y.data(), cap, n);
      test::ExpectClose(y.data(), capped.data(), n, 2e-6f * cap, 1e-5f, "soft_cap");
      // Within the cap, to a float rounding (armv7's tanh reaches 1 + 2^-23).
      for (size_t i = 0; i < n; ++i) ASSERT_LE(std::abs(y[i]), cap * (1 + 1e-6f)) << i;
    }
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(ElementwiseTest);
HWY_EXPORT_AND_TEST_P(ElementwiseTest, TestSoftmax);
HWY_EXPORT_AND_TEST_P(ElementwiseTest, TestArgMax);
HWY_EXPORT_AND_TEST_P(ElementwiseTest, TestActivations);
HWY_EXPORT_AND_TEST_P(ElementwiseTest, TestBinary);
HWY_EXPORT_AND_TEST_P(ElementwiseTest, TestScaleAndSoftCap);
}  // namespace ember::kernels
#endif
