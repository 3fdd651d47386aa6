// Attention's plain declarations: the KV cache encodings, the typed view of one layer's
// cached rows (KvRows) and one token's query that the kernel entry reads, its span and
// merge signatures, and how positions are split into spans.
#ifndef EMBER_KERNELS_ATTENTION_H_
#define EMBER_KERNELS_ATTENTION_H_

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

// Attention of one token's n_heads query heads over n_pos cached positions, computed
// in spans of positions and then merged (so threads can take spans: each reads whole
// cache rows). q and out hold the heads at stride head_dim; head h reads KV head
// h / group at keys + row(t) * kv_stride + (h / group) * head_dim (values alike), row(t)
// = first_row + t, less ring_rows from ring_end on when the rows are in a ring.
//
// The cache holds rows of one type (KvType), read directly by the kernel for it.
// q8: each KV head's head_dim values in groups of kKvGroup (the last may be shorter),
// int8 with an f32 scale per group: s = absmax / 127 (0 for an all-zero group),
// q = round-to-nearest-even(x / s) clamped to [-127, 127]; the scales of position t at
// scales + row(t) * scale_stride + (h / group) * KvGroups(head_dim). A q8 query is stored
// as the cache is, with each head padded to KvGroups(head_dim) * kKvGroup values (zeros
// past head_dim); a group's score is then the exact int32 dot times both scales.
enum class KvType : uint8_t { kF32 = 0, kF16 = 1, kQ8 = 2 };
inline constexpr size_t kKvGroup = 32;
inline size_t KvGroups(size_t head_dim) { return (head_dim + kKvGroup - 1) / kKvGroup; }

// One layer's cached keys and values as the attention kernels read them: rows of
// kv_stride elements of the type (float; f16 bit patterns as uint16_t; int8, with the
// q8 scales in rows of scale_stride beside them), row 0 at the pointers. A sliding
// layer's rows may form a ring of ring_rows rows ending at row ring_end: a token's
// positions then wrap around its end (ring_rows >= the positions a token sees).
struct KvRows {
  KvType type = KvType::kF32;
  const void* keys = nullptr;           // of the type: float, uint16_t or int8_t
  const void* values = nullptr;         // of the type
  const float* key_scales = nullptr;    // q8
  const float* value_scales = nullptr;  // q8
  size_t kv_stride = 0;                 // elements from one row to the next
  size_t scale_stride = 0;              // q8: scales from one row to the next
  size_t ring_end = SIZE_MAX;           // no ring: ring_rows 0
  size_t ring_rows = 0;
};

// One token's query heads (n_heads x head_dim floats) and, for a q8 cache, the same in
// its encoding (QuantizeKvFn with heads at stride KvGroups(head_dim) * kKvGroup) and the
// scales; dense caches read q alone, q8 caches q8 and q8_scales alone.
struct AttendQuery {
  const float* q = nullptr;
  const int8_t* q8 = nullptr;
  const float* q8_scales = nullptr;
};

// The positions an AttendSpans call covers and the shape of the heads.
struct AttendSpansArgs {
  size_t n_pos = 0;       // the token attends to positions [0, n_pos)
  size_t span = 0;        // positions per span (the last span ends at n_pos)
  size_t first_span = 0;  // spans [first_span, first_span + num_spans)
  size_t num_spans = 0;
  size_t head_dim = 0;
  size_t n_heads = 0;
  size_t group = 1;         // query heads per KV head
  float scale = 1.0f;       // of the scores: 1 / sqrt(head_dim) for a plain model
  float softcap = 0.0f;     // > 0: scores capped to softcap tanh(s / softcap) (Gemma 2)
  size_t probs_stride = 0;  // >= n_pos
  size_t first_row = 0;     // position t's row: first_row + t, wrapped in KvRows' ring
  // A hint that the cache is not in the CPU caches (decode): the kernel then prefetches
  // keys ahead of the scores and values while it reads keys. It does not change any
  // result.
  bool prefetch_values = false;
};

// AttendSpansFn: spans [first_span, first_span + num_spans) of `span` positions each
// (the last one ends at n_pos), every head h, over the rows of kv in its type; for the
// positions t of span c:
//   s[t] = scale * dot(K[t], q_h) (then softcap tanh(s[t] / softcap) when softcap > 0);
//   m = max s;  p[t] = exp(s[t] - m);
//   probs[h * probs_stride + t] = p[t];  partial + (c * n_heads + h) *
//   AttentionPartialFloats(head_dim) holds sum_t p[t] V[t] (head_dim floats), then m,
//   then l = sum_t p[t].
// A span's results are the same whatever range of spans it is computed in.
// q8: dot(K[t], q_h) = sum over groups g of (int32 dot of the group) * (q_scale_g *
// k_scale_g): each group's products summed exactly in integer lanes, scaled in float and
// the lanes summed at the end; V[t] = value scale of its group * int8 value.
using AttendSpansFn = void (*)(const KvRows& kv, const AttendQuery& query,
                               const AttendSpansArgs& args, float* probs, float* partial);
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

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_ATTENTION_H_
