// Tensor: a view of one weight tensor inside the mapped model file (never copied), and
// the one function that says how many bytes a tensor of a given type and shape occupies.
#ifndef EMBER_RUNTIME_MODEL_TENSOR_H_
#define EMBER_RUNTIME_MODEL_TENSOR_H_

#include <cstddef>
#include <cstdint>

#include "kernels/kquant_layout.h"
#include "runtime/model/config.h"
#include "runtime/status.h"

namespace ember {

inline constexpr uint32_t kMaxTensorDims = 4;
// Every tensor segment starts at a multiple of this many bytes from the file start.
inline constexpr uint64_t kTensorAlignment = 64;

struct Tensor {
  const char* name = "";  // NUL-terminated, inside the model file
  DType dtype = DType::kF32;
  Layout layout = Layout::kRowMajor;
  uint32_t n_dims = 0;
  uint64_t shape[kMaxTensorDims] = {0, 0, 0, 0};  // PyTorch order: (out, in)
  uint32_t group_size = 0;                        // quantized types: inputs per scale
  const uint8_t* data = nullptr;                  // inside the model file
  uint64_t size_bytes = 0;

  uint64_t rows() const { return n_dims < 2 ? 1 : shape[0]; }
  uint64_t cols() const { return n_dims == 0 ? 0 : shape[n_dims - 1]; }
  // The elements of a dense tensor (the loader checked the dtype, size and alignment).
  const float* f32() const { return reinterpret_cast<const float*>(data); }
  const uint16_t* u16() const {
    return reinterpret_cast<const uint16_t*>(data);
  }  // f16/bf16
};

// Sets *bytes to the exact size of a tensor with this dtype, layout, shape and group
// size, or returns why such a tensor cannot exist (zero or overflowing dimensions, a
// layout the dtype does not have, a bad group size). Overflow-safe.
Status TensorBytes(DType dtype, Layout layout, const uint64_t* shape, uint32_t n_dims,
                   uint32_t group_size, uint64_t* bytes);

// Bytes per element of a dense type (F32, F16, BF16); 0 for quantized types.
size_t DenseElementBytes(DType dtype);

// GGML's K-quants (q4_k, q5_k, q6_k), and their kind in kernels/kquant_layout.h.
inline bool IsKQuant(DType dtype) {
  return dtype == DType::kQ4K || dtype == DType::kQ5K || dtype == DType::kQ6K;
}
inline kernels::KQuantKind KQuantKindOf(DType dtype) {
  return dtype == DType::kQ4K   ? kernels::KQuantKind::kQ4K
         : dtype == DType::kQ5K ? kernels::KQuantKind::kQ5K
                                : kernels::KQuantKind::kQ6K;
}
// The layout and group size the writer stores a dtype with: RowMajor and 0 (f32, f16,
// bf16), QuantPanels and 32 (q8, q4), KQuantPanels and 256 (the K-quants).
Layout StoredLayout(DType dtype);
uint32_t StoredGroupSize(DType dtype);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_TENSOR_H_
