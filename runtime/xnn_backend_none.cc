// The XNNPACK backend in a build without XNNPACK (no threads, firmware): refused.
#include "runtime/xnn_backend.h"

namespace ember {

struct XnnMatrices {};

bool XnnpackBuiltIn() { return false; }

size_t XnnpackInputPaddingBytes() { return 0; }

Status XnnpackArenaBytes(const Model&, size_t*) {
  return Unimplemented("the XNNPACK backend is not in this build (EMBER_WITH_XNNPACK)");
}

Status CreateXnnpackMatrices(const Model&, uint8_t*, size_t, const XnnMatrices**) {
  return Unimplemented("the XNNPACK backend is not in this build (EMBER_WITH_XNNPACK)");
}

bool XnnpackLinear(const XnnMatrices&, const Tensor&, const float*, size_t, float*,
                   const ThreadPool*) {
  return false;
}

}  // namespace ember
