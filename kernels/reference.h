// Scalar reference implementations of every kernel: plain loops in double where it
// matters, no Highway. They are the oracle the per-target kernel tests compare against.
#ifndef EMBER_KERNELS_REFERENCE_H_
#define EMBER_KERNELS_REFERENCE_H_

#include <cstddef>

namespace ember::kernels::reference {

void MatVecF32(const float* w, const float* x, float* y, size_t rows, size_t cols);
void MatMulF32(const float* w, const float* x, size_t batch, float* y, size_t y_stride,
               size_t rows, size_t cols);
void RmsNorm(const float* x, const float* weight, float eps, float* out, size_t n);
void LayerNorm(const float* x, const float* weight, const float* bias, float eps,
               float* out, size_t n);
void Softmax(float* x, size_t n);
void Silu(float* x, size_t n);
void Relu(float* x, size_t n);
void GeluTanh(float* x, size_t n);
void GeluErf(float* x, size_t n);
void Add(float* a, const float* b, size_t n);
void Mul(float* a, const float* b, size_t n);
void AddBias(float* x, const float* bias, size_t rows, size_t n);
void RopeInterleaved(float* x, const float* cos, const float* sin, size_t n_heads,
                     size_t head_dim);
void RopeHalf(float* x, const float* cos, const float* sin, size_t n_heads,
              size_t head_dim);
void Attend(const float* q, const float* keys, const float* values, size_t kv_stride,
            size_t n_pos, size_t head_dim, float scale, float* probs, float* out);

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_H_
