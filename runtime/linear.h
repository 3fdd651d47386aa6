// Linear layers and embedding lookups over bound weight tensors: picks the kernel for the
// tensor's dtype and splits the output rows across the thread pool.
#ifndef EMBER_RUNTIME_LINEAR_H_
#define EMBER_RUNTIME_LINEAR_H_

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"
#include "runtime/model/tensor.h"
#include "runtime/profile.h"
#include "runtime/pool/thread_pool.h"

namespace ember {

// Arena scratch for the input of a q8/q4 or K-quant product, quantized on the fly (see
// KernelTable::quantize_acts): (batch, QuantGroups(cols) * 32) int8 values and
// (batch, QuantGroups(cols)) scales and sums, for cols up to the widest input; half sums
// too when the model has K-quant matrices (else null).
struct QuantScratch {
  int8_t* values = nullptr;
  float* scales = nullptr;
  int32_t* sums = nullptr;
  int32_t* half_sums = nullptr;
};

struct XnnMatrices;  // runtime/xnn_backend.h

// What the forward pass computes with: the kernels for this CPU and the thread pool.
struct ExecContext {
  const kernels::KernelTable* kernels = nullptr;
  const ThreadPool* pool = nullptr;   // may be null: single-threaded
  ForwardProfile* profile = nullptr;  // time per kernel kind, when profiling
  const XnnMatrices* xnn = nullptr;   // the XNNPACK backend's operators, if chosen
};

// f(begin, count) over rows [0, rows) of `row_elems` elements each, in tiles of at
// least ~32K elements: on the pool when that makes more than one tile (a prefill's
// elementwise steps), else on this thread (a decode step's row). Rows are independent,
// so results do not depend on the split.
template <class F>
void ParallelRows(const ExecContext& ctx, size_t rows, size_t row_elems, const F& f) {
  constexpr size_t kTileElems = size_t{1} << 15;
  const size_t tile =
      row_elems >= kTileElems ? 1 : kTileElems / (row_elems ? row_elems : 1);
  if (ctx.pool == nullptr || rows <= tile) {
    f(size_t{0}, rows);
    return;
  }
  const ThreadPool::TileTask run = [](void* p, size_t begin, size_t count) {
    (*static_cast<const F*>(p))(begin, count);
  };
  ctx.pool->ParallelTiles(rows, tile, run, const_cast<F*>(&f), ctx.profile);
}

// Whether this build has kernels for a weight matrix (or embedding) of this type.
bool LinearSupports(DType dtype, Layout layout);
bool EmbeddingSupports(DType dtype, Layout layout);

// The quantization groups a model's q8/q4 matrices need for `batch` input rows of at
// most `max_cols` values (0 when none is quantized: pass max_cols 0). QuantScratch holds
// kernels::kQuantGroup int8 values, one f32 scale and one int32 sum per group.
size_t QuantScratchGroups(size_t batch, size_t max_cols);

// y[b, r] = sum_c w[r, c] x[b, c] for b < batch: x is (batch, w.cols()) and y is
// (batch, w.rows()), both contiguous. One token is a matrix-vector product (decode);
// more are a matrix-matrix product (prefill). Rows are split across threads in tiles
// that do not depend on the thread count, so results are bitwise identical for any.
// `quant` is the scratch for a q8/q4 matrix's quantized input (unused otherwise).
void Linear(const ExecContext& ctx, const QuantScratch& quant, const Tensor& w,
            const float* x, size_t batch, float* y);

// Several products of one input, y[i] = w[i] x for i < n <= kMaxLinearGroup, every w[i]
// with x's width (Q, K and V; gate and up): x is quantized once (for q8/q4) and all
// their row tiles run as one parallel step. Bitwise equal to n calls of Linear.
inline constexpr size_t kMaxLinearGroup = 3;
void LinearGroup(const ExecContext& ctx, const QuantScratch& quant,
                 const Tensor* const* w, float* const* y, size_t n, const float* x,
                 size_t batch);

// out[0, cols) = row `row` of an embedding table, as f32.
void EmbeddingRow(const Tensor& table, uint64_t row, float* out);

}  // namespace ember

#endif  // EMBER_RUNTIME_LINEAR_H_
