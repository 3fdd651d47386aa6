// ISA tiers: the named instruction-set levels a KernelTable can be built for, so that a
// capable CPU runs, tests and benchmarks the kernels of a lesser one (`--isa avx2` on an
// AVX-512 machine), and what this CPU has.
//
// A tier caps two things: the Highway target of every kernel family (the best one the
// CPU supports at or below the tier's) and the int8 product paths ember picks beyond
// Highway (Int8Feature). Each KernelTable holds its own choice (ChooseKernels(IsaChoice)
// indexes Highway's dispatch tables directly; see kernels/dispatch.h), so two sessions
// of one process may run different tiers, and nothing process-wide is changed.
#ifndef EMBER_KERNELS_ISA_H_
#define EMBER_KERNELS_ISA_H_

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

// The int8 product paths beyond Highway (bits). Each is a narrowly scoped,
// target-attributed kernel: quant_x86.cc (x86), dotprod_arm.cc (Arm).
enum Int8Feature : uint32_t {
  kInt8Avx2 = 1u << 0,        // vpmaddubsw + vpmaddwd on 256-bit vectors (x86 AVX2)
  kInt8AvxVnni = 1u << 1,     // VEX vpdpbusd on 256-bit vectors (AVX-VNNI)
  kInt8Avx512Bw = 1u << 2,    // vpmaddubsw + vpmaddwd on 512-bit vectors (AVX-512BW)
  kInt8Avx512Vnni = 1u << 3,  // EVEX vpdpbusd on 512-bit vectors (AVX-512 VNNI)
  kInt8ArmDotProd = 1u << 4,  // sdot (Armv8.2 dotprod)
  kInt8ArmI8mm = 1u << 5,     // smmla (Armv8.6 i8mm) for prefill
};

// What one KernelTable may use.
struct IsaChoice {
  const char* tier = "native";  // the tier's name ("native": the best of this CPU)
  int64_t hwy_targets =
      0;              // Highway targets (HWY_* bits) the CPU runs and the tier allows
  uint32_t int8 = 0;  // Int8Feature bits the CPU has and the tier allows
};

enum class IsaError { kOk, kUnknownTier, kUnsupported };

// Resolves a tier name: "native" (or null or empty) for everything this CPU has, else one
// of IsaTierNames(). kUnsupported when the CPU lacks what the tier needs (a tier is a
// demand, not a hint: a benchmark must run what it says it ran); *missing then names
// what is missing (static storage).
IsaError ResolveIsa(const char* tier, IsaChoice* choice, const char** missing);

// The tier EMBER_ISA names, or null when it is unset.
const char* IsaFromEnvironment();

// ResolveIsa(IsaFromEnvironment()), falling back to "native" when EMBER_ISA is invalid
// (a session reports that as an error; this is for kernels that cannot fail, such as
// the sampler's argmax).
IsaChoice DefaultIsa();

// The tiers this build and architecture know (compiled Highway targets), best last,
// separated by spaces: "sse4 avx2 avx-vnni avx512 avx512-vnni" on x86-64.
const char* IsaTierNames();

// Whether the CPU runs `tier` (a name from IsaTierNames()).
bool CpuRunsTier(const char* tier);

// The Int8Feature bits this CPU has (x86: CPUID and the OS's vector state, via Highway's
// supported targets; Arm: HWCAP/HWCAP2).
uint32_t CpuInt8Features();

// Per architecture (quant_x86.cc / dotprod_arm.cc, or their stubs): the features of
// CpuInt8Features given Highway's supported targets.
uint32_t X86Int8Features(int64_t hwy_supported);
uint32_t ArmInt8Features();

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_ISA_H_
