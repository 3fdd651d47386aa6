// FillHeliumKernels in builds whose compiler does not target Helium (MVE): nothing to
// replace. quant_helium.cc takes its place where it does (kernels/CMakeLists.txt).
#include "kernels/arm/quant_helium.h"

namespace ember::kernels {

bool FillHeliumKernels(KernelTable* /*table*/) { return false; }

}  // namespace ember::kernels
