// The routing xnn_allocator behind XnnArenaScope, and the start-up calibration of
// XNNPACK's fully-connected allocations that XnnFullyConnectedArenaBytes computes from.
#include "kernels/xnnpack/xnn_arena.h"

#include <xnnpack.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/dcheck.h"

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

const char* XnnStatusName(XnnStatus status) {
  switch (status) {
    case XnnStatus::kOk:
      return "ok";
    case XnnStatus::kUninitialized:
      return "XNNPACK is not initialised (call XnnInitializeForArenas)";
    case XnnStatus::kInvalidParameter:
      return "invalid parameter";
    case XnnStatus::kInvalidState:
      return "invalid state";
    case XnnStatus::kUnsupportedParameter:
      return "unsupported parameter";
    case XnnStatus::kUnsupportedHardware:
      return "unsupported hardware";
    case XnnStatus::kOutOfMemory:
      return "out of memory (no XnnArenaScope, or its region is too small)";
    case XnnStatus::kCalibrationFailed:
      return "XNNPACK's fully-connected allocations do not match ember's arena sizing";
    case XnnStatus::kNotArenaAllocator:
      return "XNNPACK was initialised with another allocator first";
  }
  return "unknown XNNPACK status";
}

namespace {

// The calling thread's innermost scope. Constant-initialised: touching it never
// allocates (a thread_local with a dynamic initialiser could).
thread_local XnnArenaScope* t_scope = nullptr;

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

// round_up(n, multiple) for any multiple > 0; false on overflow.
bool RoundUp(size_t n, size_t multiple, size_t* out) {
  const size_t remainder = n % multiple;
  if (remainder == 0) {
    *out = n;
    return true;
  }
  return !__builtin_add_overflow(n, multiple - remainder, out);
}

// Calibration creates its operators here rather than on the heap; the largest needs
// about 9 KB on x86 (nr 16) and stays below 48 KB for any nr up to 64.
alignas(kXnnRegionAlignment) unsigned char g_calibration_region[64 << 10];
constexpr size_t kMaxCalibrationWeights = 1024;
const float kZeroWeights[kMaxCalibrationWeights] = {};
// 1, 2, 3 ...: distinct values, to see where packing puts each column.
float g_ramp_weights[64];

// What one calibration creation asked for: the operator struct, then the packed weights.
struct Observation {
  size_t operator_bytes, operator_alignment;
  size_t weights_bytes, weights_alignment;
  uintptr_t weights_address;
  size_t used_bytes;
};

}  // namespace

XnnArenaScope::XnnArenaScope(void* begin, size_t bytes)
    : begin_(reinterpret_cast<uintptr_t>(begin)), previous_(t_scope) {
  if (begin == nullptr) bytes = 0;
  if (__builtin_add_overflow(begin_, bytes, &end_)) {
    end_ = std::numeric_limits<uintptr_t>::max();
  }
  cursor_ = begin_;
  t_scope = this;
}

XnnArenaScope::~XnnArenaScope() {
  EMBER_DCHECK(t_scope == this);
  t_scope = previous_;
}

void* XnnArenaScope::Take(size_t size, size_t alignment) {
  uintptr_t address = 0;
  if (IsPowerOfTwo(alignment) &&
      cursor_ <= std::numeric_limits<uintptr_t>::max() - (alignment - 1)) {
    const uintptr_t aligned = (cursor_ + alignment - 1) & ~uintptr_t{alignment - 1};
    if (aligned <= end_ && size <= end_ - aligned) {
      address = aligned;
      cursor_ = aligned + size;
    }
  }
  if (num_requests_ < kLoggedRequests) log_[num_requests_] = {address, size, alignment};
  ++num_requests_;
  return reinterpret_cast<void*>(address);
}

namespace {

// The xnn_allocator XNNPACK is initialised with. It has no state of its own (context is
// unused): every request goes to the calling thread's innermost XnnArenaScope.

// From the calling thread's innermost scope; null without one.
void* Take(size_t size, size_t alignment) {
  XnnArenaScope* scope = t_scope;
  return scope == nullptr ? nullptr : scope->Take(size, alignment);
}

void* Allocate(void*, size_t size) { return Take(size, alignof(std::max_align_t)); }

// XNNPACK 2022-02 reallocates only in the setup of operators with indirection buffers
// (convolution, pooling, resize) and while building subgraphs, never to create or set
// up a fully-connected operator. A bump allocator cannot grow a block in place (and
// does not know the old block's size), so growing is refused, as "out of memory" (the
// old block stays valid, as the xnn_allocator contract asks). From nullptr it is an
// allocation.
void* Reallocate(void*, void* pointer, size_t size) {
  if (pointer == nullptr) return Take(size, alignof(std::max_align_t));
  if (XnnArenaScope* scope = t_scope) scope->Take(size, 0);  // logged, refused
  return nullptr;
}

void* AlignedAllocate(void*, size_t alignment, size_t size) {
  return Take(size, alignment);
}

// The region is released as a whole by its owner.
void Deallocate(void*, void*) {}

const xnn_allocator kRouter = {
    /*context=*/nullptr,
    /*allocate=*/&Allocate,
    /*reallocate=*/&Reallocate,
    /*deallocate=*/&Deallocate,
    /*aligned_allocate=*/&AlignedAllocate,
    /*aligned_deallocate=*/&Deallocate,
};

// Creates (rows, cols) inside a scope over the calibration region and reads back the
// requests. Anything but two aligned requests that both succeed is unexpected.
XnnStatus ObserveCreation(size_t rows, size_t cols, const float* w, Observation* out) {
  XnnArenaScope scope(g_calibration_region, sizeof(g_calibration_region));
  xnn_operator_t op = nullptr;
  const xnn_status status = xnn_create_fully_connected_nc_f32(
      cols, rows, cols, rows, w, /*bias=*/nullptr,
      -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
      /*flags=*/0, &op);
  // A no-op in the region; frees the operator if another allocator made it.
  if (op != nullptr) xnn_delete_operator(op);
  if (scope.num_requests() == 0) {
    return status == xnn_status_success ? XnnStatus::kNotArenaAllocator
                                        : static_cast<XnnStatus>(status);
  }
  if (status != xnn_status_success || scope.num_requests() != 2) {
    return XnnStatus::kCalibrationFailed;
  }
  const XnnArenaScope::Request& op_request = scope.request(0);
  const XnnArenaScope::Request& w_request = scope.request(1);
  auto plausible = [](const XnnArenaScope::Request& r) {
    return r.address != 0 && IsPowerOfTwo(r.alignment) &&
           r.alignment <= kXnnRegionAlignment;
  };
  // The layout the formula assumes: the operator first, at the start of the region.
  if (!plausible(op_request) || !plausible(w_request) ||
      op_request.address != reinterpret_cast<uintptr_t>(g_calibration_region)) {
    return XnnStatus::kCalibrationFailed;
  }
  *out = {op_request.size,     op_request.alignment, w_request.size,
          w_request.alignment, w_request.address,    scope.used_bytes()};
  return XnnStatus::kOk;
}

XnnFcPacking g_packing;
std::atomic<const XnnFcPacking*> g_published_packing{nullptr};

// Bytes of packed weights: n_stride rows of one bias and k_stride weights, in floats.
bool PackedBytes(const XnnFcPacking& p, size_t rows, size_t cols, size_t* out) {
  size_t n_stride, k_stride, per_row;
  return RoundUp(rows, p.nr, &n_stride) && RoundUp(cols, p.kr * p.sr, &k_stride) &&
         !__builtin_add_overflow(k_stride, 1, &per_row) &&
         !__builtin_mul_overflow(per_row, sizeof(float), &per_row) &&
         !__builtin_mul_overflow(n_stride, per_row, out);
}

bool ArenaBytes(const XnnFcPacking& p, size_t rows, size_t cols, size_t* out) {
  size_t operator_bytes, packed_bytes;
  return RoundUp(p.operator_bytes, p.weights_alignment, &operator_bytes) &&
         PackedBytes(p, rows, cols, &packed_bytes) &&
         !__builtin_add_overflow(operator_bytes, packed_bytes, out);
}

// Derives the packing from two creations, (1, 64) and (1, 1), checks it against more
// shapes (byte for byte: requests and region use), then reads kr from a packed layout.
XnnStatus Calibrate() {
  // (1 row, 64 cols): 64 is a multiple of kr * sr (a power of two, at most 16 in
  // XNNPACK), so packed = nr * 4 * (1 + 64).
  Observation wide, narrow;
  XnnStatus status = ObserveCreation(1, 64, kZeroWeights, &wide);
  if (status != XnnStatus::kOk) return status;
  constexpr size_t kWideRowBytes = 4 * (1 + 64);
  if (wide.weights_bytes == 0 || wide.weights_bytes % kWideRowBytes != 0) {
    return XnnStatus::kCalibrationFailed;
  }
  XnnFcPacking p = {};
  p.nr = wide.weights_bytes / kWideRowBytes;
  // (1 row, 1 col): packed = nr * 4 * (1 + kr * sr).
  status = ObserveCreation(1, 1, kZeroWeights, &narrow);
  if (status != XnnStatus::kOk) return status;
  if (narrow.weights_bytes % (4 * p.nr) != 0) return XnnStatus::kCalibrationFailed;
  const size_t k_group = narrow.weights_bytes / (4 * p.nr) - 1;
  if (!IsPowerOfTwo(k_group) || 64 % k_group != 0) return XnnStatus::kCalibrationFailed;
  p.kr = k_group;  // until the layout below splits it into kr and sr
  p.sr = 1;
  p.operator_bytes = wide.operator_bytes;
  p.operator_alignment = wide.operator_alignment;
  p.weights_alignment = wide.weights_alignment;

  // Shapes that cross panel and group boundaries, plus the two above.
  struct Shape {
    size_t rows, cols;
  };
  const Shape checks[] = {{1, 64}, {1, 1},   {2, 3},
                          {3, 5},  {17, 33}, {33, 17},
                          {65, 2}, {7, 130}, {p.nr + 1, k_group + 1}};
  for (const Shape& shape : checks) {
    if (shape.rows * shape.cols > kMaxCalibrationWeights) continue;
    Observation seen;
    status = ObserveCreation(shape.rows, shape.cols, kZeroWeights, &seen);
    if (status != XnnStatus::kOk) return status;
    size_t packed_bytes, arena_bytes;
    if (seen.operator_bytes != p.operator_bytes ||
        seen.operator_alignment != p.operator_alignment ||
        seen.weights_alignment != p.weights_alignment ||
        !PackedBytes(p, shape.rows, shape.cols, &packed_bytes) ||
        !ArenaBytes(p, shape.rows, shape.cols, &arena_bytes) ||
        seen.weights_bytes != packed_bytes || seen.used_bytes != arena_bytes) {
      return XnnStatus::kCalibrationFailed;
    }
  }

  // kr: for one row of weights 1, 2, 3 ..., XNNPACK writes the bias panel (nr zeros),
  // then for each group of kr columns the row's kr values followed by the other nr - 1
  // rows' padding (zeros). So kr is the length of the ramp right after the bias panel.
  // With one row per panel the groups touch and kr cannot be told from sr; it does not
  // matter for sizes (only kr * sr does), so the split is informational.
  for (size_t i = 0; i < k_group; ++i) g_ramp_weights[i] = static_cast<float>(i + 1);
  Observation ramp;
  status = ObserveCreation(1, k_group, g_ramp_weights, &ramp);
  if (status != XnnStatus::kOk) return status;
  if (p.nr > 1) {
    const float* packed = reinterpret_cast<const float*>(ramp.weights_address);
    size_t run = 0;
    while (run < k_group && packed[p.nr + run] == static_cast<float>(run + 1)) ++run;
    if (run == 0 || k_group % run != 0) return XnnStatus::kCalibrationFailed;
    p.kr = run;
    p.sr = k_group / run;
  }
  g_packing = p;
  g_published_packing.store(&g_packing, std::memory_order_release);
  return XnnStatus::kOk;
}

XnnStatus InitializeOnce() {
  const xnn_status status = xnn_initialize(&kRouter);
  if (status != xnn_status_success) return static_cast<XnnStatus>(status);
  return Calibrate();
}

}  // namespace

XnnStatus XnnInitializeForArenas() {
  // A function-local static: C++ runs the initialiser once, other callers wait for it.
  static const XnnStatus status = InitializeOnce();
  return status;
}

const XnnFcPacking* XnnFullyConnectedPacking() {
  return g_published_packing.load(std::memory_order_acquire);
}

size_t XnnFullyConnectedArenaBytes(size_t rows, size_t cols) {
  const XnnFcPacking* packing = XnnFullyConnectedPacking();
  size_t bytes;
  if (packing == nullptr || rows == 0 || cols == 0 ||
      !ArenaBytes(*packing, rows, cols, &bytes)) {
    return 0;
  }
  return bytes;
}

}  // namespace ember::kernels
