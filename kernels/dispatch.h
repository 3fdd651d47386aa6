// EMBER_DISPATCH: a kernel family's entry for the Highway targets one KernelTable may
// use, instead of HWY_DYNAMIC_DISPATCH's process-wide choice.
//
// Why not hwy::SetSupportedTargetsForTest (or DisableTargets): they change what every
// later dispatch in the process sees, so one session capped at AVX2 would cap all the
// others, and they race with a dispatch on another thread. HWY_EXPORT(FUNC) defines
// HWY_DISPATCH_TABLE(FUNC), one pointer per compiled target in the order of Highway's
// ChosenTarget mask (entry 0 initializes, the last is the SCALAR/EMU128 fallback), and
// HWY_DYNAMIC_DISPATCH indexes it with the lowest set bit of that mask. DispatchIndex
// computes the same index from a mask of our own: the best target of `targets` compiled
// into this translation unit, else the fallback. It must be evaluated in the .cc that
// holds the table (the mask of compiled targets is that TU's HWY_TARGETS), which is why
// it is a header-only static function.
#ifndef EMBER_KERNELS_DISPATCH_H_
#define EMBER_KERNELS_DISPATCH_H_

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"

namespace ember::kernels {

// targets: HWY_* bits (IsaChoice::hwy_targets).
static inline size_t DispatchIndex(int64_t targets) {
#if HWY_IDE || ((HWY_TARGETS & (HWY_TARGETS - 1)) == 0)
  (void)targets;
  return 0;  // one target (static dispatch): the table has one entry
#else
  const int64_t mask =
      (HWY_CHOSEN_TARGET_SHIFT(targets) | HWY_CHOSEN_TARGET_MASK_SCALAR) &
      HWY_CHOSEN_TARGET_MASK_TARGETS;
  return hwy::Num0BitsBelowLS1Bit_Nonzero64(static_cast<uint64_t>(mask));
#endif
}

}  // namespace ember::kernels

// FUNC's implementation for the best target of `targets` (call it like a function).
#define EMBER_DISPATCH(FUNC, targets) \
  (*HWY_DISPATCH_TABLE(FUNC)[::ember::kernels::DispatchIndex(targets)])

#endif  // EMBER_KERNELS_DISPATCH_H_
