// Tests for the heap-allocation counter: each allocation function counts while armed, on
// any thread, and nothing counts while disarmed.
#include "testing/alloc_count.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace ember::testing {
namespace {

// Keeps the compiler from proving an allocation unused and removing it.
template <typename T>
void Escape(T* p) {
  asm volatile("" : : "g"(p) : "memory");
}

// A sanitizer build keeps the sanitizer's allocator (EMBER_ALLOC_COUNT_OFF): the counting
// tests skip there, and only there.
#ifdef EMBER_ALLOC_COUNT_OFF
#define SKIP_IF_INACTIVE() GTEST_SKIP() << "allocation counter off (sanitizer build)"
#else
#define SKIP_IF_INACTIVE() static_cast<void>(0)
#endif

TEST(AllocCountTest, ReplacementIsActive) {
#ifdef EMBER_ALLOC_COUNT_OFF
  EXPECT_FALSE(AllocCounterActive());
#else
  EXPECT_TRUE(AllocCounterActive());
#endif
}

TEST(AllocCountTest, CountsEachCFunction) {
  SKIP_IF_INACTIVE();
  AllocCounterArm();
  void* a = malloc(24);
  Escape(a);
  void* b = calloc(3, 8);
  Escape(b);
  a = realloc(a, 4096);
  Escape(a);
  void* c = aligned_alloc(64, 128);
  Escape(c);
  void* d = nullptr;
  ASSERT_EQ(posix_memalign(&d, 128, 256), 0);
  Escape(d);
  const uint64_t count = AllocCounterDisarm();
  EXPECT_EQ(count, 5u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(d) % 128, 0u);
  free(a);
  free(b);
  free(c);
  free(d);
}

TEST(AllocCountTest, PosixMemalignRejectsBadAlignment) {
  SKIP_IF_INACTIVE();
  void* p = nullptr;
  EXPECT_EQ(posix_memalign(&p, 24, 64), EINVAL);
  EXPECT_EQ(p, nullptr);
}

TEST(AllocCountTest, CountsEveryOperatorNewForm) {
  SKIP_IF_INACTIVE();
  AllocCounterArm();
  int* one = new int(7);
  Escape(one);
  int* many = new int[100];
  Escape(many);
  int* nothrow = new (std::nothrow) int(3);
  Escape(nothrow);
  struct alignas(256) Wide {
    char bytes[256];
  };
  Wide* wide = new Wide;
  Escape(wide);
  Wide* wides = new Wide[3];
  Escape(wides);
  const uint64_t count = AllocCounterDisarm();
  EXPECT_EQ(count, 5u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wide) % 256, 0u);
  delete one;
  delete[] many;
  delete nothrow;
  delete wide;
  delete[] wides;
}

TEST(AllocCountTest, CountsAnotherThreadsVectorGrowth) {
  SKIP_IF_INACTIVE();
  std::vector<int> values;
  AllocCounterArm();
  std::thread worker([&values] {
    for (int i = 0; i < 1000; ++i) values.push_back(i);  // doubling: ~11 allocations
  });
  worker.join();
  const uint64_t count = AllocCounterDisarm();
  ASSERT_EQ(values.size(), 1000u);
  // Each growth allocates once (1, 2, 4, ... 1024); the thread's start may add more.
  EXPECT_GE(count, 11u);
}

TEST(AllocCountTest, NothingCountsWhileDisarmed) {
  SKIP_IF_INACTIVE();
  AllocCounterArm();
  const uint64_t armed = AllocCounterDisarm();
  EXPECT_EQ(armed, 0u);
  auto text = std::make_unique<std::string>(1000, 'x');
  Escape(text.get());
  void* p = malloc(1 << 20);
  Escape(p);
  free(p);
  std::thread([] {
    std::vector<double> v(4096);
    Escape(v.data());
  }).join();
  EXPECT_EQ(AllocCounterCount(), 0u);
  // Arming again starts from zero.
  AllocCounterArm();
  EXPECT_EQ(AllocCounterDisarm(), 0u);
}

TEST(AllocCountTest, FreeDoesNotCount) {
  SKIP_IF_INACTIVE();
  void* p = malloc(64);
  Escape(p);
  AllocCounterArm();
  free(p);
  EXPECT_EQ(AllocCounterDisarm(), 0u);
}

}  // namespace
}  // namespace ember::testing
