// The x86 int8 q8/q4 kernels beyond Highway (quant_x86.cc): vpmaddubsw on AVX2 and
// AVX-512BW, vpdpbusd on AVX-VNNI (VEX, 256-bit) and AVX-512 VNNI. Compiled only for
// x86-64 (quant_x86_none.cc elsewhere) and chosen at run time by ISA tier (isa.h).
#ifndef EMBER_KERNELS_X86_QUANT_X86_H_
#define EMBER_KERNELS_X86_QUANT_X86_H_

#include <cstdint>

#include "kernels/isa.h"
#include "kernels/kernel_table.h"

namespace ember::kernels {

// The q8/q4 and K-quant kernels of `path` (one of kInt8Avx2, kInt8AvxVnni,
// kInt8Avx512Bw, kInt8Avx512Vnni); false in a build without them. Whether the CPU runs
// them is CpuInt8Features()'s answer.
bool X86Int8Kernels(Int8Feature path, Int8Kernels* kernels);

// The K-quant kernels of `path` into k's K-quant entries (kquant_x86.cc); false in a
// build without them.
bool X86KQuantKernels(Int8Feature path, Int8Kernels* k);

// Points the table's q8/q4 and K-quant products at the best path among `int8` (AVX-512
// VNNI, then AVX-VNNI, AVX-512BW, AVX2) and sets int8_dot. Returns whether it did.
bool FillX86Int8Kernels(KernelTable* table, uint32_t int8);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_X86_QUANT_X86_H_
