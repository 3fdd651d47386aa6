// Dispatch of the K-quant (q4_k, q5_k, q6_k) kernels: kquant-inl.h per Highway target
// (AVX-512 VNNI on AVX3_DL, kquant_vnni-inl.h), then the Arm sdot kernels of
// kquant_arm.cc where the CPU has them.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kquant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/dotprod_arm.h"
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
void FillKQuantKernels(KernelTable* table) {
  HWY_DYNAMIC_DISPATCH(FillKQuantTarget)(table);
  FillDotProdKQuantKernels(table);  // overrides them where sdot exists
}
}  // namespace ember::kernels
#endif
