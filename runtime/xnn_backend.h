// The XNNPACK backend: XNNPACK's fully-connected operators for a model's f32 weight
// matrices, created in the session's arena when the session is created (their packed
// weights included, so nothing is allocated afterwards), and run by Linear in place of
// the Highway kernels. Builds without XNNPACK (no threads, firmware) link
// xnn_backend_none.cc, which refuses the backend with a clear status.
#ifndef EMBER_RUNTIME_XNN_BACKEND_H_
#define EMBER_RUNTIME_XNN_BACKEND_H_

#include <cstddef>
#include <cstdint>

#include "runtime/model/model.h"
#include "runtime/model/tensor.h"
#include "runtime/status.h"
#include "runtime/pool/thread_pool.h"

namespace ember {

// The operators of one session, at the start of its "xnnpack" arena buffer.
struct XnnMatrices;

// Whether this build has the XNNPACK backend.
bool XnnpackBuiltIn();

// Bytes XNNPACK may read past the end of an input row: Linear's input buffers carry them.
size_t XnnpackInputPaddingBytes();

// The arena bytes the model's f32 matrices take as XNNPACK operators (packed copies of
// the weights plus the operators). The first call in a process initialises XNNPACK (its
// cpuinfo makes about a dozen heap allocations, once). Unimplemented without XNNPACK.
Status XnnpackArenaBytes(const Model& model, size_t* bytes);

// Creates the operators in `region` (XnnpackArenaBytes bytes, aligned to 64); *matrices
// then points into the region. No heap allocation.
Status CreateXnnpackMatrices(const Model& model, uint8_t* region, size_t bytes,
                             const XnnMatrices** matrices);

// y (batch, w.rows()) = x (batch, w.cols()) w^T on XNNPACK when `w` has an operator in
// `matrices`, across `pool` (may be null); false, with nothing done, when it has none.
bool XnnpackLinear(const XnnMatrices& matrices, const Tensor& w, const float* x,
                   size_t batch, float* y, const ThreadPool* pool);

}  // namespace ember

#endif  // EMBER_RUNTIME_XNN_BACKEND_H_
