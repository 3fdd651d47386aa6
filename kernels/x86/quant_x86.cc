// x86 int8 q8/q4 kernels beyond Highway (quant_x86.h): the products of quant_x86-inl.h
// for four paths, each a namespace whose functions carry its target attribute (the
// operations and the products' exactness: quant_x86_ops.h), and the CPU's int8 features.
//
// Why intrinsics: Highway 1.0.3 has no op for vpdpbusd (u8 x s8 4-way dot products into
// int32 lanes) nor for vpmaddubsw, and its AVX2 target cannot name AVX-VNNI. Which path
// runs is the ISA tier's choice (isa.h), checked against CPUID, not Highway's target.
#include "kernels/x86/quant_x86.h"

#include <cpuid.h>
#include <immintrin.h>

#include <cstddef>
#include <cstring>
#include <initializer_list>

#include "hwy/detect_targets.h"
#include "kernels/quant_layout.h"
#include "kernels/x86/quant_x86_ops.h"

namespace ember::kernels {
namespace {

using x86::Avx2Ops;
using x86::Avx512BwOps;
using x86::Avx512VnniOps;
using x86::AvxVnniOps;

// One namespace per path: quant_x86-inl.h's templates with that path's Ops and target
// attribute (the attribute without always_inline: Panels is noinline).
namespace avx2 {
using Ops = Avx2Ops;
#define EMBER_X86 __attribute__((target(EMBER_X86_AVX2)))
#include "kernels/x86/quant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx2

namespace avx_vnni {
using Ops = AvxVnniOps;
#define EMBER_X86 __attribute__((target(EMBER_X86_AVX_VNNI)))
#include "kernels/x86/quant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx_vnni

namespace avx512bw {
using Ops = Avx512BwOps;
#define EMBER_X86 __attribute__((target(EMBER_X86_AVX512BW)))
#include "kernels/x86/quant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx512bw

namespace avx512_vnni {
using Ops = Avx512VnniOps;
#define EMBER_X86 __attribute__((target(EMBER_X86_AVX512_VNNI)))
#include "kernels/x86/quant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx512_vnni

}  // namespace

// Prefill's block: 512-bit paths 2 panels x 4 tokens (8 int32 + 8 f32 accumulators of 32
// registers; 2x6, 3x4, 4x3 measured the same on AVX-512 VNNI); 256-bit paths have 16
// registers and two vectors per panel: 1 panel x 4 tokens. q4 without VNNI (vpmaddubsw,
// its nibbles unpacked per load) gains from more tokens a load: 2 panels x 6 tokens, in
// quant_bench's q4 prefill (128 tokens; 2048x768 and 768x2048) 270 and 255 GMAC/s against
// 199 and 194 on the AVX-512BW path, 127 and 125 against 108 and 106 on AVX2 (AMD EPYC
// VM, 2026-11-26, quiet); with AVX-VNNI it lost (about 70 against 104, measured while
// other jobs ran: the VEX path has 16 registers and none to spare).
bool X86Int8Kernels(Int8Feature path, Int8Kernels* kernels) {
  if (!X86KQuantKernels(path, kernels)) return false;
  switch (path) {
    case kInt8Avx2:
      avx2::PathKernels<1, 2, 6>("avx2", kernels);
      return true;
    case kInt8AvxVnni:
      avx_vnni::PathKernels<1, 1, 4>("avx-vnni", kernels);
      return true;
    case kInt8Avx512Bw:
      avx512bw::PathKernels<2, 2, 6>("avx512bw", kernels);
      return true;
    case kInt8Avx512Vnni:
      avx512_vnni::PathKernels<2, 2, 4>("avx512-vnni", kernels);
      return true;
    default:
      return false;
  }
}

bool FillX86Int8Kernels(KernelTable* table, uint32_t int8) {
  for (Int8Feature path : {kInt8Avx512Vnni, kInt8AvxVnni, kInt8Avx512Bw, kInt8Avx2}) {
    Int8Kernels k;
    if ((int8 & path) == 0 || !X86Int8Kernels(path, &k)) continue;
    UseInt8Kernels(table, k);
    return true;
  }
  return false;
}

// Highway's targets already say the OS saves the vector state and the CPU has AVX2
// (HWY_AVX2) and AVX-512 F/VL/DQ/BW (HWY_AVX3); the VNNI bits come from CPUID leaf 7:
// subleaf 0 ECX bit 11 (AVX512_VNNI), subleaf 1 EAX bit 4 (AVX_VNNI).
uint32_t X86Int8Features(int64_t hwy_supported) {
  uint32_t features = 0;
  unsigned eax, ebx, ecx, edx;
  const bool leaf7 = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0;
  const bool avx512_vnni = leaf7 && (ecx & (1u << 11)) != 0;
  const bool avx_vnni = leaf7 && eax >= 1 &&
                        __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) &&
                        (eax & (1u << 4)) != 0;
  if ((hwy_supported & HWY_AVX2) != 0) {
    features |= kInt8Avx2;
    if (avx_vnni) features |= kInt8AvxVnni;
  }
  if ((hwy_supported & HWY_AVX3) != 0) {
    features |= kInt8Avx512Bw;
    if (avx512_vnni) features |= kInt8Avx512Vnni;
  }
  return features;
}

}  // namespace ember::kernels
