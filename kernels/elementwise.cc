// Dispatch of the elementwise kernels (elementwise-inl.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/elementwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/elementwise-inl.h"
#include "kernels/kernel_table.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
void FillElementwise(KernelTable* table) {
  table->softmax = &Softmax;
  table->argmax = &ArgMax;
  table->silu = &Silu;
  table->relu = &Relu;
  table->gelu_tanh = &GeluTanh;
  table->gelu_erf = &GeluErf;
  table->add = &Add;
  table->mul = &Mul;
  table->add_bias = &AddBias;
  table->scale = &Scale;
  table->soft_cap = &SoftCap;
}
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(FillElementwise);
void FillElementwiseKernels(KernelTable* table) {
  HWY_DYNAMIC_DISPATCH(FillElementwise)(table);
}
}  // namespace ember::kernels
#endif
