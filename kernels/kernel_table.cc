// ChooseKernels: resolves every kernel family for the best target this CPU supports.
#include "kernels/kernel_table.h"

#include "hwy/highway.h"
#include "hwy/targets.h"

namespace ember::kernels {

KernelTable ChooseKernels() {
  // Settle Highway's choice before reading it (see PLATFORM.md: asking for the supported
  // targets before the first dispatch can otherwise freeze a generic target on ARM).
  hwy::GetChosenTarget().Update(hwy::SupportedTargets());
  KernelTable table;
  FillMatVecKernels(&table);
  FillNormKernels(&table);
  FillElementwiseKernels(&table);
  FillRopeKernels(&table);
  FillAttentionKernels(&table);
  return table;
}

}  // namespace ember::kernels
