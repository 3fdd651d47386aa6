// ChooseKernels: resolves every kernel family for the best target this CPU supports.
#include "kernels/kernel_table.h"

#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include <mutex>

#include "hwy/highway.h"
#include "hwy/targets.h"

namespace ember::kernels {

// Debian's libhwy1:armhf is compiled for the armhf baseline, which has no NEON, so its
// hwy::SupportedTargets() never reports NEON, even on a CPU that has it. ember's armv7
// builds put NEON in the baseline (toolchains/arm-linux-gnueabihf.cmake says why), so
// the kernels are NEON by static dispatch either way; but what Highway reports (the
// targets a log or `ember bench` prints, the per-target tests it instantiates) would be
// wrong. The kernel's HWCAP_ARM_NEON bit is the truth, and Highway 1.0.3's only way to
// amend its supported set is SetSupportedTargetsForTest: it replaces the set detection
// would return and resets the chosen target, so the next dispatch chooses again from it.
//
// When it runs: from ChooseKernels, i.e. when a session is created (never at static
// initialization of the library), and in test binaries from kernels/test_util.h before
// gtest enumerates the per-target tests. Why that is safe: it writes only on armv7 Linux,
// only when the CPU has NEON and Highway's set lacks it (in a process that does not call
// it otherwise: once), under a mutex, and the set it writes is what detection would
// return plus NEON, so any kernel dispatched concurrently still finds a target this CPU
// runs. Elsewhere it does nothing.
void ReportCpuFeaturesToHighway() {
#if HWY_ARCH_ARM_V7 && defined(__linux__) && defined(HWCAP_ARM_NEON)
  static std::mutex mutex;  // constant-initialized: no allocation, no static-init order
  std::lock_guard<std::mutex> lock(mutex);
  const int64_t supported = hwy::SupportedTargets();
  if ((getauxval(AT_HWCAP) & HWCAP_ARM_NEON) != 0 && (supported & HWY_NEON) == 0) {
    hwy::SetSupportedTargetsForTest(supported | HWY_NEON);
  }
#endif
}

KernelTable ChooseKernels() {
  ReportCpuFeaturesToHighway();
  // Settle Highway's choice before reading it: with Highway 1.0.3 on aarch64, asking
  // for the supported targets before the first dispatch can otherwise leave dispatch
  // on generic SVE2 where a specialised target (SVE2_128, SVE_256) exists
  // (docs/platform.md).
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  KernelTable table;
  FillMatVecKernels(&table);
  FillNormKernels(&table);
  FillElementwiseKernels(&table);
  FillRopeKernels(&table);
  FillAttentionKernels(&table);
  FillQuantKernels(&table);
  FillMatVec16Kernels(&table);
  FillKQuantKernels(&table);
  return table;
}

}  // namespace ember::kernels
