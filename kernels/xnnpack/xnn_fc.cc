// XnnFullyConnected (see xnn_fc.h).
#include "kernels/xnnpack/xnn_fc.h"

#include <xnnpack.h>

#include <limits>

namespace ember::kernels {

namespace {

XnnStatus FromXnn(xnn_status status) { return static_cast<XnnStatus>(status); }

// No clamping of the outputs: a plain product. (XNNPACK then picks its "linear" GEMM
// microkernels where it has them; the packing, and so the arena size, is the same.)
constexpr float kNoMin = -std::numeric_limits<float>::infinity();
constexpr float kNoMax = std::numeric_limits<float>::infinity();

}  // namespace

size_t XnnExtraBytes() { return XNN_EXTRA_BYTES; }

XnnFullyConnected::XnnFullyConnected(XnnFullyConnected&& other) noexcept
    : op_(other.op_), rows_(other.rows_), cols_(other.cols_) {
  other.Reset();
}

XnnFullyConnected& XnnFullyConnected::operator=(XnnFullyConnected&& other) noexcept {
  if (this != &other) {
    op_ = other.op_;
    rows_ = other.rows_;
    cols_ = other.cols_;
    other.Reset();
  }
  return *this;
}

// No xnn_delete_operator: it would only read the operator (possibly after its region was
// released) to make no-op deallocations.
void XnnFullyConnected::Reset() {
  op_ = nullptr;
  rows_ = cols_ = 0;
}

// XNNPACK's output_channels x input_channels kernel in "goi" order is exactly ember's
// row-major (rows, cols) weight matrix, so no XNN_FLAG_TRANSPOSE_WEIGHTS.
XnnStatus XnnFullyConnected::CreateF32(const float* w, size_t rows, size_t cols,
                                       size_t y_stride) {
  Reset();
  // Only the routing allocator guarantees the operator is in a region (and so that not
  // deleting it leaks nothing).
  if (XnnFullyConnectedPacking() == nullptr) return XnnStatus::kUninitialized;
  if (y_stride == 0) y_stride = rows;
  if (w == nullptr || rows == 0 || cols == 0 || y_stride < rows) {
    return XnnStatus::kInvalidParameter;
  }
  xnn_operator_t op = nullptr;
  const xnn_status status = xnn_create_fully_connected_nc_f32(
      cols, rows, /*input_stride=*/cols, /*output_stride=*/y_stride, w, /*bias=*/nullptr,
      kNoMin, kNoMax, /*flags=*/0, &op);
  if (status != xnn_status_success) return FromXnn(status);
  op_ = op;
  rows_ = rows;
  cols_ = cols;
  return XnnStatus::kOk;
}

// Setup stores the batch and pointers into the operator and picks the tiling for the
// pool's thread count; neither it nor run allocates.
XnnStatus XnnFullyConnected::Run(const float* x, size_t batch, float* y,
                                 pthreadpool_t pool) {
  if (op_ == nullptr) return XnnStatus::kInvalidState;
  if (batch == 0) return XnnStatus::kOk;
  if (x == nullptr || y == nullptr) return XnnStatus::kInvalidParameter;
  xnn_status status = xnn_setup_fully_connected_nc_f32(op_, batch, x, y, pool);
  if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
  return FromXnn(status);
}

}  // namespace ember::kernels
