// Per-target attention of one token's query heads over the cached keys and values, in
// spans of positions that a merge combines.
#if defined(EMBER_KERNELS_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_ATTENTION_INL_H_
#undef EMBER_KERNELS_ATTENTION_INL_H_
#else
#define EMBER_KERNELS_ATTENTION_INL_H_
#endif

#include <cmath>

#include "hwy/highway.h"
#include "kernels/dcheck.h"
#include "kernels/elementwise-inl.h"
#include "kernels/kernel_table.h"
#include "kernels/matvec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ExpMinusSum, compiled once for the spans and the merge (the vector exp is most of
// the attention code's size, which counts on a microcontroller).
inline HWY_NOINLINE float SpanExp(float* HWY_RESTRICT x, size_t n, float max) {
  return ExpMinusSum(x, n, max);
}

// Spans [first_span, first_span + num_spans) of one token, every head. The cache is read
// position by position, each row once per pass for all heads (the keys of the run as
// one forward stream, then its values), rather than one strided walk per head:
// s[t] = scale * dot(K[t], q) (DotRow), per span p = exp(s - max) (SpanExp), then
// o = sum_t p[t] V[t] over the span's t in order. With prefetch_values, each position's
// values are prefetched to L2 while its keys are read (1 thread, attention over a cache
// in DRAM 20 to 30 % faster in a harness; over a cache in L2, 10 % slower), so a run is
// kept to a few hundred KiB (AttendSpans).
inline void AttendSpanRun(const float* HWY_RESTRICT q, const float* HWY_RESTRICT keys,
                          const float* HWY_RESTRICT values, size_t kv_stride,
                          size_t n_pos, size_t span, size_t first_span, size_t num_spans,
                          size_t head_dim, size_t n_heads, size_t group, float scale,
                          float softcap, float* HWY_RESTRICT probs, size_t probs_stride,
                          float* HWY_RESTRICT partial, bool prefetch_values) {
  const size_t n_kv = n_heads / group, stride = AttentionPartialFloats(head_dim);
  const size_t t0 = first_span * span;
  const size_t t1 = HWY_MIN(n_pos, (first_span + num_spans) * span);
  // Scores, each span's maximum kept as it goes (in the partial's m).
  const size_t row_bytes = n_kv * head_dim * sizeof(float);
  for (size_t t = t0; t < t1; ++t) {
    const uintptr_t v_row = reinterpret_cast<uintptr_t>(values + t * kv_stride);
    for (uintptr_t line = 0; prefetch_values && line < row_bytes; line += 64) {
      __builtin_prefetch(reinterpret_cast<const void*>(v_row + line), 0, 2);
    }
    float* HWY_RESTRICT m = partial + t / span * n_heads * stride + head_dim;
    const bool first = t % span == 0;
    for (size_t kv = 0; kv < n_kv; ++kv) {
      const float* HWY_RESTRICT key = keys + t * kv_stride + kv * head_dim;
      for (size_t h = kv * group; h < (kv + 1) * group; ++h) {
        float score = DotRow(key, q + h * head_dim, head_dim) * scale;
        if (softcap > 0.0f) score = softcap * std::tanh(score / softcap);
        probs[h * probs_stride + t] = score;
        m[h * stride] = first || score > m[h * stride] ? score : m[h * stride];
      }
    }
  }
  for (size_t c = first_span; c < first_span + num_spans; ++c) {
    const size_t c0 = c * span, c1 = HWY_MIN(n_pos, c0 + span);
    for (size_t h = 0; h < n_heads; ++h) {
      float* HWY_RESTRICT o = partial + (c * n_heads + h) * stride;
      o[head_dim + 1] = SpanExp(probs + h * probs_stride + c0, c1 - c0, o[head_dim]);
    }
  }

  // o: blocks of up to kBlock positions within a span, each head's partial sums kept in
  // registers over a block and in `partial` between blocks (the same chain of MulAdds
  // as one loop over the span). Four vectors of a head at a time: four independent
  // chains per position, where one would wait out each MulAdd's latency.
  constexpr size_t kBlock = 8;
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = head_dim - head_dim % N;
  for (size_t b0 = t0, b1; b0 < t1 && body > 0; b0 = b1) {
    const size_t c = b0 / span;
    const bool first_block = b0 == c * span;
    b1 = HWY_MIN(HWY_MIN(t1, b0 + kBlock), (c + 1) * span);
    for (size_t kv = 0; kv < n_kv; ++kv) {
      const float* HWY_RESTRICT v = values + kv * head_dim;
      for (size_t h = kv * group; h < (kv + 1) * group; ++h) {
        const float* HWY_RESTRICT p = probs + h * probs_stride;
        float* HWY_RESTRICT o = partial + (c * n_heads + h) * stride;
        size_t i = 0;
        for (; i + 4 * N <= body; i += 4 * N) {
          auto a0 = first_block ? hn::Zero(d) : hn::LoadU(d, o + i);
          auto a1 = first_block ? hn::Zero(d) : hn::LoadU(d, o + i + N);
          auto a2 = first_block ? hn::Zero(d) : hn::LoadU(d, o + i + 2 * N);
          auto a3 = first_block ? hn::Zero(d) : hn::LoadU(d, o + i + 3 * N);
          for (size_t t = b0; t < b1; ++t) {
            const auto pt = hn::Set(d, p[t]);
            const float* HWY_RESTRICT vt = v + t * kv_stride + i;
            a0 = hn::MulAdd(pt, hn::LoadU(d, vt), a0);
            a1 = hn::MulAdd(pt, hn::LoadU(d, vt + N), a1);
            a2 = hn::MulAdd(pt, hn::LoadU(d, vt + 2 * N), a2);
            a3 = hn::MulAdd(pt, hn::LoadU(d, vt + 3 * N), a3);
          }
          hn::StoreU(a0, d, o + i);
          hn::StoreU(a1, d, o + i + N);
          hn::StoreU(a2, d, o + i + 2 * N);
          hn::StoreU(a3, d, o + i + 3 * N);
        }
        for (; i < body; i += N) {
          auto acc = first_block ? hn::Zero(d) : hn::LoadU(d, o + i);
          for (size_t t = b0; t < b1; ++t) {
            acc = hn::MulAdd(hn::Set(d, p[t]), hn::LoadU(d, v + t * kv_stride + i), acc);
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
      const float* HWY_RESTRICT v = values + h / group * head_dim;
      for (size_t i = body; i < head_dim; ++i) {
        float acc = 0.0f;
        for (size_t t = c0; t < c1; ++t) acc += p[t] * v[t * kv_stride + i];
        partial[(c * n_heads + h) * stride + i] = acc;
      }
    }
  }
}

// AttendSpansFn (kernel_table.h): runs of spans whose values take at most kRunBytes (at
// least one span each), so prefetched values are still in L2 when they are read. A
// span's results do not depend on its run.
inline void AttendSpans(const float* HWY_RESTRICT q, const float* HWY_RESTRICT keys,
                        const float* HWY_RESTRICT values, size_t kv_stride, size_t n_pos,
                        size_t span, size_t first_span, size_t num_spans, size_t head_dim,
                        size_t n_heads, size_t group, float scale, float softcap,
                        float* HWY_RESTRICT probs, size_t probs_stride,
                        float* HWY_RESTRICT partial, bool prefetch_values) {
  EMBER_DCHECK(group >= 1 && n_heads % group == 0 && head_dim >= 1);
  EMBER_DCHECK(span >= 1 && num_spans >= 1 && first_span * span < n_pos);
  EMBER_DCHECK(kv_stride >= n_heads / group * head_dim && probs_stride >= n_pos);
  constexpr size_t kRunBytes = size_t{256} << 10;
  const size_t span_bytes = span * n_heads / group * head_dim * sizeof(float);
  const size_t run = span_bytes >= kRunBytes ? 1 : kRunBytes / span_bytes;
  for (size_t c = first_span; c < first_span + num_spans; c += run) {
    const size_t n = HWY_MIN(run, first_span + num_spans - c);
    AttendSpanRun(q, keys, values, kv_stride, n_pos, span, c, n, head_dim, n_heads, group,
                  scale, softcap, probs, probs_stride, partial, prefetch_values);
  }
}

// AttendMergeFn (kernel_table.h): the spans' partial softmaxes rescaled to their common
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

#endif  // EMBER_KERNELS_ATTENTION_INL_H_
