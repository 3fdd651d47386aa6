// Dispatch of the normalization kernels (norm-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/norm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/kernel_table.h"
#include "kernels/norm-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
void FillNorm(KernelTable* table) {
  table->rms_norm = &RmsNorm;
  table->layer_norm = &LayerNorm;
  table->rms_norm_rows = &RmsNormRows;
}
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(FillNorm);
void FillNormKernels(KernelTable* table) { HWY_DYNAMIC_DISPATCH(FillNorm)(table); }
}  // namespace ember::kernels
#endif
