// Per-target attention in spans of positions, over any cache type's rows (a Cache:
// attention-inl.h's dense f32 and f16 rows, attention_q8-inl.h's q8 rows), and the merge
// of the spans' partial softmaxes.
#if defined(EMBER_KERNELS_ATTENTION_SPANS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_ATTENTION_SPANS_INL_H_
#undef EMBER_KERNELS_ATTENTION_SPANS_INL_H_
#else
#define EMBER_KERNELS_ATTENTION_SPANS_INL_H_
#endif

#include <cmath>

#include "hwy/highway.h"
#include "kernels/attention.h"
#include "kernels/dcheck.h"
#include "kernels/elementwise-inl.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ExpMinusSum, compiled once for the spans and the merge (the vector exp is most of
// the attention code's size, which counts on a microcontroller).
inline HWY_NOINLINE float SpanExp(float* HWY_RESTRICT x, size_t n, float max) {
  return ExpMinusSum(x, n, max);
}

// The row of position t: first_row + t (AttendSpansArgs), less ring_rows from ring_end
// on (KvRows).
struct RingRows {
  size_t first, end, rows;
  HWY_INLINE size_t operator()(size_t t) const {
    const size_t r = first + t;
    return r < end ? r : r - rows;
  }
};

// x = scale * x (then softcap tanh(x / softcap) when softcap > 0) in place, n >= 1;
// returns the maximum.
inline HWY_NOINLINE float ScaleAndMax(float* HWY_RESTRICT x, size_t n, float scale,
                                      float softcap) {
  if (softcap > 0.0f) {
    float max = 0.0f;
    for (size_t i = 0; i < n; ++i) {
      x[i] = softcap * std::tanh(x[i] * scale / softcap);
      max = i == 0 || x[i] > max ? x[i] : max;
    }
    return max;
  }
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vscale = hn::Set(d, scale);
  float max = x[0] * scale;
  size_t i = 0;
  if (n >= N) {
    auto vmax = hn::Set(d, max);
    for (; i + N <= n; i += N) {
      const auto v = hn::Mul(hn::LoadU(d, x + i), vscale);
      hn::StoreU(v, d, x + i);
      vmax = hn::Max(vmax, v);
    }
    max = ReduceMax(d, vmax);
  }
  for (; i < n; ++i) {
    x[i] *= scale;
    max = x[i] > max ? x[i] : max;
  }
  return max;
}

// How a Cache reads its type: Score(t, kv, h) = dot(K[t] of KV head kv, q_h) (with
// kRowScores, Scores(t, ...): every head's of position t at once), and the values of
// position t as Row r = RowOf(t): columns [v, v + Lanes(D)) of the row as
// LoadAt(d, r, v) (one column: ValueAt(r, v)) times ScaleAt(r, g) of their group g
// (v = kv * head_dim + i, g = kv * GroupsPerHead(head_dim) + i / kKvGroup). f32 and f16
// have no scale (1, which the compiler folds: the f32 kernel computes exactly
// p[t] * V[t]). Prefetch(t, n_pos, row_bytes) fetches what a decode step reads next
// (AttendSpansArgs::prefetch_values). D tags the weighted sum's vectors; kValueBytes is
// the size of one stored value.
//
// Spans [first_span, first_span + num_spans) of one token, every head. The cache is read
// position by position, each row once per pass for all heads (the keys of the run as
// one forward stream, then its values), rather than one strided walk per head:
// s[t] = scale * Score(t) (dot(K[t], q)), per span p = exp(s - max) (SpanExp), then
// o = sum_t p[t] V[t] over the span's t in order. With prefetch_values, each position's
// values are prefetched to L2 while its keys are read (1 thread, attention over a cache
// in DRAM 20 to 30 % faster in a harness; over a cache in L2, 10 % slower), so a run is
// kept to a few hundred KiB (AttendSpansOf).
template <class Cache>
HWY_INLINE void AttendSpanRun(const Cache& cache, const AttendSpansArgs& a,
                              size_t first_span, size_t num_spans,
                              float* HWY_RESTRICT probs, float* HWY_RESTRICT partial) {
  const size_t head_dim = a.head_dim, n_heads = a.n_heads, group = a.group;
  const size_t n_pos = a.n_pos, span = a.span, probs_stride = a.probs_stride;
  const size_t n_kv = n_heads / group, stride = AttentionPartialFloats(head_dim);
  const size_t t0 = first_span * span;
  const size_t t1 = HWY_MIN(n_pos, (first_span + num_spans) * span);
  // Scores. A q8 cache (kRowScores): every head's raw dot of a position at once
  // (Scores), then per span and head scaled (soft-capped), their maximum (the partial's
  // m) and exp(s - m). Dense caches keep one loop per head: with the q8 cache's form
  // their decode at depth 1024 was 6 % slower (ember bench, f32, medians of 5 runs:
  // 151.2 against 159.9 tokens/s).
  const size_t row_bytes = n_kv * head_dim * Cache::kValueBytes;
  if constexpr (Cache::kRowScores) {
    for (size_t t = t0; t < t1; ++t) {
      if (a.prefetch_values) cache.Prefetch(t, n_pos, row_bytes);
      cache.Scores(t, n_kv, group, probs + t, probs_stride);
    }
    for (size_t c = first_span; c < first_span + num_spans; ++c) {
      const size_t c0 = c * span, c1 = HWY_MIN(n_pos, c0 + span);
      for (size_t h = 0; h < n_heads; ++h) {
        float* HWY_RESTRICT s = probs + h * probs_stride + c0;
        float* HWY_RESTRICT o = partial + (c * n_heads + h) * stride;
        o[head_dim] = ScaleAndMax(s, c1 - c0, a.scale, a.softcap);
        o[head_dim + 1] = SpanExp(s, c1 - c0, o[head_dim]);
      }
    }
  } else {  // per head, scaled and its maximum kept as it goes (in the partial's m)
    // Four positions of one span at a time where nothing else runs per position (no
    // prefetch, no softcap): their dots in four chains (exactly Score's sums), kept as
    // one at a time keeps them.
    const bool fours = !a.prefetch_values && a.softcap <= 0.0f;
    for (size_t t = t0; t < t1;) {
      float* HWY_RESTRICT m = partial + t / span * n_heads * stride + head_dim;
      const bool first = t % span == 0;
      if (fours && t + 4 <= HWY_MIN(t1, (t / span + 1) * span)) {
        for (size_t kv = 0; kv < n_kv; ++kv) {
          for (size_t h = kv * group; h < (kv + 1) * group; ++h) {
            float s4[4];
            cache.Score4(t, kv, h, s4);
            float* HWY_RESTRICT p = probs + h * probs_stride + t;
            float max = m[h * stride];
            for (size_t j = 0; j < 4; ++j) {
              p[j] = s4[j] * a.scale;
              max = (first && j == 0) || p[j] > max ? p[j] : max;
            }
            m[h * stride] = max;
          }
        }
        t += 4;
        continue;
      }
      if (a.prefetch_values) cache.Prefetch(t, n_pos, row_bytes);
      for (size_t kv = 0; kv < n_kv; ++kv) {
        for (size_t h = kv * group; h < (kv + 1) * group; ++h) {
          float score = cache.Score(t, kv, h) * a.scale;
          if (a.softcap > 0.0f) score = a.softcap * std::tanh(score / a.softcap);
          probs[h * probs_stride + t] = score;
          m[h * stride] = first || score > m[h * stride] ? score : m[h * stride];
        }
      }
      ++t;
    }
    for (size_t c = first_span; c < first_span + num_spans; ++c) {
      const size_t c0 = c * span, c1 = HWY_MIN(n_pos, c0 + span);
      for (size_t h = 0; h < n_heads; ++h) {
        float* HWY_RESTRICT o = partial + (c * n_heads + h) * stride;
        o[head_dim + 1] = SpanExp(probs + h * probs_stride + c0, c1 - c0, o[head_dim]);
      }
    }
  }

  // o: blocks of up to kBlock positions within a span, each head's partial sums kept in
  // registers over a block and in `partial` between blocks (the same chain of MulAdds
  // as one loop over the span). Four vectors of a head at a time: four independent
  // chains per position, where one would wait out each MulAdd's latency.
  constexpr size_t kBlock = 8;
  const typename Cache::D d;
  const size_t N = hn::Lanes(d);
  const size_t body = head_dim - head_dim % N;
  for (size_t b0 = t0, b1; b0 < t1 && body > 0; b0 = b1) {
    const size_t c = b0 / span;
    const bool first_block = b0 == c * span;
    b1 = HWY_MIN(HWY_MIN(t1, b0 + kBlock), (c + 1) * span);
    typename Cache::Row rows[kBlock];
    for (size_t t = b0; t < b1; ++t) rows[t - b0] = cache.RowOf(t);
    const size_t n = b1 - b0;
    for (size_t kv = 0; kv < n_kv; ++kv) {
      for (size_t h = kv * group; h < (kv + 1) * group; ++h) {
        const float* HWY_RESTRICT p = probs + h * probs_stride + b0;
        float* HWY_RESTRICT o = partial + (c * n_heads + h) * stride;
        size_t i = 0;
        for (; i + 4 * N <= body; i += 4 * N) {
          auto a0 = first_block ? hn::Zero(d) : hn::LoadU(d, o + i);
          auto a1 = first_block ? hn::Zero(d) : hn::LoadU(d, o + i + N);
          auto a2 = first_block ? hn::Zero(d) : hn::LoadU(d, o + i + 2 * N);
          auto a3 = first_block ? hn::Zero(d) : hn::LoadU(d, o + i + 3 * N);
          // Vector k's group: i / kKvGroup + k * N / kKvGroup (i is a multiple of 4N).
          const size_t v = kv * head_dim + i,
                       g = kv * Cache::GroupsPerHead(head_dim) + i / kKvGroup;
          for (size_t t = 0; t < n; ++t) {
            const typename Cache::Row& r = rows[t];
            a0 = hn::MulAdd(hn::Set(d, p[t] * cache.ScaleAt(r, g)), cache.LoadAt(d, r, v),
                            a0);
            a1 = hn::MulAdd(hn::Set(d, p[t] * cache.ScaleAt(r, g + N / kKvGroup)),
                            cache.LoadAt(d, r, v + N), a1);
            a2 = hn::MulAdd(hn::Set(d, p[t] * cache.ScaleAt(r, g + 2 * N / kKvGroup)),
                            cache.LoadAt(d, r, v + 2 * N), a2);
            a3 = hn::MulAdd(hn::Set(d, p[t] * cache.ScaleAt(r, g + 3 * N / kKvGroup)),
                            cache.LoadAt(d, r, v + 3 * N), a3);
          }
          hn::StoreU(a0, d, o + i);
          hn::StoreU(a1, d, o + i + N);
          hn::StoreU(a2, d, o + i + 2 * N);
          hn::StoreU(a3, d, o + i + 3 * N);
        }
        // Two vectors (a head of 2N values: head_dim 32 on AVX-512): two chains at once.
        for (; i + 2 * N <= body; i += 2 * N) {
          auto a0 = first_block ? hn::Zero(d) : hn::LoadU(d, o + i);
          auto a1 = first_block ? hn::Zero(d) : hn::LoadU(d, o + i + N);
          const size_t v = kv * head_dim + i,
                       g = kv * Cache::GroupsPerHead(head_dim) + i / kKvGroup;
          for (size_t t = 0; t < n; ++t) {
            const typename Cache::Row& r = rows[t];
            a0 = hn::MulAdd(hn::Set(d, p[t] * cache.ScaleAt(r, g)), cache.LoadAt(d, r, v),
                            a0);
            a1 = hn::MulAdd(hn::Set(d, p[t] * cache.ScaleAt(r, g + N / kKvGroup)),
                            cache.LoadAt(d, r, v + N), a1);
          }
          hn::StoreU(a0, d, o + i);
          hn::StoreU(a1, d, o + i + N);
        }
        for (; i < body; i += N) {
          auto acc = first_block ? hn::Zero(d) : hn::LoadU(d, o + i);
          const size_t v = kv * head_dim + i,
                       g = kv * Cache::GroupsPerHead(head_dim) + i / kKvGroup;
          for (size_t t = 0; t < n; ++t) {
            acc = hn::MulAdd(hn::Set(d, p[t] * cache.ScaleAt(rows[t], g)),
                             cache.LoadAt(d, rows[t], v), acc);
          }
          hn::StoreU(acc, d, o + i);
        }
      }
    }
  }
  // The columns no whole vector covers (small heads), per head as the reference does.
  for (size_t c = first_span; c < first_span + num_spans; ++c) {
    const size_t c0 = c * span, c1 = HWY_MIN(n_pos, c0 + span);
    for (size_t h = 0; h < n_heads; ++h) {
      const float* HWY_RESTRICT p = probs + h * probs_stride;
      const size_t kv = h / group;
      for (size_t i = body; i < head_dim; ++i) {
        const size_t v = kv * head_dim + i,
                     g = kv * Cache::GroupsPerHead(head_dim) + i / kKvGroup;
        float acc = 0.0f;
        for (size_t t = c0; t < c1; ++t) {
          const typename Cache::Row r = cache.RowOf(t);
          acc += p[t] * cache.ScaleAt(r, g) * cache.ValueAt(r, v);
        }
        partial[(c * n_heads + h) * stride + i] = acc;
      }
    }
  }
}

// Runs of spans whose values take at most kRunBytes (at least one span each), so
// prefetched values are still in L2 when they are read. A span's results do not depend
// on its run.
template <class Cache>
HWY_INLINE void AttendSpansOf(const Cache& cache, const AttendSpansArgs& a,
                              float* HWY_RESTRICT probs, float* HWY_RESTRICT partial) {
  constexpr size_t kRunBytes = size_t{256} << 10;
  const size_t span_bytes =
      a.span * a.n_heads / a.group * a.head_dim * Cache::kValueBytes;
  const size_t run = span_bytes >= kRunBytes ? 1 : kRunBytes / span_bytes;
  for (size_t c = a.first_span; c < a.first_span + a.num_spans; c += run) {
    const size_t n = HWY_MIN(run, a.first_span + a.num_spans - c);
    AttendSpanRun(cache, a, c, n, probs, partial);
  }
}

// AttendMergeFn (attention.h): the spans' partial softmaxes rescaled to their common
// maximum and summed in span order.
inline void AttendMerge(const float* HWY_RESTRICT partial, size_t n_spans, size_t span,
                        size_t n_pos, size_t head_dim, size_t n_heads,
                        float* HWY_RESTRICT probs, size_t probs_stride,
                        float* HWY_RESTRICT out) {
  EMBER_DCHECK(n_spans >= 1 && n_spans <= kMaxAttentionSpans);
  EMBER_DCHECK((n_spans - 1) * span < n_pos && n_pos <= n_spans * span);
  const size_t stride = AttentionPartialFloats(head_dim), span_stride = n_heads * stride;
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  for (size_t h = 0; h < n_heads; ++h) {
    const float* HWY_RESTRICT first = partial + h * stride;
    float max = first[head_dim];
    for (size_t c = 1; c < n_spans; ++c) {
      max = HWY_MAX(max, first[c * span_stride + head_dim]);
    }
    HWY_ALIGN float weight[kMaxAttentionSpans];  // w_c = exp(m_c - M)
    for (size_t c = 0; c < n_spans; ++c) weight[c] = first[c * span_stride + head_dim];
    SpanExp(weight, n_spans, max);
    float total = 0.0f;
    for (size_t c = 0; c < n_spans; ++c) {
      total += weight[c] * first[c * span_stride + head_dim + 1];
    }
    const float inv = 1.0f / total;
    float* HWY_RESTRICT o = out + h * head_dim;
    size_t i = 0;
    for (; i + N <= head_dim; i += N) {
      auto acc = hn::Zero(d);
      for (size_t c = 0; c < n_spans; ++c) {
        acc = hn::MulAdd(hn::Set(d, weight[c]), hn::LoadU(d, first + c * span_stride + i),
                         acc);
      }
      hn::StoreU(hn::Mul(acc, hn::Set(d, inv)), d, o + i);
    }
    for (; i < head_dim; ++i) {
      float acc = 0.0f;
      for (size_t c = 0; c < n_spans; ++c) acc += weight[c] * first[c * span_stride + i];
      o[i] = acc * inv;
    }
    if (probs == nullptr) continue;
    float* HWY_RESTRICT p = probs + h * probs_stride;
    for (size_t c = 0; c < n_spans; ++c) {
      const size_t t0 = c * span, t1 = HWY_MIN(n_pos, t0 + span);
      const auto factor = hn::Set(d, weight[c] * inv);
      TransformInPlace(d, p + t0, t1 - t0, [&](auto v) { return hn::Mul(v, factor); });
    }
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_ATTENTION_SPANS_INL_H_
