// The Arm int8 q8/q4 kernels: sdot (dotprod) for decode and prefill, smmla (i8mm) for
// prefill. Compiled only for aarch64 and chosen at run time by ISA tier (isa.h) where the
// CPU has the extension (Highway 1.0.3 uses neither).
#ifndef EMBER_KERNELS_ARM_DOTPROD_ARM_H_
#define EMBER_KERNELS_ARM_DOTPROD_ARM_H_

#include <cstdint>

#include "kernels/isa.h"
#include "kernels/kernel_table.h"

namespace ember::kernels {

// Whether this CPU has the Arm dot-product instructions (aarch64 Linux: HWCAP_ASIMDDP);
// false on every other build.
bool HasArmDotProd();

// The kernels of `path`: kInt8ArmDotProd (sdot everywhere, int8_dot "neon-sdot") or
// kInt8ArmI8mm (q8/q4 prefill by usmmla and smmla; sdot for decode, an odd last token
// and the K-quants: "neon-i8mm"); false in a build without them. Whether the
// CPU runs them is CpuInt8Features()'s answer.
bool ArmInt8Kernels(Int8Feature path, Int8Kernels* kernels);

// Points the table's q8/q4 products at the best path among `int8` (i8mm, then sdot)
// and sets int8_dot. Returns whether it did.
bool FillDotProdKernels(KernelTable* table, uint32_t int8);

// The q4_k, q5_k and q6_k sdot kernels into k's K-quant entries (kquant_arm.cc; both
// paths use them: smmla is for q8/q4 only); false in a build without them.
bool DotProdKQuantKernels(Int8Kernels* k);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_ARM_DOTPROD_ARM_H_
