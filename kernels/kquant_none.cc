// The K-quants in a build without them (EMBER_WITH_KQUANTS=OFF: microcontrollers,
// firmware): replaces their kernels (kquant.cc) and the layout's decoders
// (kquant_layout.cc). The loader refuses q4_k, q5_k and q6_k weights (KQuantsBuiltIn),
// so the kernel table's K-quant entries stay null and the decoders are never called.
#include "kernels/kernel_table.h"
#include "kernels/kquant_layout.h"

namespace ember::kernels {

bool KQuantsBuiltIn() { return false; }

void FillKQuantKernels(KernelTable*, const IsaChoice&) {}

void GetKQuantBlock(KQuantKind, const uint8_t*, size_t, size_t, size_t,
                    KQuantBlockValues* out) {
  *out = KQuantBlockValues();
}

void KQuantBlockWeights(KQuantKind, const KQuantBlockValues&, float* out) {
  for (size_t i = 0; i < kKQuantBlock; ++i) out[i] = 0.0f;
}

void DequantizeKQuantRow(KQuantKind, const uint8_t*, size_t cols, size_t, float* out) {
  for (size_t i = 0; i < cols; ++i) out[i] = 0.0f;
}

}  // namespace ember::kernels
