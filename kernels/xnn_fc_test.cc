// Tests XnnFullyConnected (f32 and, where the CPU has it, f16) against the scalar
// reference over odd shapes, its errors on bad input, and that running it allocates
// nothing (through XnnCountingAllocator).
#include "kernels/xnn_fc.h"

#include <pthreadpool.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/half.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"

namespace ember::kernels {
namespace {

// XNNPACK keeps one allocator per process: install the counting one once, for all tests.
XnnCountingAllocator& Allocator() {
  static XnnCountingAllocator* allocator = [] {
    auto* a = new XnnCountingAllocator();
    const XnnStatus status = XnnInitialize(a->allocator());
    EXPECT_EQ(status, XnnStatus::kOk) << XnnStatusName(status);
    return a;
  }();
  return *allocator;
}

class XnnFcTest : public ::testing::Test {
 protected:
  void SetUp() override { Allocator(); }
};

constexpr float kSentinel = 12345.0f;

// The tails of every row beyond `rows` (up to y_stride) still hold the sentinel.
void ExpectStrideGapsUntouched(const float* y, size_t batch, size_t rows,
                               size_t y_stride) {
  for (size_t b = 0; b < batch; ++b) {
    for (size_t r = rows; r < y_stride; ++r) {
      ASSERT_EQ(y[b * y_stride + r], kSentinel) << "token " << b << " column " << r;
    }
  }
}

TEST_F(XnnFcTest, F32MatchesReferenceOverOddShapes) {
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  uint32_t seed = 1;
  for (size_t batch : {1, 2, 5, 13}) {
    for (size_t rows : {1, 3, 7, 17, 64}) {
      for (size_t cols : test::OddSizes()) {
        const size_t y_stride = rows + 3;
        // Buffer keeps 16 spare floats past the end: more than XNN_EXTRA_BYTES.
        const size_t misalign = seed % 4;
        test::Buffer w(rows * cols, misalign, seed++);
        test::Buffer x(batch * cols, (misalign + 1) % 4, seed++);
        XnnFullyConnected fc;
        ASSERT_EQ(fc.CreateF32(w.data(), rows, cols, y_stride), XnnStatus::kOk);
        std::vector<float> expected(batch * y_stride, kSentinel);
        reference::MatMulF32(w.data(), x.data(), batch, expected.data(), y_stride, rows,
                             cols);
        for (pthreadpool_t threads : {pthreadpool_t{nullptr}, pool}) {
          std::vector<float> y(batch * y_stride, kSentinel);
          const size_t requests = Allocator().num_requests();
          ASSERT_EQ(fc.RunF32(x.data(), batch, y.data(), threads), XnnStatus::kOk);
          EXPECT_EQ(Allocator().num_requests(), requests) << "Run allocated";
          ExpectStrideGapsUntouched(y.data(), batch, rows, y_stride);
          for (size_t b = 0; b < batch; ++b) {
            test::ExpectClose(y.data() + b * y_stride, expected.data() + b * y_stride,
                              rows, 1e-5f * cols, 1e-5f, "xnn f32");
          }
        }
      }
    }
  }
  pthreadpool_destroy(pool);
}

// One thread or two: the same bits (each output is one microkernel's dot product).
TEST_F(XnnFcTest, F32SameBitsForOneAndTwoThreads) {
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  const size_t rows = 301, cols = 257, batch = 37;
  test::Buffer w(rows * cols, 0, 7);
  test::Buffer x(batch * cols, 1, 8);
  XnnFullyConnected fc;
  ASSERT_EQ(fc.CreateF32(w.data(), rows, cols), XnnStatus::kOk);
  std::vector<float> one(batch * rows), two(batch * rows);
  ASSERT_EQ(fc.RunF32(x.data(), batch, one.data(), nullptr), XnnStatus::kOk);
  ASSERT_EQ(fc.RunF32(x.data(), batch, two.data(), pool), XnnStatus::kOk);
  EXPECT_EQ(memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0);
  pthreadpool_destroy(pool);
}

// A token's output row has the same bits whether it runs alone (decode) or inside a
// batch (prefill), at any position in the batch: what ember's bitwise prefill/decode
// agreement needs if XNNPACK ran both. Also the f32 Highway kernels' order differs, so
// XNNPACK and Highway do not agree bitwise (only within the reference tolerance).
TEST_F(XnnFcTest, F32DecodeRowEqualsPrefillRow) {
  for (size_t cols : {7, 64, 257, 768}) {
    const size_t rows = 45, batch = 29;
    test::Buffer w(rows * cols, 0, 11);
    test::Buffer x(batch * cols, 0, 12);
    XnnFullyConnected fc;
    ASSERT_EQ(fc.CreateF32(w.data(), rows, cols), XnnStatus::kOk);
    std::vector<float> all(batch * rows), one(rows);
    ASSERT_EQ(fc.RunF32(x.data(), batch, all.data(), nullptr), XnnStatus::kOk);
    for (size_t b = 0; b < batch; ++b) {
      ASSERT_EQ(fc.RunF32(x.data() + b * cols, 1, one.data(), nullptr), XnnStatus::kOk);
      for (size_t r = 0; r < rows; ++r) {
        ASSERT_EQ(one[r], all[b * rows + r])
            << "cols " << cols << " token " << b << " row " << r;
      }
    }
  }
}

// f16 weights and activations; the reference runs in double on the same f16 values.
// Bound: XNNPACK may round every partial sum to f16 (unit roundoff u = 2^-11), so
// |error| <= gamma(cols + 1) * sum_c |w_c x_c| with gamma(n) = n u / (1 - n u) (Higham,
// recursive summation), plus the rounding of the result itself. A second, tighter check
// on the mean error catches systematic mistakes the worst-case bound would let through.
TEST_F(XnnFcTest, F16MatchesReferenceOverOddShapes) {
  if (!XnnHasF16()) GTEST_SKIP() << "XNNPACK has no f16 fully-connected on this CPU";
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  const double u = 1.0 / 2048;
  uint32_t seed = 500;
  for (size_t batch : {1, 3, 8}) {
    for (size_t rows : {1, 5, 16, 33}) {
      for (size_t cols : {1, 2, 7, 16, 17, 63, 100, 257}) {
        const size_t y_stride = rows + 1;
        test::Buffer w32(rows * cols, 0, seed++);
        test::Buffer x32(batch * cols, 0, seed++);
        std::vector<uint16_t> w(rows * cols), x(batch * cols + 8);  // + XNN_EXTRA_BYTES
        std::vector<float> wf(rows * cols), xf(batch * cols);
        for (size_t i = 0; i < w.size(); ++i) {
          w[i] = FloatToHalf(w32[i]);
          wf[i] = HalfToFloat(w[i]);
        }
        for (size_t i = 0; i < xf.size(); ++i) {
          x[i] = FloatToHalf(x32[i]);
          xf[i] = HalfToFloat(x[i]);
        }
        XnnFullyConnected fc;
        ASSERT_EQ(fc.CreateF16(w.data(), rows, cols, y_stride), XnnStatus::kOk);
        std::vector<float> expected(batch * y_stride);
        reference::MatMulF32(wf.data(), xf.data(), batch, expected.data(), y_stride, rows,
                             cols);
        for (pthreadpool_t threads : {pthreadpool_t{nullptr}, pool}) {
          std::vector<uint16_t> y(batch * y_stride, 0x7E00);  // NaN where unwritten
          ASSERT_EQ(fc.RunF16(x.data(), batch, y.data(), threads), XnnStatus::kOk);
          double error_sum = 0, magnitude_sum = 0;
          for (size_t b = 0; b < batch; ++b) {
            for (size_t r = 0; r < rows; ++r) {
              double abs_dot = 0;
              for (size_t c = 0; c < cols; ++c) {
                abs_dot += std::fabs(double(wf[r * cols + c]) * xf[b * cols + c]);
              }
              const double n_u = double(cols + 1) * u;
              const double want = expected[b * y_stride + r];
              const double bound = n_u / (1 - n_u) * abs_dot + u * std::fabs(want) + 1e-7;
              const double got = HalfToFloat(y[b * y_stride + r]);
              ASSERT_LE(std::fabs(got - want), bound)
                  << "batch " << batch << " rows " << rows << " cols " << cols << " at ("
                  << b << ", " << r << ")";
              error_sum += std::fabs(got - want);
              magnitude_sum += abs_dot;
            }
            ASSERT_EQ(y[b * y_stride + rows], 0x7E00) << "wrote past the row";
          }
          EXPECT_LE(error_sum, 8 * u * magnitude_sum)
              << "batch " << batch << " rows " << rows << " cols " << cols;
        }
      }
    }
  }
  pthreadpool_destroy(pool);
}

TEST_F(XnnFcTest, RejectsBadInput) {
  const float w[6] = {1, 2, 3, 4, 5, 6};
  XnnFullyConnected fc;
  EXPECT_EQ(fc.CreateF32(w, 0, 3), XnnStatus::kInvalidParameter);
  EXPECT_EQ(fc.CreateF32(w, 2, 0), XnnStatus::kInvalidParameter);
  EXPECT_EQ(fc.CreateF32(w, 2, 3, /*y_stride=*/1), XnnStatus::kInvalidParameter);
  EXPECT_EQ(fc.CreateF32(nullptr, 2, 3), XnnStatus::kInvalidParameter);
  float y[4];
  EXPECT_EQ(fc.RunF32(w, 1, y, nullptr), XnnStatus::kInvalidState) << "run before create";
  ASSERT_EQ(fc.CreateF32(w, 2, 3), XnnStatus::kOk);
  uint16_t h[8] = {};
  EXPECT_EQ(fc.RunF16(h, 1, h, nullptr), XnnStatus::kInvalidState) << "f16 run on f32";
  EXPECT_EQ(fc.RunF32(nullptr, 1, y, nullptr), XnnStatus::kInvalidParameter);
  // A valid call after the rejected ones still works: (1 2 3; 4 5 6) (1 1 1)^T.
  float x[3 + 4] = {1, 1, 1};
  ASSERT_EQ(fc.RunF32(x, 1, y, nullptr), XnnStatus::kOk);
  EXPECT_EQ(y[0], 6.0f);
  EXPECT_EQ(y[1], 15.0f);
  EXPECT_STRNE(XnnStatusName(XnnStatus::kUnsupportedHardware), "");
}

// Create takes the packed weights (a copy at least as large as the weights) from the
// allocator XNNPACK was initialised with; destroying the operator gives them back.
TEST_F(XnnFcTest, CreateTakesPackedWeightsFromTheAllocator) {
  const size_t rows = 96, cols = 80;
  test::Buffer w(rows * cols, 0, 3);
  const size_t live_before = Allocator().live_bytes();
  {
    XnnFullyConnected fc;
    ASSERT_EQ(fc.CreateF32(w.data(), rows, cols), XnnStatus::kOk);
    EXPECT_GE(Allocator().live_bytes() - live_before, rows * cols * sizeof(float));
    XnnFullyConnected moved = std::move(fc);
    EXPECT_EQ(fc.type(), XnnFullyConnected::Type::kNone);
    EXPECT_EQ(moved.rows(), rows);
  }
  EXPECT_EQ(Allocator().live_bytes(), live_before);
}

// XNNPACK keeps the first allocator it was given: a second xnn_initialize does not
// redirect later operators (what any arena-backed allocator has to be designed around).
TEST_F(XnnFcTest, SecondInitializeKeepsTheFirstAllocator) {
  XnnCountingAllocator other;
  ASSERT_EQ(XnnInitialize(other.allocator()), XnnStatus::kOk);
  const size_t requests = Allocator().num_requests();
  const float w[4] = {1, 2, 3, 4};
  XnnFullyConnected fc;
  ASSERT_EQ(fc.CreateF32(w, 2, 2), XnnStatus::kOk);
  EXPECT_GT(Allocator().num_requests(), requests);
  EXPECT_EQ(other.num_requests(), 0u);
}

}  // namespace
}  // namespace ember::kernels
