// Tests the f16/bf16 matvec/matmul kernels on every compiled target against the
// reference, and that prefill (matmul) and decode (matvec) rows are bitwise identical.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/matvec16_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/half.h"
#include "kernels/matvec16-inl.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

using RefFn = void (*)(const uint16_t*, const float*, size_t, float*, size_t, size_t,
                       size_t);

// 16-bit weights at a misaligned address (by `misalign` elements).
std::vector<uint16_t> RandomWeights(size_t n, uint32_t seed, uint16_t (*to_bits)(float)) {
  test::Buffer f(n, 0, seed);
  std::vector<uint16_t> bits(n + 3);
  for (size_t i = 0; i < n; ++i) bits[i + seed % 4 % 3] = to_bits(f[i]);
  return bits;
}

template <class Format>
void CheckFormat(uint16_t (*to_bits)(float), RefFn reference, uint32_t seed) {
  for (size_t batch : {1, 2, 3, 4, 5, 9, 17}) {
    for (size_t rows : {1, 2, 3, 4, 5, 15, 16, 17, 33, 100}) {
      for (size_t cols : test::OddSizes()) {
        const std::vector<uint16_t> storage = RandomWeights(rows * cols, seed, to_bits);
        const uint16_t* w = storage.data() + seed % 4 % 3;
        ++seed;
        const size_t y_stride = rows + 3;
        test::Buffer x(batch * cols, seed % 4, seed);
        test::Buffer y(batch * y_stride, (seed + 1) % 4, seed);
        std::vector<float> expected(batch * y_stride);
        reference(w, x.data(), batch, expected.data(), y_stride, rows, cols);
        MatMul16<Format>(w, x.data(), batch, y.data(), y_stride, rows, cols);
        for (size_t b = 0; b < batch; ++b) {
          SCOPED_TRACE(testing::Message() << "rows " << rows << " cols " << cols
                                          << " batch " << batch << " token " << b);
          test::ExpectClose(y.data() + b * y_stride, expected.data() + b * y_stride, rows,
                            1e-5f * cols, 1e-5f, "matmul16");
          test::Buffer single(rows, b % 4, seed);
          MatVec16<Format>(w, x.data() + b * cols, single.data(), rows, cols);
          for (size_t r = 0; r < rows; ++r) {
            ASSERT_EQ(single[r], y[b * y_stride + r]) << "decode row " << r;
          }
        }
      }
    }
  }
}

void TestF16() { CheckFormat<F16Format>(&FloatToHalf, &reference::MatMulF16, 1); }
void TestBF16() { CheckFormat<BF16Format>(&FloatToBFloat16, &reference::MatMulBF16, 2); }

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(MatVec16Test);
HWY_EXPORT_AND_TEST_P(MatVec16Test, TestF16);
HWY_EXPORT_AND_TEST_P(MatVec16Test, TestBF16);
}  // namespace ember::kernels
#endif
