// What the aarch64 sdot kernels share (dotprod_arm.cc for q8/q4, kquant_arm.cc for the
// K-quants): the target attribute they are compiled with and the 16-row dot product by
// element. Included on aarch64 Linux only, after <arm_neon.h>.
#ifndef EMBER_KERNELS_ARM_DOTPROD_ARM_UTIL_H_
#define EMBER_KERNELS_ARM_DOTPROD_ARM_UTIL_H_

#include <arm_neon.h>

#include <cstddef>

// GCC 12's arm_neon.h needs the arch string ("+dotprod" alone fails to inline
// vdotq_laneq_s32); these functions run only where the kernel reports HWCAP_ASIMDDP.
#define EMBER_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))

namespace ember::kernels::dotprod {

// acc[b][0..3] (rows 0-3, 4-7, 8-11, 12-15) += chunk w . lane kLane of token b's xv[b].
template <int kLane, int kB>
EMBER_DOTPROD inline void DotChunk(int32x4_t (&acc)[kB][4], const int8x16_t (&w)[4],
                                   const int8x16_t (&xv)[kB]) {
  for (int b = 0; b < kB; ++b) {
    for (int q = 0; q < 4; ++q)
      acc[b][q] = vdotq_laneq_s32(acc[b][q], w[q], xv[b], kLane);
  }
}

// dot + the products of a quarter panel's 4 rows (w[kFirst + i]: inputs 4i .. 4i + 3 of
// a 16-input half, 4 rows x 4 bytes) with one token's 16 inputs xv, lane i each.
template <int kFirst>
EMBER_DOTPROD inline int32x4_t QuarterDot(int32x4_t dot, const int8x16_t (&w)[8],
                                          int8x16_t xv) {
  dot = vdotq_laneq_s32(dot, w[kFirst], xv, 0);
  dot = vdotq_laneq_s32(dot, w[kFirst + 1], xv, 1);
  dot = vdotq_laneq_s32(dot, w[kFirst + 2], xv, 2);
  return vdotq_laneq_s32(dot, w[kFirst + 3], xv, 3);
}

// The prefill tiles' half panels (rows 8h .. 8h + 7): how many of the panel at row0
// hold rows below `rows`, and how many rows half h holds.
inline size_t Halves(size_t row0, size_t rows) { return rows - row0 > 8 ? 2 : 1; }
inline size_t HalfRows(size_t row0, size_t rows, size_t h) {
  const size_t left = rows - row0 - 8 * h;
  return left < 8 ? left : 8;
}

}  // namespace ember::kernels::dotprod

#endif  // EMBER_KERNELS_ARM_DOTPROD_ARM_UTIL_H_
