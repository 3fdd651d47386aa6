// x86 K-quant kernels beyond Highway (quant_x86.h): kquant_x86-inl.h for the four int8
// paths, each a namespace whose functions carry its target attribute (the operations and
// their products' exactness: quant_x86_ops.h). The portable Highway kernels of
// kquant-inl.h run where the tier has no int8 path (sse4).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"
#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"
#include "kernels/x86/quant_x86.h"
#include "kernels/x86/quant_x86_ops.h"

namespace ember::kernels {
namespace {

namespace avx2 {
using Ops = x86::Avx2Ops;
#define EMBER_X86 __attribute__((target(EMBER_X86_AVX2)))
#include "kernels/x86/kquant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx2

namespace avx_vnni {
using Ops = x86::AvxVnniOps;
#define EMBER_X86 __attribute__((target(EMBER_X86_AVX_VNNI)))
#include "kernels/x86/kquant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx_vnni

namespace avx512bw {
using Ops = x86::Avx512BwOps;
#define EMBER_X86 __attribute__((target(EMBER_X86_AVX512BW)))
#include "kernels/x86/kquant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx512bw

namespace avx512_vnni {
using Ops = x86::Avx512VnniOps;
#define EMBER_X86 __attribute__((target(EMBER_X86_AVX512_VNNI)))
#include "kernels/x86/kquant_x86-inl.h"
#undef EMBER_X86
}  // namespace avx512_vnni

}  // namespace

// Prefill blocks: 512-bit paths 2 panels x 4 tokens (as AVX-512 VNNI was tuned); 256-bit
// paths, with 16 registers, two vectors per panel and two accumulators per group half,
// 1 panel x 2 tokens.
bool X86KQuantKernels(Int8Feature path, Int8Kernels* k) {
  switch (path) {
    case kInt8Avx2:
      avx2::KQuantPathKernels<1, 2>(k);
      return true;
    case kInt8AvxVnni:
      avx_vnni::KQuantPathKernels<1, 2>(k);
      return true;
    case kInt8Avx512Bw:
      avx512bw::KQuantPathKernels<2, 4>(k);
      return true;
    case kInt8Avx512Vnni:
      avx512_vnni::KQuantPathKernels<2, 4>(k);
      return true;
    default:
      return false;
  }
}

}  // namespace ember::kernels
