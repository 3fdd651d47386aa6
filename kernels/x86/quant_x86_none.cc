// The x86 int8 kernels (quant_x86.h) in a build for another architecture: none.
#include "kernels/x86/quant_x86.h"

namespace ember::kernels {

bool X86Int8Kernels(Int8Feature /*path*/, Int8Kernels* /*kernels*/) { return false; }
bool X86KQuantKernels(Int8Feature /*path*/, Int8Kernels* /*k*/) { return false; }
bool FillX86Int8Kernels(KernelTable* /*table*/, uint32_t /*int8*/) { return false; }
uint32_t X86Int8Features(int64_t /*hwy_supported*/) { return 0; }

}  // namespace ember::kernels
