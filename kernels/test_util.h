// Helpers for kernel tests: seeded random inputs at misaligned addresses and a
// relative/absolute tolerance comparison against the scalar reference.
#ifndef EMBER_KERNELS_TEST_UTIL_H_
#define EMBER_KERNELS_TEST_UTIL_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/kernel_table.h"

namespace ember::kernels::test {

// Runs at static initialization of every test binary that includes this header, before
// gtest enumerates the per-target tests, so they cover every target the CPU has (NEON on
// armv7; see ReportCpuFeaturesToHighway).
[[maybe_unused]] inline const bool kCpuFeaturesReported =
    (ReportCpuFeaturesToHighway(), true);

// Sizes that hit every tail length for vectors of up to 64 lanes, and the empty case
// where the kernel allows it.
inline std::vector<size_t> OddSizes() {
  return {1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 33, 63, 64, 65, 100, 127, 172, 257};
}

// A buffer of n floats starting `misalign` floats past an aligned allocation, so
// kernels see unaligned pointers; uniform in [-scale, scale].
class Buffer {
 public:
  Buffer(size_t n, size_t misalign, uint32_t seed, float scale = 1.0f)
      : storage_(n + misalign + 16), data_(storage_.data() + misalign), n_(n) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    for (size_t i = 0; i < n; ++i) data_[i] = dist(rng);
  }
  float* data() { return data_; }
  const float* data() const { return data_; }
  float& operator[](size_t i) { return data_[i]; }
  size_t size() const { return n_; }
  std::vector<float> Copy() const { return std::vector<float>(data_, data_ + n_); }

 private:
  std::vector<float> storage_;
  float* data_;
  size_t n_;
};

// |actual - expected| <= abs_tol + rel_tol * |expected| for every element.
inline void ExpectClose(const float* actual, const float* expected, size_t n,
                        float abs_tol, float rel_tol, const char* what) {
  for (size_t i = 0; i < n; ++i) {
    const float tol = abs_tol + rel_tol * std::fabs(expected[i]);
    ASSERT_NEAR(actual[i], expected[i], tol) << what << " at index " << i << " of " << n;
  }
}

}  // namespace ember::kernels::test

#endif  // EMBER_KERNELS_TEST_UTIL_H_
