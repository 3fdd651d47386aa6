// The XNNPACK backend (see xnn_backend.h): one operator per f32 matrix, in the arena.
#include "runtime/xnn_backend.h"

#include <new>

#include "kernels/dcheck.h"
#include "kernels/xnnpack/xnn_arena.h"
#include "kernels/xnnpack/xnn_fc.h"

namespace ember {

// Laid out at the start of the region: this header, one operator slot per tensor of the
// model (indexed like Model::tensors(); created only for f32 matrices), then each
// operator's own region (packed weights and operator struct), 64-byte aligned.
struct XnnMatrices {
  const Tensor* first_tensor;
  size_t num_tensors;
  kernels::XnnFullyConnected* ops;  // num_tensors slots

  kernels::XnnFullyConnected* Find(const Tensor& t) const {
    const size_t i = static_cast<size_t>(&t - first_tensor);
    return i < num_tensors && ops[i].created() ? &ops[i] : nullptr;
  }
};

namespace {

constexpr size_t kAlign = kernels::kXnnRegionAlignment;
size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Bytes of the header and the slots, before the first operator's region.
size_t TableBytes(const Model& model) {
  return AlignUp(sizeof(XnnMatrices)) +
         AlignUp(model.tensors().size() * sizeof(kernels::XnnFullyConnected));
}

// Calls f(tensor) once for each f32 matrix (a tied classifier is the embedding table,
// which appears once).
template <class F>
void ForEachF32Matrix(const Model& model, const F& f) {
  const Tensor* seen_output = nullptr;
  ForEachMatrix(model.weights(), [&](const Tensor& t) {
    if (t.dtype != DType::kF32 || &t == seen_output) return;
    if (&t == model.weights().output) seen_output = &t;
    f(t);
  });
}

Status Initialize() {
  const kernels::XnnStatus status = kernels::XnnInitializeForArenas();
  if (status != kernels::XnnStatus::kOk) {
    return Unimplemented("the XNNPACK backend is unavailable: %s",
                         kernels::XnnStatusName(status));
  }
  return Status::Ok();
}

}  // namespace

bool XnnpackBuiltIn() { return true; }

size_t XnnpackInputPaddingBytes() { return kernels::XnnExtraBytes(); }

Status XnnpackArenaBytes(const Model& model, size_t* bytes) {
  EMBER_RETURN_IF_ERROR(Initialize());
  size_t total = TableBytes(model);
  bool overflow = false;
  ForEachF32Matrix(model, [&](const Tensor& t) {
    const size_t op = kernels::XnnFullyConnectedArenaBytes(t.rows(), t.cols());
    if (op == 0 || __builtin_add_overflow(total, AlignUp(op), &total)) overflow = true;
  });
  if (overflow)
    return ResourceExhausted("the XNNPACK operators are too large to address");
  *bytes = total;
  return Status::Ok();
}

Status CreateXnnpackMatrices(const Model& model, uint8_t* region, size_t bytes,
                             const XnnMatrices** matrices) {
  EMBER_RETURN_IF_ERROR(Initialize());
  const size_t table = TableBytes(model);
  if (bytes < table) return Internal("XNNPACK region of %zu bytes is too small", bytes);
  auto* m = new (region) XnnMatrices;
  m->first_tensor = model.tensors().data();
  m->num_tensors = model.tensors().size();
  m->ops = new (region + AlignUp(sizeof(XnnMatrices)))
      kernels::XnnFullyConnected[m->num_tensors];
  size_t offset = table;
  Status status;
  ForEachF32Matrix(model, [&](const Tensor& t) {
    if (!status.ok()) return;
    const size_t op_bytes = kernels::XnnFullyConnectedArenaBytes(t.rows(), t.cols());
    if (op_bytes > bytes - offset) {
      status = Internal("XNNPACK region too small at %s", t.name);
      return;
    }
    kernels::XnnArenaScope scope(region + offset, op_bytes);
    const kernels::XnnStatus created =
        m->ops[&t - m->first_tensor].CreateF32(t.f32(), t.rows(), t.cols());
    if (created != kernels::XnnStatus::kOk) {
      status = Internal("XNNPACK operator for %s: %s", t.name,
                        kernels::XnnStatusName(created));
      return;
    }
    offset += AlignUp(op_bytes);
  });
  EMBER_RETURN_IF_ERROR(status);
  *matrices = m;
  return Status::Ok();
}

bool XnnpackLinear(const XnnMatrices& matrices, const Tensor& w, const float* x,
                   size_t batch, float* y, const ThreadPool* pool) {
  kernels::XnnFullyConnected* op = matrices.Find(w);
  if (op == nullptr) return false;
  // Run writes the call's pointers into the operator: a session runs one pass at a time.
  const kernels::XnnStatus status = op->Run(x, batch, y, pool ? pool->handle() : nullptr);
  // Shapes and buffers were checked at creation; should XNNPACK still refuse, the
  // caller computes the product with the Highway kernels instead.
  EMBER_DCHECK(status == kernels::XnnStatus::kOk);
  return status == kernels::XnnStatus::kOk;
}

}  // namespace ember
