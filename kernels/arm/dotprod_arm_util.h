// What the aarch64 sdot kernels share (dotprod_arm.cc for q8/q4, kquant_arm.cc for the
// K-quants): the target attribute they are compiled with and the 16-row dot product by
// element. Included on aarch64 Linux only, after <arm_neon.h>.
#ifndef EMBER_KERNELS_ARM_DOTPROD_ARM_UTIL_H_
#define EMBER_KERNELS_ARM_DOTPROD_ARM_UTIL_H_

#include <arm_neon.h>

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

}  // namespace ember::kernels::dotprod

#endif  // EMBER_KERNELS_ARM_DOTPROD_ARM_UTIL_H_
