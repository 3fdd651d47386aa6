// Which Highway target the kernels run on: prints it (CI logs show it for every emulated
// CPU), checks it is the best target both compiled in and supported by the CPU, and,
// when the environment says what the CPU is (tools/scripts/test.sh sets
// EMBER_EXPECT_TARGET and EMBER_EXPECT_DOTPROD per qemu CPU), that the choice and the
// CPU features are those.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  const IsaChoice isa = DefaultIsa();  // EMBER_ISA's tier, else this CPU's best
  const int64_t usable = supported & HWY_TARGETS & isa.hwy_targets;
  printf("[ember] Highway target: %s, ISA tier %s (CPU supports: %s; compiled: %s)\n",
         table.target, table.isa, TargetList(supported).c_str(),
         TargetList(HWY_TARGETS).c_str());
  ASSERT_NE(usable, 0) << "no compiled target runs on this CPU";
  // Lower bits are better targets.
  EXPECT_STREQ(table.target, hwy::TargetName(usable & -usable));
  EXPECT_STREQ(table.isa, isa.tier);
  const char* env = IsaFromEnvironment();
  if (env != nullptr && *env != '\0' && strcmp(env, "native") != 0) {
    IsaChoice choice;
    const char* missing;
    ASSERT_EQ(ResolveIsa(env, &choice, &missing), IsaError::kOk)
        << "EMBER_ISA=" << env << ": " << (missing ? missing : "unknown tier")
        << " (tiers: " << IsaTierNames() << ")";
    EXPECT_STREQ(table.isa, env);
  }

  const char* expected = getenv("EMBER_EXPECT_TARGET");
  if (expected != nullptr && *expected != '\0') {
    EXPECT_STREQ(table.target, expected)
        << "EMBER_EXPECT_TARGET: the CPU (QEMU_CPU=" << QemuCpu() << ") should select "
        << expected;
  }
}

TEST(KernelTableTest, CpuFeaturesAreTheExpectedOnes) {
  const int dotprod = HasArmDotProd();
  const int i8mm = dotprod < 0 ? -1 : (CpuInt8Features() & kInt8ArmI8mm) != 0;
  printf("[ember] Arm dot product (sdot): %s, int8 matrix multiply (i8mm): %s\n",
         dotprod < 0 ? "n/a"
         : dotprod   ? "yes"
                     : "no",
         i8mm < 0 ? "n/a"
         : i8mm   ? "yes"
                  : "no");
  const struct {
    const char* variable;
    int has;
  } features[] = {{"EMBER_EXPECT_DOTPROD", dotprod}, {"EMBER_EXPECT_I8MM", i8mm}};
  for (const auto& feature : features) {
    const char* expected = getenv(feature.variable);
    if (expected == nullptr || *expected == '\0') continue;
    ASSERT_GE(feature.has, 0) << feature.variable
                              << " is set on a CPU without the question";
    EXPECT_EQ(feature.has, atoi(expected))
        << feature.variable << ": QEMU_CPU=" << QemuCpu();
  }
}

// Each tier this build knows: where the CPU runs it, the table is built for its Highway
// target (or the best lesser one the CPU has) and its int8 path; elsewhere ResolveIsa
// says what is missing. The expectations are this table, written from the tiers'
// definitions (isa.h), not from isa.cc's.
TEST(KernelTableTest, EveryTierBuildsItsKernels) {
  const struct {
    const char* tier;
    int64_t target;  // the best Highway target the tier allows
    const char* int8_dot;
  } kExpected[] = {
      {"sse4", HWY_SSE4, "highway"},
      {"avx2", HWY_AVX2, "avx2"},
      {"avx-vnni", HWY_AVX2, "avx-vnni"},
      {"avx512", HWY_AVX3, "avx512bw"},
      {"avx512-vnni", HWY_AVX3_DL, "avx512-vnni"},
      {"neon", HWY_NEON, "highway"},
      {"dotprod", HWY_NEON, "neon-sdot"},
      {"i8mm", HWY_NEON, "neon-i8mm"},
  };
  const int64_t supported = hwy::SupportedTargets() & HWY_TARGETS;
  const std::string names = std::string(" ") + IsaTierNames() + " ";
  int known = 0;
  for (const auto& e : kExpected) {
    if (names.find(std::string(" ") + e.tier + " ") == std::string::npos) continue;
    ++known;
    IsaChoice choice;
    const char* missing;
    const IsaError error = ResolveIsa(e.tier, &choice, &missing);
    if (error == IsaError::kUnsupported) {
      ASSERT_NE(missing, nullptr);
      printf("[ember] tier %s: this CPU lacks %s\n", e.tier, missing);
      EXPECT_FALSE(CpuRunsTier(e.tier));
      continue;
    }
    ASSERT_EQ(error, IsaError::kOk) << e.tier;
    const KernelTable table = ChooseKernels(choice);
    const int64_t allowed = supported & ~(e.target - 1);  // e.target and lesser ones
    printf("[ember] tier %s: Highway %s, int8 %s\n", e.tier, table.target,
           table.int8_dot);
    EXPECT_STREQ(table.isa, e.tier);
    EXPECT_STREQ(table.target, hwy::TargetName(allowed & -allowed)) << e.tier;
    EXPECT_STREQ(table.int8_dot, e.int8_dot) << e.tier;
    EXPECT_TRUE(CpuRunsTier(e.tier));
  }
  EXPECT_EQ(known, static_cast<int>(std::count(names.begin(), names.end(), ' ')) - 1)
      << "a tier without an expectation here: " << IsaTierNames();
}

TEST(KernelTableTest, UnknownTiersAreRefused) {
  IsaChoice choice;
  const char* missing;
  EXPECT_EQ(ResolveIsa("avx3", &choice, &missing), IsaError::kUnknownTier);
  EXPECT_EQ(ResolveIsa("avx-512", &choice, &missing), IsaError::kUnknownTier);
  EXPECT_EQ(ResolveIsa("native", &choice, &missing), IsaError::kOk);
  EXPECT_EQ(ResolveIsa(nullptr, &choice, &missing), IsaError::kOk);
  EXPECT_EQ(ResolveIsa("", &choice, &missing), IsaError::kOk);
}

}  // namespace
}  // namespace ember::kernels
