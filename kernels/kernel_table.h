// KernelTable: the kernels chosen for this CPU, resolved once (per session) so the
// forward pass calls plain function pointers instead of dispatching on every small
// kernel.
#ifndef EMBER_KERNELS_KERNEL_TABLE_H_
#define EMBER_KERNELS_KERNEL_TABLE_H_

#include <cstddef>
#include <cstdint>

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
// Attention of one token's n_heads query heads over n_pos cached positions, computed
// in spans of positions and then merged (so threads can take spans: each reads whole
// cache rows). q and out hold the heads at stride head_dim; head h reads KV head
// h / group at keys + row(t) * kv_stride + (h / group) * head_dim (values alike), row(t)
// = t unless AttendSpansArgs places the rows in a ring.
//
// The cache may hold f32, f16 or q8 rows (a kernel per type reads its type directly).
// q8: each KV head's head_dim values in groups of kKvGroup (the last may be shorter),
// int8 with an f32 scale per group: s = absmax / 127 (0 for an all-zero group),
// q = round-to-nearest-even(x / s) clamped to [-127, 127]; the scales of position t at
// scales + t * scale_stride + (h / group) * KvGroups(head_dim). A q8 query is stored as
// the cache is, with each head padded to KvGroups(head_dim) * kKvGroup values (zeros past
// head_dim); a group's score is then the exact int32 dot times both scales.
inline constexpr size_t kKvGroup = 32;
inline size_t KvGroups(size_t head_dim) { return (head_dim + kKvGroup - 1) / kKvGroup; }

// The positions an AttendSpans call covers and the layout of the cache it reads.
struct AttendSpansArgs {
  size_t n_pos = 0;       // the token attends to positions [0, n_pos)
  size_t span = 0;        // positions per span (the last span ends at n_pos)
  size_t first_span = 0;  // spans [first_span, first_span + num_spans)
  size_t num_spans = 0;
  size_t head_dim = 0;
  size_t n_heads = 0;
  size_t group = 1;         // query heads per KV head
  size_t kv_stride = 0;     // elements from one position's row to the next's
  size_t scale_stride = 0;  // q8: scales from one position's row to the next's
  float scale = 1.0f;       // of the scores: 1 / sqrt(head_dim) for a plain model
  float softcap = 0.0f;     // > 0: scores capped to softcap tanh(s / softcap) (Gemma 2)
  size_t probs_stride = 0;  // >= n_pos
  // Where position t's row is (rows counted from the pointers given): first_row + t, and
  // in a ring of ring_rows rows ending at row ring_end (a sliding layer's cache) less
  // ring_rows from ring_end on, so a window may wrap around its ring's end (ring_rows >=
  // n_pos). The defaults: row t.
  size_t first_row = 0;
  size_t ring_end = SIZE_MAX;
  size_t ring_rows = 0;
  // A hint that the cache is not in the CPU caches (decode): the kernel then prefetches
  // keys ahead of the scores and values while it reads keys. It does not change any
  // result.
  bool prefetch_values = false;
};

// AttendSpans*Fn: spans [first_span, first_span + num_spans) of `span` positions each
// (the last one ends at n_pos), every head h; for the positions t of span c:
//   s[t] = scale * dot(K[t], q_h) (then softcap tanh(s[t] / softcap) when softcap > 0);
//   m = max s;  p[t] = exp(s[t] - m);
//   probs[h * probs_stride + t] = p[t];  partial + (c * n_heads + h) *
//   AttentionPartialFloats(head_dim) holds sum_t p[t] V[t] (head_dim floats), then m,
//   then l = sum_t p[t].
// A span's results are the same whatever range of spans it is computed in.
// q8: dot(K[t], q_h) = sum over groups g of (int32 dot of the group) * (q_scale_g *
// k_scale_g): each group's products summed exactly in integer lanes, scaled in float and
// the lanes summed at the end; V[t] = value scale of its group * int8 value.
using AttendSpansFn = void (*)(const float* q, const float* keys, const float* values,
                               const AttendSpansArgs& args, float* probs, float* partial);
using AttendSpansF16Fn = void (*)(const float* q, const uint16_t* keys,
                                  const uint16_t* values, const AttendSpansArgs& args,
                                  float* probs, float* partial);
using AttendSpansQ8Fn = void (*)(const int8_t* q, const float* q_scales,
                                 const int8_t* keys, const float* key_scales,
                                 const int8_t* values, const float* value_scales,
                                 const AttendSpansArgs& args, float* probs,
                                 float* partial);
// The q8 encoding above of one row of n_heads heads of head_dim values: head h's int8
// values at q + h * head_stride (head_stride >= head_dim; values up to
// KvGroups(head_dim) * kKvGroup past the head's start are written, zeros past head_dim,
// when head_stride is that long) and its scales at scales + h * KvGroups(head_dim).
using QuantizeKvFn = void (*)(const float* x, size_t n_heads, size_t head_dim,
                              size_t head_stride, int8_t* q, float* scales);
// AttendMergeFn: n_spans (<= kMaxAttentionSpans) spans of `span` positions (the last
// may be shorter) covering [0, n_pos), span c's partials at
// partial + c * n_heads * AttentionPartialFloats(head_dim). For each head, with
// M = max_c m_c, w_c = exp(m_c - M), L = sum_c w_c l_c: out_h = sum_c w_c o_c / L, and
// (unless probs is null) span c's probs scaled by w_c / L: the softmax.
using AttendMergeFn = void (*)(const float* partial, size_t n_spans, size_t span,
                               size_t n_pos, size_t head_dim, size_t n_heads,
                               float* probs, size_t probs_stride, float* out);
inline size_t AttentionPartialFloats(size_t head_dim) { return head_dim + 2; }
// The span a token with n_pos positions is split into: a multiple of 16 positions (whole
// vectors of every target), at most kMaxAttentionSpans spans. It depends on n_pos alone,
// so results never depend on the thread count or on prefill against decode.
constexpr size_t kMaxAttentionSpans = 16;
inline size_t AttentionSpan(size_t n_pos) {
  const size_t per_span = (n_pos + kMaxAttentionSpans - 1) / kMaxAttentionSpans;
  return per_span <= 16 ? 16 : (per_span + 15) / 16 * 16;
}
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
  AttendSpansFn attend_spans = nullptr;  // f32 cache
  AttendSpansF16Fn attend_spans_f16 = nullptr;
  AttendSpansQ8Fn attend_spans_q8 = nullptr;
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
