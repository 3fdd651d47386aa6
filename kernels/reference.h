// Scalar reference implementations of every kernel: plain loops in double where it
// matters, no Highway. They are the oracle the per-target kernel tests compare against.
#ifndef EMBER_KERNELS_REFERENCE_H_
#define EMBER_KERNELS_REFERENCE_H_

#include <cstddef>
#include <cstdint>

#include "kernels/kquant_layout.h"
#include "kernels/quant_layout.h"

namespace ember::kernels::reference {

void MatVecF32(const float* w, const float* x, float* y, size_t rows, size_t cols);
void MatMulF32(const float* w, const float* x, size_t batch, float* y, size_t y_stride,
               size_t rows, size_t cols);
void GemmNnF32(const float* a, size_t a_stride, const float* b, size_t b_stride, float* y,
               size_t y_stride, size_t m, size_t n, size_t depth);
void RmsNorm(const float* x, const float* weight, float eps, float* out, size_t n);
void LayerNorm(const float* x, const float* weight, const float* bias, float eps,
               float* out, size_t n);
void RmsNormRows(float* x, const float* weight, float eps, size_t rows, size_t n);
void Scale(float* x, float s, size_t n);
void SoftCap(float* x, float cap, size_t n);
void Softmax(float* x, size_t n);
size_t ArgMax(const float* x, size_t n);
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
// One head; softcap > 0 caps the scores: s = softcap tanh(s / softcap).
void Attend(const float* q, const float* keys, const float* values, size_t kv_stride,
            size_t n_pos, size_t head_dim, float scale, float softcap, float* probs,
            float* out);
// Attend over an f16 cache (bit patterns), each value widened exactly.
void AttendF16(const float* q, const uint16_t* keys, const uint16_t* values,
               size_t kv_stride, size_t n_pos, size_t head_dim, float scale,
               float softcap, float* probs, float* out);
// Attend over a q8 cache of one KV head (kernel_table.h): the query's int8 values and
// KvGroups(head_dim) scales, and position t's int8 keys at keys + t * kv_stride with
// their scales at key_scales + t * scale_stride (values alike). Scores are the exact
// per-group integer dots times both scales, summed in double.
void AttendQ8(const int8_t* q, const float* q_scales, const int8_t* keys,
              const float* key_scales, const int8_t* values, const float* value_scales,
              size_t kv_stride, size_t scale_stride, size_t n_pos, size_t head_dim,
              float scale, float softcap, float* probs, float* out);
// QuantizeKvFn (kernel_table.h): per group of 32 values of each head, s = absmax / 127,
// q = std::nearbyint(x / s) clamped to [-127, 127].
void QuantizeKv(const float* x, size_t n_heads, size_t head_dim, size_t head_stride,
                int8_t* q, float* scales);

// Activation quantization, as kernel_table.h's QuantizeActsFn: per group of 32,
// s = absmax / 127.0f, q = std::nearbyint(x / s) (ties to even) clamped to [-127, 127];
// half_sums (unless null) the sums of each group's first 16 q.
void QuantizeActs(const float* x, size_t batch, size_t cols, int8_t* q, float* scales,
                  int32_t* sums, int32_t* half_sums = nullptr);
// q8/q4 products, as MatMulQuantFn, decoding each weight with QuantValue/QuantScale (no
// offsets, no xsums). Per group g in order: the exact integer dot d of the signed values,
// then acc = acc + float(d) * (wscale * xscale) in float (the kernels fuse the last
// multiply-add where they can: a difference of one rounding per group).
void MatMulQuant(QuantKind kind, const uint8_t* w, const int8_t* xq, const float* xscales,
                 size_t batch, float* y, size_t y_stride, size_t rows, size_t cols);
// K-quant products, as MatMulKQuantFn, decoding each super-block with GetKQuantBlock
// and summing the activations itself (no xsums): per group in order, the exact integer
// dots, then acc = acc + float(dot) * (ws * xs) and acc = acc - wm * (xs * float(xsum))
// (q4_k, q5_k) or acc = acc + float(idot) * (d * xs) (q6_k), unfused.
void MatMulKQuant(KQuantKind kind, const uint8_t* w, const int8_t* xq,
                  const float* xscales, size_t batch, float* y, size_t y_stride,
                  size_t rows, size_t cols);
// The inverse of PackKQuantFromGgml: GGML's blocks of every row back (the tests check
// that every byte survives the panel layout).
void UnpackKQuantToGgml(KQuantKind kind, const uint8_t* packed, size_t rows, size_t cols,
                        uint8_t* ggml_rows);
// Dense f16 / bf16 weights (bit patterns), as the f32 kernels, accumulated in double.
void MatMulF16(const uint16_t* w, const float* x, size_t batch, float* y, size_t y_stride,
               size_t rows, size_t cols);
void MatMulBF16(const uint16_t* w, const float* x, size_t batch, float* y,
                size_t y_stride, size_t rows, size_t cols);

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_H_
