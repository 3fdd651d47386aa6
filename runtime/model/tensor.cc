// Tensor sizes per dtype and layout, with overflow checks (see tensor.h).
#include "runtime/model/tensor.h"

#include "kernels/quant_layout.h"

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

Layout StoredLayout(DType dtype) {
  if (dtype == DType::kQ8 || dtype == DType::kQ4) return Layout::kQuantPanels;
  return IsKQuant(dtype) ? Layout::kKQuantPanels : Layout::kRowMajor;
}

uint32_t StoredGroupSize(DType dtype) {
  if (dtype == DType::kQ8 || dtype == DType::kQ4) return kernels::kQuantGroup;
  return IsKQuant(dtype) ? kernels::kKQuantBlock : 0;
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
    if (group_size != 0) {
      return InvalidModel("%s tensors have no quantization groups (group size %u)",
                          DTypeName(dtype), group_size);
    }
    *bytes = elements * dense;
    return Status::Ok();
  }
  if (IsKQuant(dtype)) {
    if (!kernels::KQuantsBuiltIn()) {
      return Unimplemented("%s weights: the K-quants are left out of this build "
                           "(EMBER_WITH_KQUANTS=OFF)",
                           DTypeName(dtype));
    }
    if (layout != Layout::kKQuantPanels || n_dims != 2) {
      return InvalidModel("%s tensors must be 2-D with the KQuantPanels layout",
                          DTypeName(dtype));
    }
    if (group_size != kernels::kKQuantBlock) {
      return InvalidModel(
          "%s group size %u (the KQuantPanels layout has super-blocks of %zu)",
          DTypeName(dtype), group_size, kernels::kKQuantBlock);
    }
    if (shape[1] % kernels::kKQuantBlock != 0) {
      return InvalidModel("%s tensor with %llu columns (K-quants need a multiple of %zu)",
                          DTypeName(dtype), static_cast<unsigned long long>(shape[1]),
                          kernels::kKQuantBlock);
    }
    // Rows and cols are below 2^48, so one panel's bytes fit.
    const uint64_t panel_bytes = kernels::KQuantPanelBytes(KQuantKindOf(dtype), shape[1]);
    if (MulOverflows(kernels::QuantPanels(shape[0]), panel_bytes, bytes)) {
      return InvalidModel("byte size overflows");
    }
    return Status::Ok();
  }
  if (dtype != DType::kQ8 && dtype != DType::kQ4) {
    return InvalidModel("unknown dtype %u", static_cast<unsigned>(dtype));
  }
  if (layout == Layout::kQuantPanelsV1) {
    return InvalidModel(
        "%s tensor in the retired QuantPanelsV1 layout (an earlier ember "
        "wrote it): convert the model again",
        DTypeName(dtype));
  }
  if (layout != Layout::kQuantPanels || n_dims != 2) {
    return InvalidModel("%s tensors must be 2-D with the QuantPanels layout",
                        DTypeName(dtype));
  }
  if (group_size != kernels::kQuantGroup) {
    return InvalidModel("%s group size %u (the QuantPanels layout has %zu)",
                        DTypeName(dtype), group_size, kernels::kQuantGroup);
  }
  // Rows and cols are below 2^48 (the element count is), so one panel's bytes fit.
  const kernels::QuantKind kind =
      dtype == DType::kQ8 ? kernels::QuantKind::kQ8 : kernels::QuantKind::kQ4;
  const uint64_t panel_bytes = kernels::QuantPanelBytes(kind, shape[1]);
  if (MulOverflows(kernels::QuantPanels(shape[0]), panel_bytes, bytes)) {
    return InvalidModel("byte size overflows");
  }
  return Status::Ok();
}

}  // namespace ember
