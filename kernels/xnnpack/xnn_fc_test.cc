// Tests XnnFullyConnected (f32, created in arena regions) against the scalar reference
// over odd shapes and strides, its bitwise behaviour across threads and batch positions,
// its errors on bad input, and that running it allocates nothing.
#include "kernels/xnnpack/xnn_fc.h"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"
#include "testing/alloc_count.h"

namespace ember::kernels {
namespace {

class XnnFcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const XnnStatus status = XnnInitializeForArenas();
    ASSERT_EQ(status, XnnStatus::kOk) << XnnStatusName(status);
  }
};

// An operator together with the heap region it was created in (64-byte aligned, as
// XnnFullyConnectedArenaBytes assumes).
class RegionFc {
 public:
  XnnStatus Create(const float* w, size_t rows, size_t cols, size_t y_stride = 0) {
    const size_t bytes = XnnFullyConnectedArenaBytes(rows, cols);
    region_.assign(bytes + kXnnRegionAlignment, 0);
    const uintptr_t base = reinterpret_cast<uintptr_t>(region_.data());
    XnnArenaScope scope(
        region_.data() +
            (kXnnRegionAlignment - base % kXnnRegionAlignment) % kXnnRegionAlignment,
        bytes);
    return fc_.CreateF32(w, rows, cols, y_stride);
  }
  XnnFullyConnected& fc() { return fc_; }

 private:
  std::vector<unsigned char> region_;
  XnnFullyConnected fc_;
};

// Whether the allocation counter can see this build's heap calls.
bool CanCountAllocations() {
#if !defined(EMBER_ALLOC_COUNT_OFF)
  return testing::AllocCounterActive();
#else
  return false;
#endif
}
void ArmAllocCounter() {
#if !defined(EMBER_ALLOC_COUNT_OFF)
  testing::AllocCounterArm();
#endif
}
uint64_t DisarmAllocCounter() {
#if !defined(EMBER_ALLOC_COUNT_OFF)
  return testing::AllocCounterDisarm();
#else
  return 0;
#endif
}

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
  const bool count = CanCountAllocations();
  uint32_t seed = 1;
  for (size_t batch : {1, 2, 5, 13}) {
    for (size_t rows : {1, 3, 7, 17, 64}) {
      for (size_t cols : test::OddSizes()) {
        const size_t y_stride = rows + 3;
        // Buffer keeps 16 spare floats past the end: more than XNN_EXTRA_BYTES.
        const size_t misalign = seed % 4;
        test::Buffer w(rows * cols, misalign, seed++);
        test::Buffer x(batch * cols, (misalign + 1) % 4, seed++);
        RegionFc op;
        ASSERT_EQ(op.Create(w.data(), rows, cols, y_stride), XnnStatus::kOk);
        std::vector<float> expected(batch * y_stride, kSentinel);
        reference::MatMulF32(w.data(), x.data(), batch, expected.data(), y_stride, rows,
                             cols);
        for (pthreadpool_t threads : {pthreadpool_t{nullptr}, pool}) {
          std::vector<float> y(batch * y_stride, kSentinel);
          ArmAllocCounter();
          const XnnStatus status = op.fc().Run(x.data(), batch, y.data(), threads);
          const uint64_t allocations = DisarmAllocCounter();
          ASSERT_EQ(status, XnnStatus::kOk);
          if (count) {
            EXPECT_EQ(allocations, 0u) << "Run allocated";
          }
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
  RegionFc op;
  ASSERT_EQ(op.Create(w.data(), rows, cols), XnnStatus::kOk);
  std::vector<float> one(batch * rows), two(batch * rows);
  ASSERT_EQ(op.fc().Run(x.data(), batch, one.data(), nullptr), XnnStatus::kOk);
  ASSERT_EQ(op.fc().Run(x.data(), batch, two.data(), pool), XnnStatus::kOk);
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
    RegionFc op;
    ASSERT_EQ(op.Create(w.data(), rows, cols), XnnStatus::kOk);
    std::vector<float> all(batch * rows), one(rows);
    ASSERT_EQ(op.fc().Run(x.data(), batch, all.data(), nullptr), XnnStatus::kOk);
    for (size_t b = 0; b < batch; ++b) {
      ASSERT_EQ(op.fc().Run(x.data() + b * cols, 1, one.data(), nullptr), XnnStatus::kOk);
      for (size_t r = 0; r < rows; ++r) {
        ASSERT_EQ(one[r], all[b * rows + r])
            << "cols " << cols << " token " << b << " row " << r;
      }
    }
  }
}

TEST_F(XnnFcTest, RejectsBadInput) {
  const float w[6] = {1, 2, 3, 4, 5, 6};
  RegionFc op;
  EXPECT_EQ(op.Create(w, 0, 3), XnnStatus::kInvalidParameter);
  EXPECT_EQ(op.Create(w, 2, 0), XnnStatus::kInvalidParameter);
  EXPECT_EQ(op.Create(w, 2, 3, /*y_stride=*/1), XnnStatus::kInvalidParameter);
  EXPECT_EQ(op.Create(nullptr, 2, 3), XnnStatus::kInvalidParameter);
  float y[4];
  EXPECT_EQ(op.fc().Run(w, 1, y), XnnStatus::kInvalidState) << "run before create";
  ASSERT_EQ(op.Create(w, 2, 3), XnnStatus::kOk);
  EXPECT_TRUE(op.fc().created());
  EXPECT_EQ(op.fc().rows(), 2u);
  EXPECT_EQ(op.fc().cols(), 3u);
  EXPECT_EQ(op.fc().Run(nullptr, 1, y), XnnStatus::kInvalidParameter);
  EXPECT_EQ(op.fc().Run(w, 0, nullptr), XnnStatus::kOk) << "an empty batch is no work";
  // A valid call after the rejected ones still works: (1 2 3; 4 5 6) (1 1 1)^T.
  float x[3 + 4] = {1, 1, 1};
  ASSERT_EQ(op.fc().Run(x, 1, y), XnnStatus::kOk);
  EXPECT_EQ(y[0], 6.0f);
  EXPECT_EQ(y[1], 15.0f);
  EXPECT_STRNE(XnnStatusName(XnnStatus::kUnsupportedHardware), "");
  EXPECT_STRNE(XnnStatusName(XnnStatus::kCalibrationFailed), "");
  EXPECT_GE(XnnExtraBytes(), 1u);
}

// A later xnn_initialize (here with libc) does not take XNNPACK away from the arenas:
// it keeps the first allocator, so outside a scope creation still finds no memory.
TEST_F(XnnFcTest, LaterInitializeKeepsTheArenaAllocator) {
  ASSERT_EQ(xnn_initialize(nullptr), xnn_status_success);
  const float w[4] = {1, 2, 3, 4};
  XnnFullyConnected outside;
  EXPECT_EQ(outside.CreateF32(w, 2, 2), XnnStatus::kOutOfMemory);
  RegionFc inside;
  EXPECT_EQ(inside.Create(w, 2, 2), XnnStatus::kOk);
}

}  // namespace
}  // namespace ember::kernels
