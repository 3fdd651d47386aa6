// ChooseKernels: resolves every kernel family for the best target this CPU supports.
#include "kernels/kernel_table.h"

#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "hwy/highway.h"
#include "hwy/targets.h"

namespace ember::kernels {
namespace {

// Debian's libhwy1:armhf is compiled for the armhf baseline, which has no NEON, so its
// hwy::SupportedTargets() never reports NEON, even on a CPU that has it. ember's armv7
// builds put NEON in the baseline (toolchains/arm-linux-gnueabihf.cmake says why), so
// the kernels are NEON by static dispatch either way; but Highway's per-target tests
// instantiate only the targets SupportedTargets() reports (the NEON kernel tests would
// silently not run), and anything that prints the supported targets would be wrong. The
// kernel's HWCAP_ARM_NEON bit is the truth: tell Highway. Runs once at static
// initialization (before gtest enumerates the per-target tests) and from ChooseKernels
// (a per-target test's TearDown resets Highway's supported-targets override).
bool ReportArmv7Neon() {
#if HWY_ARCH_ARM_V7 && defined(__linux__) && defined(HWCAP_ARM_NEON)
  const int64_t supported = hwy::SupportedTargets();
  if ((getauxval(AT_HWCAP) & HWCAP_ARM_NEON) != 0 && (supported & HWY_NEON) == 0) {
    hwy::SetSupportedTargetsForTest(supported | HWY_NEON);
  }
#endif
  return true;
}
[[maybe_unused]] const bool kArmv7NeonReported = ReportArmv7Neon();

}  // namespace

KernelTable ChooseKernels() {
  ReportArmv7Neon();
  // Settle Highway's choice before reading it (see PLATFORM.md: asking for the supported
  // targets before the first dispatch can otherwise freeze a generic target on ARM).
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  KernelTable table;
  FillMatVecKernels(&table);
  FillNormKernels(&table);
  FillElementwiseKernels(&table);
  FillRopeKernels(&table);
  FillAttentionKernels(&table);
  FillQuantKernels(&table);
  FillMatVec16Kernels(&table);
  return table;
}

}  // namespace ember::kernels
