// Tests the XNNPACK arena machinery: calibration, XnnFullyConnectedArenaBytes against the
// bytes creation really takes, clean failure in too-small regions, scope nesting and
// threads, operators' lifetime versus their region's, results, and no heap use.
#include "kernels/xnnpack/xnn_arena.h"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"
#include "kernels/xnnpack/xnn_fc.h"
#include "testing/alloc_count.h"

namespace ember::kernels {
namespace {

// Heap bytes for regions, beginning at a multiple of kXnnRegionAlignment plus `offset`,
// followed by kGuardBytes of a sentinel that must stay untouched.
constexpr size_t kGuardBytes = 256;
constexpr unsigned char kGuard = 0xA5;
class RegionBuffer {
 public:
  explicit RegionBuffer(size_t bytes, size_t offset = 0)
      : storage_(bytes + offset + kXnnRegionAlignment + kGuardBytes), bytes_(bytes) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() +
            (kXnnRegionAlignment - base % kXnnRegionAlignment) % kXnnRegionAlignment +
            offset;
    memset(data_ + bytes_, kGuard, kGuardBytes);
  }
  unsigned char* data() { return data_; }
  bool GuardIntact() const {
    for (size_t i = 0; i < kGuardBytes; ++i) {
      if (data_[bytes_ + i] != kGuard) return false;
    }
    return true;
  }

 private:
  std::vector<unsigned char> storage_;
  unsigned char* data_;
  size_t bytes_;
};

class XnnArenaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const XnnStatus status = XnnInitializeForArenas();
    ASSERT_EQ(status, XnnStatus::kOk) << XnnStatusName(status);
  }
};

// XNNPACK keeps the first allocator it is given; if that is not ember's, calibration sees
// no request and arenas are refused (rather than operators silently using the heap).
// Needs a process where XNNPACK is still uninitialised, forked into a child ("fast" death
// tests fork; "threadsafe" ones re-execute the binary, which qemu-user cannot): so this
// test comes first in the file, and ctest runs every test in a process of its own.
TEST(XnnArenaInitTest, RefusedAfterAnotherAllocator) {
  if (XnnFullyConnectedPacking() != nullptr) {
    GTEST_SKIP() << "XNNPACK is already initialised in this process";
  }
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        const bool foreign_first = xnn_initialize(nullptr) == xnn_status_success;
        const bool refused = XnnInitializeForArenas() == XnnStatus::kNotArenaAllocator;
        const float w[1] = {1};
        XnnFullyConnected fc;
        const bool create_refused = fc.CreateF32(w, 1, 1) == XnnStatus::kUninitialized;
        std::_Exit(foreign_first && refused && create_refused ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// The process's first initialisation (alone, as ctest runs it, or in file order): four
// threads race into it and all see the one calibration.
TEST(XnnArenaInitTest, ConcurrentInitializationAgrees) {
  XnnStatus statuses[4];
  const XnnFcPacking* packings[4];
  std::thread threads[4];
  for (int i = 0; i < 4; ++i) {
    threads[i] = std::thread([&, i] {
      statuses[i] = XnnInitializeForArenas();
      packings[i] = XnnFullyConnectedPacking();
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(statuses[i], XnnStatus::kOk);
    EXPECT_EQ(packings[i], packings[0]);
    EXPECT_NE(packings[i], nullptr);
  }
}

const size_t kSizes[] = {1, 2, 3, 7, 15, 16, 17, 31, 64, 100, 768, 1000};
struct Shape {
  size_t rows, cols;
};
// Real layers: stories110M's FFN, stories15M's classifier, and their transposes.
const Shape kLargeShapes[] = {{2048, 768}, {768, 2048}, {32000, 288}, {288, 32000}};

std::vector<Shape> AllShapes() {
  std::vector<Shape> shapes;
  for (size_t rows : kSizes) {
    for (size_t cols : kSizes) shapes.push_back({rows, cols});
  }
  for (const Shape& s : kLargeShapes) shapes.push_back(s);
  return shapes;
}

TEST_F(XnnArenaTest, CalibrationIsPlausibleAndStable) {
  const XnnFcPacking* p = XnnFullyConnectedPacking();
  ASSERT_NE(p, nullptr);
  printf(
      "XNNPACK f32 fully-connected: nr %zu kr %zu sr %zu, sizeof(xnn_operator) %zu "
      "(alignment %zu), packed weights alignment %zu\n",
      p->nr, p->kr, p->sr, p->operator_bytes, p->operator_alignment,
      p->weights_alignment);
  EXPECT_GE(p->nr, 1u);
  EXPECT_GE(p->kr, 1u);
  EXPECT_GE(p->sr, 1u);
  const size_t k_group = p->kr * p->sr;
  EXPECT_EQ(k_group & (k_group - 1), 0u) << "kr * sr is a power of two";
  EXPECT_GT(p->operator_bytes, 0u);
  EXPECT_LE(p->operator_alignment, kXnnRegionAlignment);
  EXPECT_LE(p->weights_alignment, kXnnRegionAlignment);
  EXPECT_EQ(XnnInitializeForArenas(), XnnStatus::kOk);
  EXPECT_EQ(XnnFullyConnectedPacking(), p) << "calibrated once per process";
  EXPECT_EQ(XnnFullyConnectedArenaBytes(0, 5), 0u);
  EXPECT_EQ(XnnFullyConnectedArenaBytes(5, 0), 0u);
  EXPECT_EQ(XnnFullyConnectedArenaBytes(SIZE_MAX / 2, SIZE_MAX / 2), 0u) << "overflow";
}

TEST_F(XnnArenaTest, ArenaBytesEqualsBytesUsed) {
  size_t max_weights = 0, max_bytes = 0;
  for (const Shape& s : AllShapes()) {
    max_weights = std::max(max_weights, s.rows * s.cols);
    max_bytes = std::max(max_bytes, XnnFullyConnectedArenaBytes(s.rows, s.cols));
  }
  const std::vector<float> w(max_weights, 0.5f);
  RegionBuffer region(max_bytes + 4096);
  for (const Shape& s : AllShapes()) {
    const size_t bytes = XnnFullyConnectedArenaBytes(s.rows, s.cols);
    ASSERT_GE(bytes, s.rows * s.cols * sizeof(float));
    // A region of exactly that size suffices and is used to the last byte; a larger one
    // is used exactly as far.
    for (size_t region_bytes : {bytes, bytes + 4096}) {
      XnnArenaScope scope(region.data(), region_bytes);
      XnnFullyConnected fc;
      ASSERT_EQ(fc.CreateF32(w.data(), s.rows, s.cols), XnnStatus::kOk)
          << s.rows << "x" << s.cols;
      EXPECT_EQ(scope.used_bytes(), bytes) << s.rows << "x" << s.cols;
      EXPECT_EQ(scope.num_requests(), 2u) << "operator + packed weights, no reallocation";
    }
    ASSERT_TRUE(region.GuardIntact());
  }
}

TEST_F(XnnArenaTest, OneByteShortFailsCleanly) {
  std::vector<Shape> shapes;
  for (size_t rows : {1, 16, 17, 100}) {
    for (size_t cols : {1, 7, 64, 1000}) shapes.push_back({rows, cols});
  }
  shapes.push_back({2048, 768});
  const std::vector<float> w(2048 * 1000, 0.25f);
  for (const Shape& s : shapes) {
    const size_t bytes = XnnFullyConnectedArenaBytes(s.rows, s.cols);
    RegionBuffer region(bytes - 1);
    XnnArenaScope scope(region.data(), bytes - 1);
    XnnFullyConnected fc;
    EXPECT_EQ(fc.CreateF32(w.data(), s.rows, s.cols), XnnStatus::kOutOfMemory)
        << s.rows << "x" << s.cols;
    EXPECT_FALSE(fc.created());
    EXPECT_LE(scope.used_bytes(), bytes - 1);
    EXPECT_TRUE(region.GuardIntact()) << "wrote past the region";
  }
  XnnFullyConnected fc;
  EXPECT_EQ(fc.CreateF32(w.data(), 3, 3), XnnStatus::kOutOfMemory) << "no scope";
  {
    XnnArenaScope empty(nullptr, 1024);
    EXPECT_EQ(fc.CreateF32(w.data(), 3, 3), XnnStatus::kOutOfMemory) << "null region";
  }
  float x[3 + 16] = {1, 2, 3}, y[3];
  EXPECT_EQ(fc.Run(x, 1, y), XnnStatus::kInvalidState) << "run after failed create";
}

// A region that starts off the 64-byte grid may need up to 63 bytes of padding more.
TEST_F(XnnArenaTest, MisalignedRegionNeedsAtMostAlignmentMore) {
  const std::vector<float> w(100 * 31, 1.0f);
  const size_t bytes = XnnFullyConnectedArenaBytes(100, 31);
  for (size_t offset : {4, 8, 16, 32, 48, 60}) {
    RegionBuffer region(bytes + kXnnRegionAlignment - 1, offset);
    XnnArenaScope scope(region.data(), bytes + kXnnRegionAlignment - 1);
    XnnFullyConnected fc;
    ASSERT_EQ(fc.CreateF32(w.data(), 100, 31), XnnStatus::kOk) << offset;
    EXPECT_LE(scope.used_bytes(), bytes + kXnnRegionAlignment - 1);
    EXPECT_GE(scope.used_bytes(), bytes);
  }
}

TEST_F(XnnArenaTest, NestedScopesRestoreTheOuterRegion) {
  const std::vector<float> w(64 * 64, 1.0f);
  const size_t bytes = XnnFullyConnectedArenaBytes(64, 64);
  RegionBuffer outer_region(4 * bytes), inner_region(bytes);
  XnnArenaScope outer(outer_region.data(), 4 * bytes);
  XnnFullyConnected a, b, c;
  ASSERT_EQ(a.CreateF32(w.data(), 64, 64), XnnStatus::kOk);
  EXPECT_EQ(outer.used_bytes(), bytes);
  {
    XnnArenaScope inner(inner_region.data(), bytes);
    ASSERT_EQ(b.CreateF32(w.data(), 64, 64), XnnStatus::kOk);
    EXPECT_EQ(inner.used_bytes(), bytes);
    EXPECT_EQ(outer.used_bytes(), bytes) << "the inner scope serves while it lives";
  }
  ASSERT_EQ(c.CreateF32(w.data(), 64, 64), XnnStatus::kOk);
  EXPECT_GE(outer.used_bytes(), 2 * bytes) << "the outer scope serves again";
  EXPECT_LT(outer.used_bytes(), 2 * bytes + kXnnRegionAlignment);
}

// A scope is the calling thread's: another thread creating at the same time gets no
// memory from it.
TEST_F(XnnArenaTest, ScopeServesOnlyItsThread) {
  const float w[4] = {1, 2, 3, 4};
  RegionBuffer region(1 << 16);
  XnnArenaScope scope(region.data(), 1 << 16);
  XnnStatus other_thread = XnnStatus::kOk;
  std::thread([&] {
    XnnFullyConnected fc;
    other_thread = fc.CreateF32(w, 2, 2);
  }).join();
  EXPECT_EQ(other_thread, XnnStatus::kOutOfMemory);
  EXPECT_EQ(scope.used_bytes(), 0u);
  EXPECT_EQ(scope.num_requests(), 0u);
}

// The destructor does not touch the region: operators may outlive their scope (and run
// there), and may even be destroyed after the region's memory is gone.
TEST_F(XnnArenaTest, OperatorsOutliveTheirScopeAndRegion) {
  const size_t rows = 33, cols = 17;
  test::Buffer w(rows * cols, 0, 5);
  test::Buffer x(cols, 0, 6);
  const size_t bytes = XnnFullyConnectedArenaBytes(rows, cols);
  std::vector<float> expected(rows), y(rows);
  reference::MatMulF32(w.data(), x.data(), 1, expected.data(), rows, rows, cols);
  auto region = std::make_unique<RegionBuffer>(bytes);
  XnnFullyConnected fc;
  {
    XnnArenaScope scope(region->data(), bytes);
    ASSERT_EQ(fc.CreateF32(w.data(), rows, cols), XnnStatus::kOk);
  }
  ASSERT_EQ(fc.Run(x.data(), 1, y.data()), XnnStatus::kOk) << "outside the scope";
  test::ExpectClose(y.data(), expected.data(), rows, 1e-5f * cols, 1e-5f, "after scope");
  XnnFullyConnected moved = std::move(fc);
  EXPECT_FALSE(fc.created());
  EXPECT_TRUE(moved.created());
  region.reset();  // released first: destroying the operator must not touch it
  { XnnFullyConnected gone = std::move(moved); }
  EXPECT_FALSE(moved.created());
}

// Operators laid out one after another in one arena, each at a 64-aligned offset (as a
// planner would), computing what the scalar reference does on 1 and 2 threads.
TEST_F(XnnArenaTest, OperatorsInOneArenaMatchReference) {
  const Shape shapes[] = {{1, 1},    {3, 7},    {17, 15},   {64, 100},
                          {100, 31}, {16, 768}, {1000, 64}, {31, 1000}};
  constexpr size_t kCount = sizeof(shapes) / sizeof(shapes[0]);
  size_t offsets[kCount], total = 0;
  for (size_t i = 0; i < kCount; ++i) {
    offsets[i] = total;
    const size_t bytes = XnnFullyConnectedArenaBytes(shapes[i].rows, shapes[i].cols);
    total +=
        (bytes + kXnnRegionAlignment - 1) / kXnnRegionAlignment * kXnnRegionAlignment;
  }
  RegionBuffer arena(total);
  std::vector<test::Buffer> weights;
  XnnFullyConnected ops[kCount];
  for (size_t i = 0; i < kCount; ++i) {
    weights.emplace_back(shapes[i].rows * shapes[i].cols, i % 4, 100 + i);
    const size_t bytes = XnnFullyConnectedArenaBytes(shapes[i].rows, shapes[i].cols);
    XnnArenaScope scope(arena.data() + offsets[i], bytes);
    ASSERT_EQ(ops[i].CreateF32(weights[i].data(), shapes[i].rows, shapes[i].cols),
              XnnStatus::kOk);
    ASSERT_EQ(scope.used_bytes(), bytes);
  }
  // The packed copies are the operators': the caller's weights may change or go.
  std::vector<std::vector<float>> originals;
  for (test::Buffer& w : weights) {
    originals.push_back(w.Copy());
    for (size_t j = 0; j < w.size(); ++j) w[j] = 1e30f;
  }
  ASSERT_TRUE(arena.GuardIntact());
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  uint32_t seed = 1;
  for (size_t batch : {1, 2, 5, 13}) {
    for (size_t i = 0; i < kCount; ++i) {
      const size_t rows = shapes[i].rows, cols = shapes[i].cols;
      test::Buffer x(batch * cols, seed % 4, seed);  // 16 spare floats: XNN_EXTRA_BYTES
      ++seed;
      std::vector<float> expected(batch * rows);
      reference::MatMulF32(originals[i].data(), x.data(), batch, expected.data(), rows,
                           rows, cols);
      for (pthreadpool_t threads : {pthreadpool_t{nullptr}, pool}) {
        std::vector<float> y(batch * rows, -1.0f);
        ASSERT_EQ(ops[i].Run(x.data(), batch, y.data(), threads), XnnStatus::kOk);
        SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " batch " << batch
                                          << (threads ? " pool" : " caller"));
        test::ExpectClose(y.data(), expected.data(), batch * rows, 1e-5f * cols, 1e-5f,
                          "xnn in arena");
      }
    }
  }
  pthreadpool_destroy(pool);
}

// Creating in a scope and running (alone and on a pool) touch no heap at all.
TEST_F(XnnArenaTest, NoHeapAllocationDuringCreateAndRun) {
#if defined(EMBER_ALLOC_COUNT_OFF)
  GTEST_SKIP() << "no allocation counter in this build";
#else
  if (!testing::AllocCounterActive()) GTEST_SKIP() << "another allocator interposes";
  const Shape shapes[] = {{7, 3}, {64, 100}, {1000, 17}, {2048, 768}};
  constexpr size_t kCount = sizeof(shapes) / sizeof(shapes[0]);
  size_t bytes[kCount], total = 0;
  for (size_t i = 0; i < kCount; ++i) {
    bytes[i] = XnnFullyConnectedArenaBytes(shapes[i].rows, shapes[i].cols);
    total += bytes[i] + kXnnRegionAlignment;
  }
  RegionBuffer arena(total);
  const std::vector<float> w(2048 * 768, 0.125f);
  const std::vector<float> x(13 * 2048 + 16, 1.0f);
  std::vector<float> y(13 * 2048);
  pthreadpool_t pool = pthreadpool_create(2);
  ASSERT_NE(pool, nullptr);
  XnnFullyConnected ops[kCount];
  XnnStatus statuses[kCount * 5];
  size_t num_statuses = 0;

  testing::AllocCounterArm();
  size_t offset = 0;
  for (size_t i = 0; i < kCount; ++i) {
    XnnArenaScope scope(arena.data() + offset, bytes[i]);
    statuses[num_statuses++] = ops[i].CreateF32(w.data(), shapes[i].rows, shapes[i].cols);
    offset +=
        (bytes[i] + kXnnRegionAlignment - 1) / kXnnRegionAlignment * kXnnRegionAlignment;
  }
  for (size_t i = 0; i < kCount; ++i) {
    for (size_t batch : {1, 13}) {
      for (pthreadpool_t threads : {pthreadpool_t{nullptr}, pool}) {
        statuses[num_statuses++] = ops[i].Run(x.data(), batch, y.data(), threads);
      }
    }
  }
  const uint64_t allocations = testing::AllocCounterDisarm();

  EXPECT_EQ(allocations, 0u);
  for (size_t i = 0; i < num_statuses; ++i) {
    EXPECT_EQ(statuses[i], XnnStatus::kOk) << "call " << i;
  }
  EXPECT_FLOAT_EQ(y[0], 0.125f * 768) << "the last run: 2048x768";
  pthreadpool_destroy(pool);
#endif
}

}  // namespace
}  // namespace ember::kernels
