// XNNPACK over caller-owned memory: a process-wide xnn_allocator that bump-allocates from
// the calling thread's current region (XnnArenaScope), and the exact region size one f32
// fully-connected operator needs (XnnFullyConnectedArenaBytes), calibrated at start-up.
#ifndef EMBER_KERNELS_XNNPACK_XNN_ARENA_H_
#define EMBER_KERNELS_XNNPACK_XNN_ARENA_H_

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

// 0-6 are XNNPACK's enum xnn_status (xnn_arena.cc checks they agree); 100 and up are
// ember's own.
enum class XnnStatus : int {
  kOk = 0,
  kUninitialized = 1,
  kInvalidParameter = 2,
  kInvalidState = 3,
  kUnsupportedParameter = 4,
  kUnsupportedHardware = 5,
  kOutOfMemory = 6,
  // XNNPACK asked for memory in a pattern the arena sizing does not model (a different
  // XNNPACK version): sizes would be guesses, so arenas are refused.
  kCalibrationFailed = 100,
  // XNNPACK was initialised with another allocator before XnnInitializeForArenas (it
  // keeps the first one for the life of the process): regions would never be used.
  kNotArenaAllocator = 101,
};
const char* XnnStatusName(XnnStatus status);

// Where each operator's region should begin (a multiple of this, relative to an address
// aligned to it) for XnnFullyConnectedArenaBytes to be exact: no XNNPACK request on any
// architecture asks for more alignment (calibration checks).
inline constexpr size_t kXnnRegionAlignment = 64;

// xnn_initialize with ember's routing allocator, then calibration (below). Process-wide,
// idempotent and thread-safe: the first call does the work (cpuinfo makes its own libc
// allocations then, about a dozen), later calls return its status. Must precede every
// other call in this file and in xnn_fc.h.
XnnStatus XnnInitializeForArenas();

// Makes [begin, begin + bytes) the calling thread's XNNPACK region for the scope's
// lifetime: every allocation XNNPACK makes on this thread is cut from it, in order, at
// the alignment XNNPACK asks for. Without a scope XNNPACK gets nullptr (out_of_memory).
// Deallocation is a no-op: the region's owner releases it as a whole, whenever it likes
// (operators created in it must not run afterwards, but need no deletion).
// Scopes nest (the inner one serves until it ends, then the outer one again) and must
// end on their thread in reverse order of creation, as automatic variables do.
class XnnArenaScope {
 public:
  XnnArenaScope(void* begin, size_t bytes);
  ~XnnArenaScope();
  XnnArenaScope(const XnnArenaScope&) = delete;
  XnnArenaScope& operator=(const XnnArenaScope&) = delete;

  // Bytes from begin to the end of the last allocation, alignment padding included.
  size_t used_bytes() const { return static_cast<size_t>(cursor_ - begin_); }
  // Requests XNNPACK made in this scope, including refused ones.
  size_t num_requests() const { return num_requests_; }

  // The first few requests, which is how calibration observes XNNPACK.
  struct Request {
    uintptr_t address;  // 0: refused
    size_t size;
    size_t alignment;  // 0: a reallocation of an existing block (always refused)
  };
  static constexpr size_t kLoggedRequests = 4;
  // Request i < min(num_requests(), kLoggedRequests).
  const Request& request(size_t i) const { return log_[i]; }

  // The allocator XNNPACK was initialised with calls this on the calling thread's
  // innermost scope. Cuts `size` bytes at `alignment` (a power of two) from the region
  // and logs the request; null, the region unchanged, when it does not fit. alignment 0
  // logs a refused reallocation.
  void* Take(size_t size, size_t alignment);

 private:
  uintptr_t begin_;
  uintptr_t end_;
  uintptr_t cursor_;
  XnnArenaScope* previous_;
  size_t num_requests_ = 0;
  Request log_[kLoggedRequests] = {};
};

// What calibration observed of XNNPACK's f32 fully-connected packing on this CPU.
// Creation makes exactly two requests: the operator struct, then the packed weights
//   packed_bytes = round_up(rows, nr) * 4 * (1 + round_up(cols, kr * sr))
// (one bias float per output row plus the row's weights; rows padded to whole panels of
// nr, cols to whole groups of kr * sr), so a region from a 64-aligned start needs
//   round_up(operator_bytes, weights_alignment) + packed_bytes.
struct XnnFcPacking {
  size_t nr;  // output rows per panel of the GEMM microkernel
  size_t kr;  // consecutive input columns per row in a panel (from the packed layout)
  size_t sr;  // shuffle factor of the "s4"-style kernels (kr * sr from the sizes)
  size_t operator_bytes;  // sizeof(struct xnn_operator)
  size_t operator_alignment;
  size_t weights_alignment;
};

// The calibration result, or nullptr before a successful XnnInitializeForArenas.
const XnnFcPacking* XnnFullyConnectedPacking();

// Exact region bytes XnnFullyConnected::CreateF32(w, rows, cols) uses when its scope's
// region begins at a multiple of kXnnRegionAlignment; independent of y_stride. 0 if
// rows or cols is 0, the size overflows, or XnnInitializeForArenas has not succeeded.
size_t XnnFullyConnectedArenaBytes(size_t rows, size_t cols);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_XNNPACK_XNN_ARENA_H_
