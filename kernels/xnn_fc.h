// XnnFullyConnected: a thin wrapper over XNNPACK's f32 and f16 fully-connected operators
// (Debian's 2022-02 snapshot: create with the weights at load, then setup + run per
// call), and a counting xnn_allocator that tells how many bytes XNNPACK asks for.
#ifndef EMBER_KERNELS_XNN_FC_H_
#define EMBER_KERNELS_XNN_FC_H_

#include <xnnpack.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ember::kernels {

// The values of XNNPACK's enum xnn_status (xnn_fc.cc checks they agree).
enum class XnnStatus : int {
  kOk = 0,
  kUninitialized = 1,
  kInvalidParameter = 2,
  kInvalidState = 3,
  kUnsupportedParameter = 4,
  kUnsupportedHardware = 5,
  kOutOfMemory = 6,
};
const char* XnnStatusName(XnnStatus status);

// Bytes XNNPACK may read past the end of an input (XNN_EXTRA_BYTES): pad input buffers.
size_t XnnExtraBytes();

// xnn_initialize(allocator); null means libc. XNNPACK keeps one allocator for the whole
// process: the first successful call's, which later calls do not replace (xnn_fc_test
// checks this), so it must outlive every operator. A runtime with one arena per session
// therefore needs one process-wide allocator that routes each request to the arena of
// the session being loaded.
XnnStatus XnnInitialize(const xnn_allocator* allocator);

// Whether XNNPACK has f16 fully-connected kernels for this CPU (after XnnInitialize).
bool XnnHasF16();

// y (batch, rows) = x (batch, cols) times w^T, for w row-major (rows, cols), as
// XNNPACK's fully-connected operator. Create copies w into XNNPACK's packed layout (the
// caller's weights may go away afterwards); Run makes no allocation. One operator may
// not run on two threads at once (setup writes into it).
class XnnFullyConnected {
 public:
  enum class Type { kNone, kF32, kF16 };

  XnnFullyConnected() = default;
  ~XnnFullyConnected();
  XnnFullyConnected(XnnFullyConnected&& other) noexcept;
  XnnFullyConnected& operator=(XnnFullyConnected&& other) noexcept;
  XnnFullyConnected(const XnnFullyConnected&) = delete;
  XnnFullyConnected& operator=(const XnnFullyConnected&) = delete;

  // f32 weights, inputs and outputs. Output rows are y_stride floats apart
  // (y_stride >= rows); y_stride 0 means rows.
  XnnStatus CreateF32(const float* w, size_t rows, size_t cols, size_t y_stride = 0);
  // IEEE f16 weights (bits, as kernels/half.h writes them), inputs and outputs.
  XnnStatus CreateF16(const uint16_t* w, size_t rows, size_t cols, size_t y_stride = 0);

  // x: batch rows of cols values, readable XnnExtraBytes() past its end. y: batch rows
  // at y_stride. pool may be null (the calling thread does all the work).
  XnnStatus RunF32(const float* x, size_t batch, float* y, pthreadpool_t pool);
  XnnStatus RunF16(const uint16_t* x, size_t batch, uint16_t* y, pthreadpool_t pool);

  Type type() const { return type_; }
  size_t rows() const { return rows_; }
  size_t cols() const { return cols_; }

 private:
  void Reset();
  XnnStatus CheckShape(size_t rows, size_t cols, size_t* y_stride) const;

  xnn_operator* op_ = nullptr;
  Type type_ = Type::kNone;
  size_t rows_ = 0;
  size_t cols_ = 0;
};

// An xnn_allocator over libc that counts what XNNPACK asks for: the bytes and requests of
// every allocation so far and the bytes still live. Installed with XnnInitialize, it
// tells how much an operator's creation needs (packed weights + the operator itself),
// which is what a planner learns in a dry run; tests and benches report it. Thread-safe.
class XnnCountingAllocator {
 public:
  XnnCountingAllocator();
  XnnCountingAllocator(const XnnCountingAllocator&) = delete;
  XnnCountingAllocator& operator=(const XnnCountingAllocator&) = delete;

  const xnn_allocator* allocator() const { return &allocator_; }
  size_t requested_bytes() const { return requested_bytes_.load(); }
  size_t num_requests() const { return num_requests_.load(); }
  size_t live_bytes() const { return live_bytes_.load(); }

 private:
  static void* Allocate(void* context, size_t size);
  static void* Reallocate(void* context, void* pointer, size_t size);
  static void Deallocate(void* context, void* pointer);
  static void* AlignedAllocate(void* context, size_t alignment, size_t size);
  void* AllocateAligned(size_t alignment, size_t size);
  void Free(void* pointer);

  xnn_allocator allocator_;
  std::atomic<size_t> requested_bytes_{0};
  std::atomic<size_t> num_requests_{0};
  std::atomic<size_t> live_bytes_{0};
};

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_XNN_FC_H_
