// Linear: dtype dispatch and the row split across threads (see linear.h).
#include "runtime/linear.h"

#include <cstring>

namespace ember {
namespace {

struct LinearTask {
  const ExecContext* ctx;
  const Tensor* w;
  const float* x;
  size_t batch;
  float* y;
};

void RunRows(void* context, size_t begin, size_t count) {
  const LinearTask& t = *static_cast<const LinearTask*>(context);
  const size_t rows = t.w->rows(), cols = t.w->cols();
  const float* w = t.w->f32() + begin * cols;
  if (t.batch == 1) {
    t.ctx->kernels->matvec_f32(w, t.x, t.y + begin, count, cols);
  } else {
    t.ctx->kernels->matmul_f32(w, t.x, t.batch, t.y + begin, rows, count, cols);
  }
}

// Rows per task: enough multiply-adds (about 64K) that a task outweighs its scheduling,
// a multiple of 8 (the matvec kernel's row block). Depends only on the shape.
size_t RowTile(size_t cols, size_t batch) {
  const size_t work_per_row = cols * batch;
  size_t tile = (size_t{1} << 16) / (work_per_row ? work_per_row : 1);
  tile = (tile + 7) & ~size_t{7};
  return tile < 8 ? 8 : tile;
}

}  // namespace

bool LinearSupports(DType dtype, Layout layout) {
  return dtype == DType::kF32 && layout == Layout::kRowMajor;
}

bool EmbeddingSupports(DType dtype, Layout layout) {
  return dtype == DType::kF32 && layout == Layout::kRowMajor;
}

void Linear(const ExecContext& ctx, const Tensor& w, const float* x, size_t batch,
            float* y) {
  ProfileScope scope(ctx.profile, KernelKind::kMatMul);
  LinearTask task{&ctx, &w, x, batch, y};
  const size_t rows = w.rows();
  const size_t tile = RowTile(w.cols(), batch);
  if (ctx.pool) {
    ctx.pool->ParallelTiles(rows, tile, &RunRows, &task);
  } else {
    RunRows(&task, 0, rows);
  }
}

void EmbeddingRow(const Tensor& table, uint64_t row, float* out) {
  const size_t cols = table.cols();
  memcpy(out, table.f32() + row * cols, cols * sizeof(float));
}

}  // namespace ember
