// XnnFullyConnected: XNNPACK's f32 fully-connected operator (Debian's 2022-02 snapshot:
// create with the weights at load, then setup + run per call), created in an arena
// region (kernels/xnnpack/xnn_arena.h) so that nothing is heap-allocated after load.
#ifndef EMBER_KERNELS_XNNPACK_XNN_FC_H_
#define EMBER_KERNELS_XNNPACK_XNN_FC_H_

#include <pthreadpool.h>

#include <cstddef>

#include "kernels/xnnpack/xnn_arena.h"

struct xnn_operator;

namespace ember::kernels {

// Bytes XNNPACK may read past the end of an input (XNN_EXTRA_BYTES): pad input buffers.
size_t XnnExtraBytes();

// y (batch, rows) = x (batch, cols) times w^T, for w row-major (rows, cols), as
// XNNPACK's fully-connected operator.
//
// Create inside an XnnArenaScope (after XnnInitializeForArenas) whose region holds
// XnnFullyConnectedArenaBytes(rows, cols): the operator and its packed copy of w live
// there (the caller's weights may go away afterwards). Run makes no allocation and may
// happen outside any scope, for as long as the region's memory is alive and untouched.
// The destructor does not touch the region (everything XNNPACK would release there is a
// no-op), so operators and their region may be released in either order.
//
// One operator may not run on two threads at once (setup writes into it); different
// operators may.
class XnnFullyConnected {
 public:
  XnnFullyConnected() = default;
  ~XnnFullyConnected() = default;
  XnnFullyConnected(XnnFullyConnected&& other) noexcept;
  XnnFullyConnected& operator=(XnnFullyConnected&& other) noexcept;
  XnnFullyConnected(const XnnFullyConnected&) = delete;
  XnnFullyConnected& operator=(const XnnFullyConnected&) = delete;

  // f32 weights, inputs and outputs. Output rows are y_stride floats apart
  // (y_stride >= rows); y_stride 0 means rows. kOutOfMemory: no scope on this thread or
  // its region is too small (the region's bytes used so far stay used).
  XnnStatus CreateF32(const float* w, size_t rows, size_t cols, size_t y_stride = 0);

  // x: batch rows of cols floats, readable XnnExtraBytes() past its end; y: batch rows
  // at y_stride. pool: the threads to split the work over (pthreadpool counts the
  // caller as one of them); nullptr runs everything on the calling thread. Results are
  // bitwise the same for any pool: each output is one microkernel's dot product.
  XnnStatus Run(const float* x, size_t batch, float* y, pthreadpool_t pool = nullptr);

  bool created() const { return op_ != nullptr; }
  size_t rows() const { return rows_; }
  size_t cols() const { return cols_; }

 private:
  void Reset();

  xnn_operator* op_ = nullptr;  // in an arena region, never deleted (see above)
  size_t rows_ = 0;
  size_t cols_ = 0;
};

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_XNNPACK_XNN_FC_H_
