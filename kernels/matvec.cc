// Dispatch of the f32 matrix-vector/matrix-matrix kernels (matvec-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/matvec.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_table.h"
#include "kernels/matvec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
void FillMatVec(KernelTable* table) {
  table->target = hwy::TargetName(HWY_TARGET);
  table->matvec_f32 = &MatVecF32;
  table->matmul_f32 = &MatMulF32;
  table->gemm_nn_f32 = &GemmNnF32;
}
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(FillMatVec);
void FillMatVecKernels(KernelTable* table, const IsaChoice& isa) {
  EMBER_DISPATCH(FillMatVec, isa.hwy_targets)(table);
}
}  // namespace ember::kernels
#endif
