// Tensor sizes per dtype and layout, with overflow checks (see tensor.h).
#include "runtime/tensor.h"

namespace ember {
namespace {

bool MulOverflows(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

}  // namespace

size_t DenseElementBytes(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
      return 2;
    default:
      return 0;
  }
}

Status TensorBytes(DType dtype, Layout layout, const uint64_t* shape, uint32_t n_dims,
                   uint32_t group_size, uint64_t* bytes) {
  *bytes = 0;
  if (n_dims == 0 || n_dims > kMaxTensorDims) {
    return InvalidModel("%u dimensions (1 to %u allowed)", n_dims, kMaxTensorDims);
  }
  uint64_t elements = 1;
  for (uint32_t i = 0; i < n_dims; ++i) {
    if (shape[i] == 0) return InvalidModel("dimension %u is zero", i);
    if (MulOverflows(elements, shape[i], &elements) || elements > (uint64_t{1} << 48)) {
      return InvalidModel("element count overflows");
    }
  }
  const size_t dense = DenseElementBytes(dtype);
  if (dense != 0) {
    if (layout != Layout::kRowMajor) {
      return InvalidModel("%s tensors must be row-major", DTypeName(dtype));
    }
    *bytes = elements * dense;
    return Status::Ok();
  }
  if (dtype != DType::kQ8 && dtype != DType::kQ4) {
    return InvalidModel("unknown dtype %u", static_cast<unsigned>(dtype));
  }
  if (layout != Layout::kQuantRows || n_dims != 2) {
    return InvalidModel("%s tensors must be 2-D with the QuantRows layout",
                        DTypeName(dtype));
  }
  if (group_size == 0 || group_size % 2 != 0 || group_size > 4096) {
    return InvalidModel("group size %u (even, 2 to 4096)", group_size);
  }
  const uint64_t rows = shape[0], cols = shape[1];
  const uint64_t groups_per_row = (cols + group_size - 1) / group_size;
  const uint64_t padded_cols = groups_per_row * group_size;
  const uint64_t value_bytes_per_row =
      dtype == DType::kQ8 ? padded_cols : padded_cols / 2;
  uint64_t per_row = value_bytes_per_row + groups_per_row * sizeof(float);
  if (MulOverflows(rows, per_row, bytes)) return InvalidModel("byte size overflows");
  return Status::Ok();
}

}  // namespace ember
