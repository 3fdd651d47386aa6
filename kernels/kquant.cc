// Dispatch of the K-quant (q4_k, q5_k, q6_k) kernels: the portable Highway code of
// kquant-inl.h per target; the tier's int8 path replaces them where it has one
// (kquant_x86.cc, kquant_arm.cc: FillInt8PathKernels).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kquant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_table.h"
#include "kernels/kquant-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
void FillKQuantTarget(KernelTable* table) { FillKQuant(table); }
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(FillKQuantTarget);
void FillKQuantKernels(KernelTable* table, const IsaChoice& isa) {
  EMBER_DISPATCH(FillKQuantTarget, isa.hwy_targets)(table);
}
}  // namespace ember::kernels
#endif
