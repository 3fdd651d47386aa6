// Overflow-checked size arithmetic, for every sum or product of values a caller (or a
// file) chose: a check such as `keep + discard > position` passes when the sum wraps
// past SIZE_MAX, so the sum itself must be checked first.
#ifndef EMBER_RUNTIME_CHECKED_MATH_H_
#define EMBER_RUNTIME_CHECKED_MATH_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace ember {

// a + b into *sum; false (and *sum unusable) when the exact sum does not fit in T.
template <class T>
[[nodiscard]] inline bool CheckedAdd(T a, T b, T* sum) {
  return !__builtin_add_overflow(a, b, sum);
}

// a * b into *product; false (and *product unusable) when it does not fit in T.
template <class T>
[[nodiscard]] inline bool CheckedMul(T a, T b, T* product) {
  return !__builtin_mul_overflow(a, b, product);
}

// a * b * ..., or SIZE_MAX when it overflows (which ArenaPlan then refuses as too large:
// a hostile file's dimensions must not wrap a buffer's size around on a 32-bit target).
inline size_t SaturatingProduct(std::initializer_list<size_t> factors) {
  size_t p = 1;
  for (size_t f : factors) {
    if (f != 0 && p > SIZE_MAX / f) return SIZE_MAX;
    p *= f;
  }
  return p;
}

}  // namespace ember

#endif  // EMBER_RUNTIME_CHECKED_MATH_H_
