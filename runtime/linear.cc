// Linear: dtype dispatch and the row split across threads (see linear.h).
#include "runtime/linear.h"

#include <cstring>

#include "kernels/dcheck.h"
#include "kernels/half.h"
#include "kernels/quant_layout.h"
#include "runtime/xnn_backend.h"

namespace ember {
namespace {

using kernels::kQuantPanelRows;

kernels::QuantKind QuantKindOf(DType dtype) {
  return dtype == DType::kQ8 ? kernels::QuantKind::kQ8 : kernels::QuantKind::kQ4;
}

// Products on int8 activations (KernelTable::quantize_acts).
bool IsQuantized(DType dtype) {
  return dtype == DType::kQ8 || dtype == DType::kQ4 || IsKQuant(dtype);
}

kernels::MatMulKQuantFn KQuantKernel(const kernels::KernelTable& k, DType dtype,
                                     bool one) {
  switch (dtype) {
    case DType::kQ4K:
      return one ? k.matvec_q4k : k.matmul_q4k;
    case DType::kQ5K:
      return one ? k.matvec_q5k : k.matmul_q5k;
    default:
      return one ? k.matvec_q6k : k.matmul_q6k;
  }
}

struct LinearTask {
  const ExecContext* ctx;
  const QuantScratch* quant;
  const Tensor* w;
  const float* x;
  size_t batch;
  float* y;
};

// Rows [begin, begin + count) of y; begin is a multiple of the row tile (of 16).
void RunRows(void* context, size_t begin, size_t count) {
  const LinearTask& t = *static_cast<const LinearTask*>(context);
  const kernels::KernelTable& k = *t.ctx->kernels;
  const size_t rows = t.w->rows(), cols = t.w->cols();
  EMBER_DCHECK(begin % kQuantPanelRows == 0 && begin + count <= rows);
  const bool one = t.batch == 1;
  float* y = t.y + begin;
  switch (t.w->dtype) {
    case DType::kF32: {
      const float* w = t.w->f32() + begin * cols;
      if (one) {
        k.matvec_f32(w, t.x, y, count, cols);
      } else {
        k.matmul_f32(w, t.x, t.batch, y, rows, count, cols);
      }
      return;
    }
    case DType::kF16:
    case DType::kBF16: {
      const uint16_t* w = t.w->u16() + begin * cols;
      const bool f16 = t.w->dtype == DType::kF16;
      if (one) {
        (f16 ? k.matvec_f16 : k.matvec_bf16)(w, t.x, y, count, cols);
      } else {
        (f16 ? k.matmul_f16 : k.matmul_bf16)(w, t.x, t.batch, y, rows, count, cols);
      }
      return;
    }
    case DType::kQ8:
    case DType::kQ4: {
      const kernels::QuantKind kind = QuantKindOf(t.w->dtype);
      const uint8_t* w = t.w->data + (begin / kQuantPanelRows) *
                                         kernels::QuantPanelBytes(kind, cols);
      const bool q8 = kind == kernels::QuantKind::kQ8;
      const kernels::MatMulQuantFn fn =
          one ? (q8 ? k.matvec_q8 : k.matvec_q4) : (q8 ? k.matmul_q8 : k.matmul_q4);
      const QuantScratch& a = *t.quant;
      fn(w, a.values, a.scales, a.sums, t.batch, y, rows, count, cols);
      return;
    }
    case DType::kQ4K:
    case DType::kQ5K:
    case DType::kQ6K: {
      const uint8_t* w =
          t.w->data + (begin / kQuantPanelRows) *
                          kernels::KQuantPanelBytes(KQuantKindOf(t.w->dtype), cols);
      const QuantScratch& a = *t.quant;
      KQuantKernel(k, t.w->dtype, one)(w, a.values, a.scales, a.sums, a.half_sums,
                                       t.batch, y, rows, count, cols);
      return;
    }
  }
}

// Multiply-adds that make a task worth handing to another thread.
constexpr size_t kTileWork = size_t{1} << 16;

// Rows per task: enough multiply-adds (kTileWork) that a task outweighs its scheduling,
// in whole blocks of the kernel's preferred width: 8 panels (128 rows) for a q8/q4
// matrix-vector product (the VNNI and sdot kernels read them one after the other, as
// one stream; the portable kernel 4 at a time), 2 panels for a q8/q4 matrix-matrix
// product, else one panel (16 rows: the f32 kernel's 16-row and the 16-bit kernels'
// 8-row blocks divide it). A thread takes a run of consecutive tiles, which lie back to
// back in memory. Depends only on the shape, never on the thread count.
size_t RowTile(DType dtype, size_t cols, size_t batch) {
  const size_t block = !IsQuantized(dtype) ? kQuantPanelRows
                       : batch == 1        ? 8 * kQuantPanelRows
                                           : 2 * kQuantPanelRows;
  const size_t work_per_row = cols * batch;
  const size_t tile = kTileWork / (work_per_row ? work_per_row : 1);
  return tile <= block ? block : (tile + block - 1) / block * block;
}

// The row tiles of up to kMaxLinearGroup products, numbered matrix after matrix.
struct GroupTask {
  LinearTask tasks[kMaxLinearGroup];
  size_t tile[kMaxLinearGroup];
  size_t first_tile[kMaxLinearGroup + 1];  // tile numbers where each matrix starts
  size_t n;
};

void RunGroupTiles(void* context, size_t begin, size_t count) {
  GroupTask& g = *static_cast<GroupTask*>(context);
  for (size_t t = begin; t < begin + count; ++t) {
    size_t i = 0;
    while (t >= g.first_tile[i + 1]) ++i;
    const size_t row0 = (t - g.first_tile[i]) * g.tile[i];
    const size_t rows = g.tasks[i].w->rows();
    RunRows(&g.tasks[i], row0, rows - row0 < g.tile[i] ? rows - row0 : g.tile[i]);
  }
}

}  // namespace

bool LinearSupports(DType dtype, Layout layout) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
      return layout == Layout::kRowMajor;
    case DType::kQ8:
    case DType::kQ4:
      return layout == Layout::kQuantPanels;
    case DType::kQ4K:
    case DType::kQ5K:
    case DType::kQ6K:
      return layout == Layout::kKQuantPanels;
  }
  return false;
}

bool EmbeddingSupports(DType dtype, Layout layout) {
  return LinearSupports(dtype, layout);
}

size_t QuantScratchGroups(size_t batch, size_t max_cols) {
  return batch * kernels::QuantGroups(max_cols);
}

void Linear(const ExecContext& ctx, const QuantScratch& quant, const Tensor& w,
            const float* x, size_t batch, float* y) {
  const Tensor* ws[1] = {&w};
  float* ys[1] = {y};
  LinearGroup(ctx, quant, ws, ys, 1, x, batch);
}

void LinearGroup(const ExecContext& ctx, const QuantScratch& quant,
                 const Tensor* const* w, float* const* y, size_t n, const float* x,
                 size_t batch) {
  ProfileScope scope(ctx.profile, KernelKind::kMatMul);
  EMBER_DCHECK(n >= 1 && n <= kMaxLinearGroup && batch >= 1);
  // Products the XNNPACK backend has an operator for run there, each on the pool.
  const Tensor* rest_w[kMaxLinearGroup];
  float* rest_y[kMaxLinearGroup];
  size_t rest = 0;
  for (size_t i = 0; i < n; ++i) {
    if (ctx.xnn && XnnpackLinear(*ctx.xnn, *w[i], x, batch, y[i], ctx.pool)) continue;
    rest_w[rest] = w[i];
    rest_y[rest++] = y[i];
  }
  if (rest == 0) return;
  w = rest_w;
  y = rest_y;
  n = rest;
  GroupTask group;
  group.n = n;
  group.first_tile[0] = 0;
  bool quantized = false;
  for (size_t i = 0; i < n; ++i) {
    EMBER_DCHECK(w[i]->cols() == w[0]->cols());  // one input for the group
    group.tasks[i] = LinearTask{&ctx, &quant, w[i], x, batch, y[i]};
    group.tile[i] = RowTile(w[i]->dtype, w[i]->cols(), batch);
    group.first_tile[i + 1] =
        group.first_tile[i] + (w[i]->rows() + group.tile[i] - 1) / group.tile[i];
    quantized = quantized || IsQuantized(w[i]->dtype);
  }
  if (quantized) {
    // Once for the group, before the row split: every task reads the same int8 input.
    // A prefill's rows are quantized across the pool too.
    const size_t cols = w[0]->cols(), groups = kernels::QuantGroups(cols);
    const QuantScratch& q = quant;
    ParallelRows(ctx, batch, cols, [&](size_t r0, size_t rows) {
      ctx.kernels->quantize_acts(x + r0 * cols, rows, cols,
                                 q.values + r0 * groups * kernels::kQuantGroup,
                                 q.scales + r0 * groups, q.sums + r0 * groups,
                                 q.half_sums ? q.half_sums + r0 * groups : nullptr);
    });
  }
  // Tiles run on this thread too without a pool (a batch's outputs for a tile of rows
  // stay in cache), and when the whole group is less work than one tile is meant to
  // be: waking threads would cost more than it saves.
  const size_t tiles = group.first_tile[n];
  size_t work = 0;
  for (size_t i = 0; i < n; ++i) work += w[i]->rows() * w[i]->cols() * batch;
  if (ctx.pool && tiles > 1 && work > kTileWork) {
    ctx.pool->ParallelTiles(tiles, 1, &RunGroupTiles, &group, ctx.profile);
  } else {
    RunGroupTiles(&group, 0, tiles);
  }
}

void EmbeddingRow(const Tensor& table, uint64_t row, float* out) {
  const size_t cols = table.cols();
  switch (table.dtype) {
    case DType::kF32:
      memcpy(out, table.f32() + row * cols, cols * sizeof(float));
      return;
    case DType::kF16:
    case DType::kBF16: {
      const uint8_t* in = table.data + row * cols * 2;
      for (size_t c = 0; c < cols; ++c) {
        uint16_t bits;
        memcpy(&bits, in + 2 * c, 2);
        out[c] = table.dtype == DType::kF16 ? kernels::HalfToFloat(bits)
                                            : kernels::BFloat16ToFloat(bits);
      }
      return;
    }
    case DType::kQ8:
    case DType::kQ4:
      kernels::DequantizeRow(QuantKindOf(table.dtype), table.data, cols, row, out);
      return;
    case DType::kQ4K:
    case DType::kQ5K:
    case DType::kQ6K:
      kernels::DequantizeKQuantRow(KQuantKindOf(table.dtype), table.data, cols, row, out);
      return;
  }
}

}  // namespace ember
