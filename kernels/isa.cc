// ISA tiers (isa.h): the table of named tiers and their resolution against this CPU.
#include "kernels/isa.h"

#include <strings.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "hwy/highway.h"
#include "hwy/targets.h"
#include "kernels/arm/dotprod_arm.h"
#include "kernels/kernel_table.h"
#include "kernels/x86/quant_x86.h"

namespace ember::kernels {
namespace {

struct Tier {
  const char* name;
  int64_t best_target;   // the best Highway target the tier may use
  int64_t needs_target;  // the CPU must support this one
  uint32_t int8;         // Int8Feature bits it uses; the CPU must have them all
};

// Worst to best per architecture. A tier's Highway targets are best_target and every
// lesser one; the int8 kernels are the best of `int8` (ChooseKernels' order).
constexpr Tier kTiers[] = {
    {"sse4", HWY_SSE4, HWY_SSE4, 0},
    {"avx2", HWY_AVX2, HWY_AVX2, kInt8Avx2},
    {"avx-vnni", HWY_AVX2, HWY_AVX2, kInt8Avx2 | kInt8AvxVnni},
    {"avx512", HWY_AVX3, HWY_AVX3, kInt8Avx2 | kInt8Avx512Bw},
    {"avx512-vnni", HWY_AVX3_DL, HWY_AVX3, kInt8Avx2 | kInt8Avx512Bw | kInt8Avx512Vnni},
    {"neon", HWY_NEON, HWY_NEON, 0},
    {"dotprod", HWY_NEON, HWY_NEON, kInt8ArmDotProd},
    {"i8mm", HWY_NEON, HWY_NEON, kInt8ArmDotProd | kInt8ArmI8mm},
};

// The tier is compiled into this build: its Highway target is one of HWY_TARGETS and
// its int8 paths are built (armv7 has NEON but no sdot kernels).
bool Compiled(const Tier& tier) {
  if ((tier.needs_target & HWY_TARGETS) == 0) return false;
  for (uint32_t rest = tier.int8; rest != 0; rest &= rest - 1) {
    const Int8Feature path = static_cast<Int8Feature>(rest & (~rest + 1));
    Int8Kernels k;
    if (!X86Int8Kernels(path, &k) && !ArmInt8Kernels(path, &k)) return false;
  }
  return true;
}

const char* Int8FeatureName(uint32_t bit) {
  switch (bit) {
    case kInt8Avx2:
      return "AVX2";
    case kInt8AvxVnni:
      return "AVX-VNNI";
    case kInt8Avx512Bw:
      return "AVX-512BW";
    case kInt8Avx512Vnni:
      return "AVX-512 VNNI";
    case kInt8ArmDotProd:
      return "the Arm dot product (dotprod)";
    case kInt8ArmI8mm:
      return "the Arm int8 matrix multiply (i8mm)";
  }
  return "an int8 feature";
}

// What the CPU supports: Highway's targets, after settling its own choice first (with
// Highway 1.0.3 on aarch64, asking for the supported targets before the first dispatch
// can otherwise leave HWY_DYNAMIC_DISPATCH on generic SVE2 where a specialised target,
// SVE2_128 or SVE_256, exists: docs/platform.md). Other code of the process (tests, the
// quant benchmark) still dispatches through it.
int64_t SupportedTargets() {
  ReportCpuFeaturesToHighway();
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  return hwy::SupportedTargets();
}

const Tier* FindTier(const char* name) {
  for (const Tier& tier : kTiers) {
    if (Compiled(tier) && strcasecmp(tier.name, name) == 0) return &tier;
  }
  return nullptr;
}

// Why the CPU cannot run `tier` (null: it can).
const char* Missing(const Tier& tier, int64_t supported, uint32_t int8) {
  if ((supported & tier.needs_target) == 0) return hwy::TargetName(tier.needs_target);
  const uint32_t lacking = tier.int8 & ~int8;
  return lacking ? Int8FeatureName(lacking & (~lacking + 1)) : nullptr;
}

}  // namespace

uint32_t CpuInt8Features() {
  return X86Int8Features(SupportedTargets()) | ArmInt8Features();
}

IsaError ResolveIsa(const char* name, IsaChoice* choice, const char** missing) {
  const int64_t supported = SupportedTargets();
  const uint32_t int8 = X86Int8Features(supported) | ArmInt8Features();
  *missing = nullptr;
  if (name == nullptr || *name == '\0' || strcasecmp(name, "native") == 0) {
    choice->hwy_targets = supported;
    choice->int8 = int8;
    // Named after the best tier whose int8 kernels are those this CPU's best are, so a
    // report says "avx-vnni", not "native" (the Highway target is reported beside it).
    choice->tier = "native";
    for (const Tier& tier : kTiers) {
      if (Compiled(tier) && Missing(tier, supported, int8) == nullptr) {
        choice->tier = tier.name;
      }
    }
    return IsaError::kOk;
  }
  const Tier* tier = FindTier(name);
  if (tier == nullptr) return IsaError::kUnknownTier;
  *missing = Missing(*tier, supported, int8);
  if (*missing != nullptr) return IsaError::kUnsupported;
  choice->tier = tier->name;
  choice->hwy_targets = supported & ~(tier->best_target - 1);  // best_target and lesser
  choice->int8 = tier->int8;
  return IsaError::kOk;
}

const char* IsaFromEnvironment() { return getenv("EMBER_ISA"); }

IsaChoice DefaultIsa() {
  IsaChoice choice;
  const char* missing;
  if (ResolveIsa(IsaFromEnvironment(), &choice, &missing) != IsaError::kOk) {
    ResolveIsa(nullptr, &choice, &missing);
  }
  return choice;
}

const char* IsaTierNames() {
  // Built once: the compiled set is fixed (a static buffer, no allocation). The first
  // caller builds it while others wait; a constant-initialized atomic, not a guarded
  // local static, so a bare-metal image links no __cxa_guard (and its exceptions).
  static char names[128] = {};
  static std::atomic<int> state{0};  // 0: not built, 1: being built, 2: built
  int expected = 0;
  if (state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
    for (const Tier& tier : kTiers) {
      if (!Compiled(tier)) continue;
      if (names[0] != '\0') strncat(names, " ", sizeof(names) - strlen(names) - 1);
      strncat(names, tier.name, sizeof(names) - strlen(names) - 1);
    }
    state.store(2, std::memory_order_release);
  }
  while (state.load(std::memory_order_acquire) != 2) {
  }
  return names;
}

bool CpuRunsTier(const char* name) {
  IsaChoice choice;
  const char* missing;
  return ResolveIsa(name, &choice, &missing) == IsaError::kOk;
}

}  // namespace ember::kernels
