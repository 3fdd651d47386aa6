// KernelTable: the kernels chosen for this CPU, resolved once (per session) so the
// forward pass calls plain function pointers instead of dispatching on every small
// kernel.
#ifndef EMBER_KERNELS_KERNEL_TABLE_H_
#define EMBER_KERNELS_KERNEL_TABLE_H_

#include <cstddef>
#include <cstdint>

#include "kernels/attention.h"  // AttendSpansFn, AttendMergeFn, QuantizeKvFn
#include "kernels/isa.h"

namespace ember::kernels {

// Signatures. Every kernel takes raw pointers and sizes and returns void; inputs and
// outputs of one call never alias unless the comment says "in place".

// y[r] = sum_c w[r * cols + c] * x[c], r in [0, rows). w is row-major (rows, cols).
using MatVecF32Fn = void (*)(const float* w, const float* x, float* y, size_t rows,
                             size_t cols);
// y[b * y_stride + r] = sum_c w[r * cols + c] * x[b * cols + c], b in [0, batch).
using MatMulF32Fn = void (*)(const float* w, const float* x, size_t batch, float* y,
                             size_t y_stride, size_t rows, size_t cols);
// y[i * y_stride + j] = sum_k a[i * a_stride + k] * b[k * b_stride + j], i < m, j < n:
// a row-major (m, depth) matrix times a row-major (depth, n) one, each of y's rows as
// vectors along j (no horizontal sums: for a short depth, as attention's head_dim, where
// MatMulF32's dots would spend more on their sums than on their products).
using GemmNnF32Fn = void (*)(const float* a, size_t a_stride, const float* b,
                             size_t b_stride, float* y, size_t y_stride, size_t m,
                             size_t n, size_t depth);
// out = x / sqrt(mean(x^2) + eps) * weight
using RmsNormFn = void (*)(const float* x, const float* weight, float eps, float* out,
                           size_t n);
// out = (x - mean) / sqrt(var + eps) * weight + bias (bias may be null)
using LayerNormFn = void (*)(const float* x, const float* weight, const float* bias,
                             float eps, float* out, size_t n);
// In place: x = exp(x - max) / sum(exp(x - max))
using SoftmaxFn = void (*)(float* x, size_t n);
// *index = the first position of the largest of x[0, n), n >= 1; NaNs are skipped (0 when
// all are NaN). Greedy sampling.
using ArgMaxFn = void (*)(const float* x, size_t n, size_t* index);
// In place: each of `rows` rows of n values, x = x / sqrt(mean(x^2) + eps) * weight.
using RmsNormRowsFn = void (*)(float* x, const float* weight, float eps, size_t rows,
                               size_t n);
// In place: x[i] = s * x[i] (ScaleFn), x[i] = cap * tanh(x[i] / cap) (SoftCapFn).
using ScaleFn = void (*)(float* x, float s, size_t n);
// In place, elementwise activation.
using ActivationFn = void (*)(float* x, size_t n);
// In place: a[i] = a[i] (op) b[i]
using BinaryFn = void (*)(float* a, const float* b, size_t n);
// In place: x[i] += bias[i] for each of `rows` rows of length n.
using AddBiasFn = void (*)(float* x, const float* bias, size_t rows, size_t n);
// In place rotary embedding of n_heads heads of head_dim (even) values at stride
// head_dim, with per-lane tables from RopeTables() (kernels/rope.h):
//   x[j] = x[j] cos_x[j] + x[partner(j)] sin_x[j]
// where partner swaps (2i, 2i+1) for interleaved pairs and (i, i + head_dim/2) for half
// pairs; sin_x carries the sign, so each pair (a, b) -> (a cos - b sin, b cos + a sin).
using RopeFn = void (*)(float* x, const float* cos, const float* sin, size_t n_heads,
                        size_t head_dim);
// Activations quantized per group of kQuantGroup (32) inputs, for the int8 kernels:
// for b < batch, row x + b * cols: s = absmax / 127 (0 for an all-zero group),
// q = round-to-nearest(x / s) clamped to [-127, 127]; writes q[b * padded + i]
// (padded = QuantGroups(cols) * 32; inputs past cols are 0), scales[b * groups + g] = s,
// sums[b * groups + g] = sum of the group's q.
// (Rounding is to nearest with ties to even, the default floating-point rounding.)
// Unless half_sums is null, also half_sums[b * groups + g] = sum of the group's first
// 16 q (q6_k's sub-blocks are half groups: kquant_layout.h).
using QuantizeActsFn = void (*)(const float* x, size_t batch, size_t cols, int8_t* q,
                                float* scales, int32_t* sums, int32_t* half_sums);
// y[b * y_stride + r] = sum_g wscale(r, g) * xscale(b, g) * sum_i wq(r, 32g+i) xq(b, 32g+i)
// for r < rows, b < batch. `w` points at the first panel of these rows (packed as in
// quant_layout.h for a matrix with `cols` columns); rows need not be a multiple of 16:
// only `rows` outputs per b are written. The runtime splits rows across threads in
// multiples of 16.
// The float part runs per group in order: acc += float(dot) * (wscale * xscale), fused
// where the target has FMA; matvec and matmul of one table give bitwise-identical rows.
using MatMulQuantFn = void (*)(const uint8_t* w, const int8_t* xq, const float* xscales,
                               const int32_t* xsums, size_t batch, float* y,
                               size_t y_stride, size_t rows, size_t cols);
// K-quant products (q4_k, q5_k, q6_k packed as in kquant_layout.h; cols a multiple of
// 256), with MatMulQuantFn's arguments and xhalf_sums (QuantizeActsFn's half_sums).
// Per group g of 32 inputs in order, with xs = xscales[b, g], xsum = xsums[b, g]:
//   q4_k, q5_k (the group is sub-block j of its super-block, d and dmin its row's):
//     dot = sum_i q(r, 32g + i) xq(b, 32g + i)                        (exact int32)
//     acc = MulAdd(float(dot), (d * float(sc_j)) * xs, acc)
//     acc = NegMulAdd(dmin * float(m_j), xs * float(xsum), acc)       (acc - a * b)
//   q6_k (sub-blocks 2j and 2j + 1 are the group's halves h = 0, 1):
//     dot_h = sum over the half of (q - 32) xq;  idot = sc_2j dot_0 + sc_2j+1 dot_1
//     acc = MulAdd(float(idot), d * xs, acc)                          (idot exact)
// d * float(sc) and dmin * float(m) are exact. Fused where the target has FMA; matvec
// and matmul of one table give bitwise-identical rows, as for MatMulQuantFn.
using MatMulKQuantFn = void (*)(const uint8_t* w, const int8_t* xq, const float* xscales,
                                const int32_t* xsums, const int32_t* xhalf_sums,
                                size_t batch, float* y, size_t y_stride, size_t rows,
                                size_t cols);
// Dense 16-bit weights (f16 or bf16 bit patterns), same contracts as the f32 kernels.
using MatVec16Fn = void (*)(const uint16_t* w, const float* x, float* y, size_t rows,
                            size_t cols);
using MatMul16Fn = void (*)(const uint16_t* w, const float* x, size_t batch, float* y,
                            size_t y_stride, size_t rows, size_t cols);

// The q8/q4 and K-quant products of one int8 path (quant_x86.h, dotprod_arm.h).
struct Int8Kernels {
  const char* name = "";  // KernelTable::int8_dot
  MatMulQuantFn matvec_q8 = nullptr;
  MatMulQuantFn matmul_q8 = nullptr;
  MatMulQuantFn matvec_q4 = nullptr;
  MatMulQuantFn matmul_q4 = nullptr;
  MatMulKQuantFn matvec_q4k = nullptr;
  MatMulKQuantFn matmul_q4k = nullptr;
  MatMulKQuantFn matvec_q5k = nullptr;
  MatMulKQuantFn matmul_q5k = nullptr;
  MatMulKQuantFn matvec_q6k = nullptr;
  MatMulKQuantFn matmul_q6k = nullptr;
};

struct KernelTable {
  const char* target = "";  // Highway target the pointers below were compiled for
  const char* isa = "";     // the ISA tier it was built for (isa.h), e.g. "avx-vnni"
  MatVecF32Fn matvec_f32 = nullptr;
  MatMulF32Fn matmul_f32 = nullptr;
  GemmNnF32Fn gemm_nn_f32 = nullptr;
  RmsNormFn rms_norm = nullptr;
  LayerNormFn layer_norm = nullptr;
  SoftmaxFn softmax = nullptr;
  ArgMaxFn argmax = nullptr;
  ActivationFn silu = nullptr;
  ActivationFn relu = nullptr;
  ActivationFn gelu_tanh = nullptr;
  ActivationFn gelu_erf = nullptr;
  BinaryFn add = nullptr;
  BinaryFn mul = nullptr;
  AddBiasFn add_bias = nullptr;
  RopeFn rope_interleaved = nullptr;
  RopeFn rope_half = nullptr;
  AttendSpansFn attend_spans = nullptr;  // f32, f16 or q8 cache rows (KvRows)
  AttendMergeFn attend_merge = nullptr;
  QuantizeKvFn quantize_kv = nullptr;
  // Quantized (q8/q4) and 16-bit weights. matvec_q8/q4 are called with batch == 1.
  QuantizeActsFn quantize_acts = nullptr;
  MatMulQuantFn matvec_q8 = nullptr;
  MatMulQuantFn matmul_q8 = nullptr;
  MatMulQuantFn matvec_q4 = nullptr;
  MatMulQuantFn matmul_q4 = nullptr;
  MatVec16Fn matvec_f16 = nullptr;
  MatMul16Fn matmul_f16 = nullptr;
  MatVec16Fn matvec_bf16 = nullptr;
  MatMul16Fn matmul_bf16 = nullptr;
  // What the q8/q4 kernels' int8 products run on, for logs and benchmarks:
  // "avx512-vnni", "avx-vnni", "avx512bw" or "avx2" (vpmaddubsw), "neon-i8mm" (smmla
  // prefill, sdot decode), "neon-sdot", "helium", or "highway" (portable Highway code).
  const char* int8_dot = "";
  // K-quants (q4_k, q5_k, q6_k), on the same int8 products as q8/q4.
  MatMulKQuantFn matvec_q4k = nullptr;
  MatMulKQuantFn matmul_q4k = nullptr;
  MatMulKQuantFn matvec_q5k = nullptr;
  MatMulKQuantFn matmul_q5k = nullptr;
  MatMulKQuantFn matvec_q6k = nullptr;
  MatMulKQuantFn matmul_q6k = nullptr;
  // Current families: per-head q/k norms, the embedding scale, soft-capping.
  RmsNormRowsFn rms_norm_rows = nullptr;
  ScaleFn scale = nullptr;
  ScaleFn soft_cap = nullptr;
};

// Points the table's q8/q4 and K-quant products at k's and sets int8_dot.
inline void UseInt8Kernels(KernelTable* table, const Int8Kernels& k) {
  table->matvec_q8 = k.matvec_q8;
  table->matmul_q8 = k.matmul_q8;
  table->matvec_q4 = k.matvec_q4;
  table->matmul_q4 = k.matmul_q4;
  table->matvec_q4k = k.matvec_q4k;
  table->matmul_q4k = k.matmul_q4k;
  table->matvec_q5k = k.matvec_q5k;
  table->matmul_q5k = k.matmul_q5k;
  table->matvec_q6k = k.matvec_q6k;
  table->matmul_q6k = k.matmul_q6k;
  table->int8_dot = k.name;
}

// The kernels for `isa` (from ResolveIsa). Cheap; call once per session.
KernelTable ChooseKernels(const IsaChoice& isa);
// The same for DefaultIsa(): the tier EMBER_ISA names, else the best of this CPU.
KernelTable ChooseKernels();

// Tells Highway what the CPU has that its own detection misses (NEON on armv7 with
// Debian's libhwy; see kernel_table.cc for when this runs and why it is safe). Called by
// ChooseKernels; kernel test binaries call it before enumerating per-target tests.
void ReportCpuFeaturesToHighway();

// Each kernel family fills its entries for the best of isa.hwy_targets it was compiled
// for (kernels/<family>.cc, through EMBER_DISPATCH: kernels/dispatch.h).
void FillMatVecKernels(KernelTable* table, const IsaChoice& isa);
void FillNormKernels(KernelTable* table, const IsaChoice& isa);
void FillElementwiseKernels(KernelTable* table, const IsaChoice& isa);
void FillRopeKernels(KernelTable* table, const IsaChoice& isa);
void FillAttentionKernels(KernelTable* table, const IsaChoice& isa);
void FillQuantKernels(KernelTable* table, const IsaChoice& isa);     // q8/q4, int8_dot
void FillMatVec16Kernels(KernelTable* table, const IsaChoice& isa);  // f16/bf16
void FillKQuantKernels(KernelTable* table, const IsaChoice& isa);    // K-quants
// Last: the tier's int8 path (x86, Arm; Helium in builds for it) replaces the q8/q4 and
// K-quant products where it has one (quant.cc).
void FillInt8PathKernels(KernelTable* table, const IsaChoice& isa);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_KERNEL_TABLE_H_
