// The Helium (Arm M-profile Vector Extension, MVE) q8 and q4 kernels: compiled only into
// builds whose compiler targets MVE (EMBER_WITH_HELIUM, e.g.
// toolchains/cortex-m55.cmake), where Highway, which has no Helium target, would run its
// portable scalar code.
#ifndef EMBER_KERNELS_ARM_QUANT_HELIUM_H_
#define EMBER_KERNELS_ARM_QUANT_HELIUM_H_

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"

namespace ember::kernels {

// The q8 and q4 products (MatMulQuantFn) in Helium code; `w` must be 4-byte aligned (the
// model file aligns tensors to 64). Defined only in builds with Helium.
void MatMulQ8Helium(const uint8_t* w, const int8_t* xq, const float* xscales,
                    const int32_t* xsums, size_t batch, float* y, size_t y_stride,
                    size_t rows, size_t cols);
void MatMulQ4Helium(const uint8_t* w, const int8_t* xq, const float* xscales,
                    const int32_t* xsums, size_t batch, float* y, size_t y_stride,
                    size_t rows, size_t cols);

// In builds with Helium: points matvec_q8, matmul_q8, matvec_q4 and matmul_q4 at the
// Helium kernels and sets int8_dot = "helium". Returns whether it did (false in every
// other build).
bool FillHeliumKernels(KernelTable* table);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_ARM_QUANT_HELIUM_H_
