// Dispatch of the q8/q4 kernels and activation quantization (quant-inl.h, with the
// AVX-512 VNNI products of quant_vnni-inl.h on AVX3_DL, the Arm sdot kernels of
// dotprod_arm.cc where the CPU has them, and the Helium kernels of quant_helium.cc in
// builds for Helium).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/dotprod_arm.h"
#include "kernels/kernel_table.h"
#include "kernels/quant-inl.h"
#include "kernels/quant_helium.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
void FillQuantTarget(KernelTable* table) { FillQuant(table); }
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(FillQuantTarget);
void FillQuantKernels(KernelTable* table) {
  HWY_DYNAMIC_DISPATCH(FillQuantTarget)(table);
  FillDotProdKernels(table);  // overrides the q8/q4 products where sdot exists
  FillHeliumKernels(table);   // and in builds for Helium (MVE)
}
}  // namespace ember::kernels
#endif
