// XnnFullyConnected and XnnCountingAllocator (see xnn_fc.h).
#include "kernels/xnn_fc.h"

#include <cstdlib>
#include <cstring>
#include <limits>

namespace ember::kernels {

static_assert(static_cast<int>(XnnStatus::kOk) == xnn_status_success);
static_assert(static_cast<int>(XnnStatus::kUninitialized) == xnn_status_uninitialized);
static_assert(static_cast<int>(XnnStatus::kInvalidParameter) ==
              xnn_status_invalid_parameter);
static_assert(static_cast<int>(XnnStatus::kInvalidState) == xnn_status_invalid_state);
static_assert(static_cast<int>(XnnStatus::kUnsupportedParameter) ==
              xnn_status_unsupported_parameter);
static_assert(static_cast<int>(XnnStatus::kUnsupportedHardware) ==
              xnn_status_unsupported_hardware);
static_assert(static_cast<int>(XnnStatus::kOutOfMemory) == xnn_status_out_of_memory);

namespace {

XnnStatus FromXnn(xnn_status status) { return static_cast<XnnStatus>(status); }

// No clamping of the outputs: a plain product.
constexpr float kNoMin = -std::numeric_limits<float>::infinity();
constexpr float kNoMax = std::numeric_limits<float>::infinity();

}  // namespace

const char* XnnStatusName(XnnStatus status) {
  switch (status) {
    case XnnStatus::kOk:
      return "ok";
    case XnnStatus::kUninitialized:
      return "XNNPACK is not initialised";
    case XnnStatus::kInvalidParameter:
      return "invalid parameter";
    case XnnStatus::kInvalidState:
      return "invalid state";
    case XnnStatus::kUnsupportedParameter:
      return "unsupported parameter";
    case XnnStatus::kUnsupportedHardware:
      return "unsupported hardware";
    case XnnStatus::kOutOfMemory:
      return "out of memory";
  }
  return "unknown XNNPACK status";
}

size_t XnnExtraBytes() { return XNN_EXTRA_BYTES; }

XnnStatus XnnInitialize(const xnn_allocator* allocator) {
  return FromXnn(xnn_initialize(allocator));
}

bool XnnHasF16() {
  // The 2022-02 API has no query; creating a 1x1 operator answers it (and allocates
  // a few hundred bytes, freed at once).
  const uint16_t one = 0x3C00;
  xnn_operator_t op = nullptr;
  const xnn_status status = xnn_create_fully_connected_nc_f16(
      1, 1, 1, 1, &one, nullptr, kNoMin, kNoMax, /*flags=*/0, &op);
  if (op) xnn_delete_operator(op);
  return status == xnn_status_success;
}

XnnFullyConnected::~XnnFullyConnected() { Reset(); }

XnnFullyConnected::XnnFullyConnected(XnnFullyConnected&& other) noexcept
    : op_(other.op_), type_(other.type_), rows_(other.rows_), cols_(other.cols_) {
  other.op_ = nullptr;
  other.type_ = Type::kNone;
}

XnnFullyConnected& XnnFullyConnected::operator=(XnnFullyConnected&& other) noexcept {
  if (this != &other) {
    Reset();
    op_ = other.op_;
    type_ = other.type_;
    rows_ = other.rows_;
    cols_ = other.cols_;
    other.op_ = nullptr;
    other.type_ = Type::kNone;
  }
  return *this;
}

void XnnFullyConnected::Reset() {
  if (op_) xnn_delete_operator(op_);
  op_ = nullptr;
  type_ = Type::kNone;
  rows_ = cols_ = 0;
}

XnnStatus XnnFullyConnected::CheckShape(size_t rows, size_t cols,
                                        size_t* y_stride) const {
  if (*y_stride == 0) *y_stride = rows;
  if (rows == 0 || cols == 0 || *y_stride < rows) return XnnStatus::kInvalidParameter;
  return XnnStatus::kOk;
}

// XNNPACK's output_channels x input_channels kernel in "goi" order is exactly ember's
// row-major (rows, cols) weight matrix, so no XNN_FLAG_TRANSPOSE_WEIGHTS.
XnnStatus XnnFullyConnected::CreateF32(const float* w, size_t rows, size_t cols,
                                       size_t y_stride) {
  Reset();
  if (w == nullptr) return XnnStatus::kInvalidParameter;
  const XnnStatus shape = CheckShape(rows, cols, &y_stride);
  if (shape != XnnStatus::kOk) return shape;
  xnn_operator_t op = nullptr;
  const xnn_status status = xnn_create_fully_connected_nc_f32(
      cols, rows, /*input_stride=*/cols, /*output_stride=*/y_stride, w, /*bias=*/nullptr,
      kNoMin, kNoMax, /*flags=*/0, &op);
  if (status != xnn_status_success) return FromXnn(status);
  op_ = op;
  type_ = Type::kF32;
  rows_ = rows;
  cols_ = cols;
  return XnnStatus::kOk;
}

XnnStatus XnnFullyConnected::CreateF16(const uint16_t* w, size_t rows, size_t cols,
                                       size_t y_stride) {
  Reset();
  if (w == nullptr) return XnnStatus::kInvalidParameter;
  const XnnStatus shape = CheckShape(rows, cols, &y_stride);
  if (shape != XnnStatus::kOk) return shape;
  xnn_operator_t op = nullptr;
  const xnn_status status = xnn_create_fully_connected_nc_f16(
      cols, rows, /*input_stride=*/cols, /*output_stride=*/y_stride, w, /*bias=*/nullptr,
      kNoMin, kNoMax, /*flags=*/0, &op);
  if (status != xnn_status_success) return FromXnn(status);
  op_ = op;
  type_ = Type::kF16;
  rows_ = rows;
  cols_ = cols;
  return XnnStatus::kOk;
}

XnnStatus XnnFullyConnected::RunF32(const float* x, size_t batch, float* y,
                                    pthreadpool_t pool) {
  if (type_ != Type::kF32) return XnnStatus::kInvalidState;
  if (batch == 0) return XnnStatus::kOk;
  if (x == nullptr || y == nullptr) return XnnStatus::kInvalidParameter;
  xnn_status status = xnn_setup_fully_connected_nc_f32(op_, batch, x, y, pool);
  if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
  return FromXnn(status);
}

XnnStatus XnnFullyConnected::RunF16(const uint16_t* x, size_t batch, uint16_t* y,
                                    pthreadpool_t pool) {
  if (type_ != Type::kF16) return XnnStatus::kInvalidState;
  if (batch == 0) return XnnStatus::kOk;
  if (x == nullptr || y == nullptr) return XnnStatus::kInvalidParameter;
  xnn_status status = xnn_setup_fully_connected_nc_f16(op_, batch, x, y, pool);
  if (status == xnn_status_success) status = xnn_run_operator(op_, pool);
  return FromXnn(status);
}

// Each block starts with a header of kHeaderBytes (at least the alignment asked for)
// holding, just below the pointer handed out, the block's size and the header's length.
namespace {
constexpr size_t kHeaderBytes = 16;
struct BlockInfo {
  size_t size;
  size_t header;
};
static_assert(sizeof(BlockInfo) <= kHeaderBytes);
BlockInfo* InfoOf(void* pointer) {
  return reinterpret_cast<BlockInfo*>(static_cast<unsigned char*>(pointer) -
                                      sizeof(BlockInfo));
}
}  // namespace

XnnCountingAllocator::XnnCountingAllocator() {
  allocator_.context = this;
  allocator_.allocate = &Allocate;
  allocator_.reallocate = &Reallocate;
  allocator_.deallocate = &Deallocate;
  allocator_.aligned_allocate = &AlignedAllocate;
  allocator_.aligned_deallocate = &Deallocate;
}

void* XnnCountingAllocator::AllocateAligned(size_t alignment, size_t size) {
  if (alignment < kHeaderBytes) alignment = kHeaderBytes;
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  if (size > std::numeric_limits<size_t>::max() - 2 * alignment) return nullptr;
  // aligned_alloc wants a size that is a multiple of the alignment.
  const size_t total = (alignment + size + alignment - 1) & ~(alignment - 1);
  unsigned char* base = static_cast<unsigned char*>(std::aligned_alloc(alignment, total));
  if (base == nullptr) return nullptr;
  unsigned char* pointer = base + alignment;
  *InfoOf(pointer) = BlockInfo{size, alignment};
  requested_bytes_ += size;
  live_bytes_ += size;
  ++num_requests_;
  return pointer;
}

void XnnCountingAllocator::Free(void* pointer) {
  if (pointer == nullptr) return;
  const BlockInfo info = *InfoOf(pointer);
  live_bytes_ -= info.size;
  std::free(static_cast<unsigned char*>(pointer) - info.header);
}

void* XnnCountingAllocator::Allocate(void* context, size_t size) {
  return static_cast<XnnCountingAllocator*>(context)->AllocateAligned(kHeaderBytes, size);
}

void* XnnCountingAllocator::Reallocate(void* context, void* pointer, size_t size) {
  auto* self = static_cast<XnnCountingAllocator*>(context);
  void* fresh = self->AllocateAligned(kHeaderBytes, size);
  if (fresh == nullptr || pointer == nullptr) return fresh;
  const size_t old_size = InfoOf(pointer)->size;
  memcpy(fresh, pointer, old_size < size ? old_size : size);
  self->Free(pointer);
  return fresh;
}

void XnnCountingAllocator::Deallocate(void* context, void* pointer) {
  static_cast<XnnCountingAllocator*>(context)->Free(pointer);
}

void* XnnCountingAllocator::AlignedAllocate(void* context, size_t alignment,
                                            size_t size) {
  return static_cast<XnnCountingAllocator*>(context)->AllocateAligned(alignment, size);
}

}  // namespace ember::kernels
