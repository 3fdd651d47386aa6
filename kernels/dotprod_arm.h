// The Arm int8 dot-product (sdot) q8/q4 kernels: compiled only for aarch64, chosen at
// run time where the CPU has the dotprod extension (Highway 1.0.3 does not use sdot).
#ifndef EMBER_KERNELS_DOTPROD_ARM_H_
#define EMBER_KERNELS_DOTPROD_ARM_H_

#include "kernels/kernel_table.h"

namespace ember::kernels {

// Whether this CPU has the Arm dot-product instructions (aarch64 Linux: HWCAP_ASIMDDP);
// false on every other build.
bool HasArmDotProd();

// Where HasArmDotProd(): points matvec_q8, matmul_q8, matvec_q4 and matmul_q4 at the
// sdot kernels and sets int8_dot = "neon-sdot". Returns whether it did.
bool FillDotProdKernels(KernelTable* table);

// Where HasArmDotProd(): points the q4_k, q5_k and q6_k entries at the sdot kernels
// (kquant_arm.cc). Returns whether it did.
bool FillDotProdKQuantKernels(KernelTable* table);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_DOTPROD_ARM_H_
