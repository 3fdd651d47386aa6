// Dispatch of the q8/q4 kernels and activation quantization: the portable Highway code
// of quant-inl.h, then the products of the tier's int8 path where it has one (x86:
// quant_x86.cc; Arm sdot/i8mm: dotprod_arm.cc), and the Helium kernels of
// quant_helium.cc in builds for Helium.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/arm/dotprod_arm.h"
#include "kernels/arm/quant_helium.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_table.h"
#include "kernels/quant-inl.h"
#include "kernels/x86/quant_x86.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
void FillQuantTarget(KernelTable* table) { FillQuant(table); }
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(FillQuantTarget);
void FillQuantKernels(KernelTable* table, const IsaChoice& isa) {
  EMBER_DISPATCH(FillQuantTarget, isa.hwy_targets)(table);
}

void FillInt8PathKernels(KernelTable* table, const IsaChoice& isa) {
  FillX86Int8Kernels(table, isa.int8);
  FillDotProdKernels(table, isa.int8);
  FillHeliumKernels(table);  // in builds for Helium (MVE)
}
}  // namespace ember::kernels
#endif
