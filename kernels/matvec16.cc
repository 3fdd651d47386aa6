// Dispatch of the f16/bf16 matrix-vector/matrix-matrix kernels (matvec16-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/matvec16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_table.h"
#include "kernels/matvec16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
void FillMatVec16(KernelTable* table) {
  table->matvec_f16 = &MatVec16<F16Format>;
  table->matmul_f16 = &MatMul16<F16Format>;
  table->matvec_bf16 = &MatVec16<BF16Format>;
  table->matmul_bf16 = &MatMul16<BF16Format>;
}
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(FillMatVec16);
void FillMatVec16Kernels(KernelTable* table, const IsaChoice& isa) {
  EMBER_DISPATCH(FillMatVec16, isa.hwy_targets)(table);
}
}  // namespace ember::kernels
#endif
