// Dispatch of the attention kernels (attention-inl.h): the spans over a cache of any
// type, the merge, and the q8 encoding of cache rows and queries.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/attention-inl.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_table.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
void FillAttention(KernelTable* table) {
  table->attend_spans = &AttendSpans;
  table->attend_merge = &AttendMerge;
  table->quantize_kv = &QuantizeKv;
}
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(FillAttention);
void FillAttentionKernels(KernelTable* table, const IsaChoice& isa) {
  EMBER_DISPATCH(FillAttention, isa.hwy_targets)(table);
}
}  // namespace ember::kernels
#endif
