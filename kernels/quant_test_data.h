// The shapes and matrices the q8/q4 kernel tests run on, without a test framework: the
// GoogleTest checks (quant_test_util.h) and the bare-metal Helium test
// (quant_helium_test.cc) share them.
#ifndef EMBER_KERNELS_QUANT_TEST_DATA_H_
#define EMBER_KERNELS_QUANT_TEST_DATA_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/quant_layout.h"

namespace ember::kernels::test {

inline std::vector<size_t> QuantRows() { return {1, 15, 16, 17, 33, 100}; }
inline std::vector<size_t> QuantCols() { return {1, 31, 32, 33, 64, 100, 288}; }
inline std::vector<size_t> QuantBatches() { return {1, 2, 3, 7, 17}; }

// A (rows, cols) matrix. Exact: per group, integers in the quantizer's range times
// 2^-exponent with one element at the range's end (-8 for q4, +-127 otherwise), so the
// quantizer reproduces them exactly and every product and partial sum in the kernels is
// exact too: results must then be bitwise equal whatever the float operation order.
// Otherwise uniform in [-1, 1].
inline std::vector<float> QuantTestMatrix(size_t rows, size_t cols, bool q4, bool exact,
                                          int exponent, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> m(rows * cols);
  if (!exact) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : m) v = dist(rng);
    return m;
  }
  const int lo = q4 ? -8 : -127, hi = q4 ? 7 : 127;
  std::uniform_int_distribution<int> value(lo, hi);
  const float unit = std::ldexp(1.0f, -exponent);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t begin = 0; begin < cols; begin += kQuantGroup) {
      const size_t n = cols - begin < kQuantGroup ? cols - begin : kQuantGroup;
      for (size_t i = 0; i < n; ++i) m[r * cols + begin + i] = unit * value(rng);
      const size_t at = begin + rng() % n;
      m[r * cols + at] = unit * (q4 ? -8 : (rng() % 2 ? 127 : -127));
    }
  }
  return m;
}

}  // namespace ember::kernels::test

#endif  // EMBER_KERNELS_QUANT_TEST_DATA_H_
