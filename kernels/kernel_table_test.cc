// Which Highway target the kernels run on: prints it (CI logs show it for every emulated
// CPU), checks it is the best target both compiled in and supported by the CPU, and,
// when the environment says what the CPU is (tools/scripts/test.sh sets
// EMBER_EXPECT_TARGET and EMBER_EXPECT_DOTPROD per qemu CPU), that the choice and the
// CPU features are those.
#include <cstdio>
#include <cstdlib>
#include <string>

#if defined(__linux__)
#include <sys/auxv.h>
#endif

#include "gtest/gtest.h"
#include "hwy/highway.h"
#include "hwy/targets.h"
#include "kernels/kernel_table.h"

namespace ember::kernels {
namespace {

const char* QemuCpu() {
  const char* cpu = getenv("QEMU_CPU");
  return cpu != nullptr ? cpu : "unset";
}

std::string TargetList(int64_t targets) {
  std::string names;
  for (int64_t t = targets; t != 0; t &= t - 1) {
    if (!names.empty()) names += ' ';
    names += hwy::TargetName(t & -t);
  }
  return names;
}

// The Arm int8 dot-product extension (sdot/udot), which the quantized kernels use where
// present; -1 where the question does not apply.
int HasArmDotProd() {
#if HWY_ARCH_ARM_A64 && defined(__linux__) && defined(HWCAP_ASIMDDP)
  return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#else
  return -1;
#endif
}

TEST(KernelTableTest, ChoosesTheBestSupportedTarget) {
  const KernelTable table = ChooseKernels();  // first: it settles Highway's choice
  const int64_t supported = hwy::SupportedTargets();
  const int64_t usable = supported & HWY_TARGETS;
  printf("[ember] Highway target: %s (CPU supports: %s; compiled: %s)\n", table.target,
         TargetList(supported).c_str(), TargetList(HWY_TARGETS).c_str());
  ASSERT_NE(usable, 0) << "no compiled target runs on this CPU";
  // Lower bits are better targets.
  EXPECT_STREQ(table.target, hwy::TargetName(usable & -usable));

  const char* expected = getenv("EMBER_EXPECT_TARGET");
  if (expected != nullptr && *expected != '\0') {
    EXPECT_STREQ(table.target, expected)
        << "EMBER_EXPECT_TARGET: the CPU (QEMU_CPU=" << QemuCpu() << ") should select "
        << expected;
  }
}

TEST(KernelTableTest, CpuFeaturesAreTheExpectedOnes) {
  const int dotprod = HasArmDotProd();
  printf("[ember] Arm dot product (sdot): %s\n", dotprod < 0 ? "n/a"
                                                 : dotprod   ? "yes"
                                                             : "no");
  const char* expected = getenv("EMBER_EXPECT_DOTPROD");
  if (expected == nullptr || *expected == '\0') return;
  ASSERT_GE(dotprod, 0) << "EMBER_EXPECT_DOTPROD is set on a CPU without the question";
  EXPECT_EQ(dotprod, atoi(expected)) << "EMBER_EXPECT_DOTPROD: QEMU_CPU=" << QemuCpu();
}

}  // namespace
}  // namespace ember::kernels
