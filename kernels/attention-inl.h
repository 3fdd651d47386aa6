// Per-target attention of one token's query heads over the cached keys and values (f32,
// f16 or q8), in spans of positions that a merge combines.
#if defined(EMBER_KERNELS_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_ATTENTION_INL_H_
#undef EMBER_KERNELS_ATTENTION_INL_H_
#else
#define EMBER_KERNELS_ATTENTION_INL_H_
#endif

#include <cmath>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/dcheck.h"
#include "kernels/elementwise-inl.h"
#include "kernels/kernel_table.h"
#include "kernels/matvec-inl.h"
#include "kernels/matvec16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ExpMinusSum, compiled once for the spans and the merge (the vector exp is most of
// the attention code's size, which counts on a microcontroller).
inline HWY_NOINLINE float SpanExp(float* HWY_RESTRICT x, size_t n, float max) {
  return ExpMinusSum(x, n, max);
}

// How each cache type is read: Score(t, kv, h) = dot(K[t] of KV head kv, q_h), and the
// values of position t, KV head kv, columns [i, i + Lanes(D)) as LoadValues(d, t, kv, i)
// times ValueScale(t, kv, i) (Value(t, kv, i) for one column). f32 and f16 have no
// scale (1, which the compiler folds: the f32 kernel computes exactly p[t] * V[t]).
//
// Dense rows of f32, or of f16 widened to f32 in registers (vcvtph2ps with F16C).
struct F32Rows {
  using T = float;
  static HWY_INLINE float Dot(const float* HWY_RESTRICT k, const float* HWY_RESTRICT q,
                              size_t n) {
    return DotRow(k, q, n);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const float* HWY_RESTRICT p) {
    return hn::LoadU(d, p);
  }
  static HWY_INLINE float ToFloat(float x) { return x; }
};
struct F16Rows {
  using T = uint16_t;
  static HWY_INLINE float Dot(const uint16_t* HWY_RESTRICT k, const float* HWY_RESTRICT q,
                              size_t n) {
    return DotRow16<F16Format>(k, q, n);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const uint16_t* HWY_RESTRICT p) {
    return LoadWide<F16Format>(d, p);
  }
  static HWY_INLINE float ToFloat(uint16_t x) { return HalfToFloat(x); }
};

// The row of position t (AttendSpansArgs): first_row + t, less ring_rows from ring_end
// on.
struct RingRows {
  size_t first, end, rows;
  HWY_INLINE size_t operator()(size_t t) const {
    const size_t r = first + t;
    return r < end ? r : r - rows;
  }
};

template <class Rows>
struct DenseCache {
  using D = hn::ScalableTag<float>;
  using T = typename Rows::T;
  const float* HWY_RESTRICT q;
  const T* HWY_RESTRICT keys;
  const T* HWY_RESTRICT values;
  size_t kv_stride, head_dim;
  RingRows row;
  static constexpr size_t kValueBytes = sizeof(T);

  HWY_INLINE float Score(size_t t, size_t kv, size_t h) const {
    return Rows::Dot(keys + row(t) * kv_stride + kv * head_dim, q + h * head_dim,
                     head_dim);
  }
  const void* ValueRow(size_t t) const { return values + row(t) * kv_stride; }
  HWY_INLINE hn::Vec<D> LoadValues(D d, size_t t, size_t kv, size_t i) const {
    return Rows::Load(d, values + row(t) * kv_stride + kv * head_dim + i);
  }
  HWY_INLINE float ValueScale(size_t, size_t, size_t) const { return 1.0f; }
  HWY_INLINE float Value(size_t t, size_t kv, size_t i) const {
    return Rows::ToFloat(values[row(t) * kv_stride + kv * head_dim + i]);
  }
};

// acc + float(the int32 dot of two groups of kKvGroup int8 values) * scale, lane-wise:
// int16 products summed in pairs (pmaddwd, smlal) into int32 lanes, each lane's sum
// exact (at most 32 x 127^2 < 2^24, so exact in float too), then scaled and added as a
// vector, so a score needs one horizontal sum, not one per group.
template <class DF>
HWY_INLINE hn::Vec<DF> AddGroupDot(DF df, const int8_t* HWY_RESTRICT a,
                                   const int8_t* HWY_RESTRICT b, float scale,
                                   hn::Vec<DF> acc) {
#if HWY_TARGET == HWY_SCALAR
  const hn::Rebind<int16_t, DF> d16;  // one lane: no pairs to sum
#else
  const hn::Repartition<int16_t, DF> d16;
#endif
  const hn::Rebind<int8_t, decltype(d16)> d8;
  const hn::RebindToSigned<DF> d32;
  auto sum0 = hn::Zero(d32), sum1 = hn::Zero(d32);
  for (size_t i = 0; i < kKvGroup; i += hn::Lanes(d16)) {
    sum0 = hn::ReorderWidenMulAccumulate(d32, hn::PromoteTo(d16, hn::LoadU(d8, a + i)),
                                         hn::PromoteTo(d16, hn::LoadU(d8, b + i)), sum0,
                                         sum1);
  }
  return hn::MulAdd(hn::ConvertTo(df, hn::Add(sum0, sum1)), hn::Set(df, scale), acc);
}

// q8 rows: scores from int8 keys and the int8 query, a group at a time; values widened
// to f32 and scaled per group (a vector never straddles two groups: CappedTag).
struct Q8Cache {
  using D = hn::CappedTag<float, kKvGroup>;
  const int8_t* HWY_RESTRICT q;  // heads at stride groups * kKvGroup, zero padded
  const float* HWY_RESTRICT q_scales;
  const int8_t* HWY_RESTRICT keys;
  const float* HWY_RESTRICT key_scales;
  const int8_t* HWY_RESTRICT values;
  const float* HWY_RESTRICT value_scales;
  size_t kv_stride, scale_stride, head_dim, groups;
  RingRows row;
  static constexpr size_t kValueBytes = sizeof(int8_t);

  HWY_INLINE float Score(size_t t, size_t kv, size_t h) const {
    const size_t r = row(t);
    const int8_t* HWY_RESTRICT key = keys + r * kv_stride + kv * head_dim;
    const float* HWY_RESTRICT ks = key_scales + r * scale_stride + kv * groups;
    const int8_t* HWY_RESTRICT qh = q + h * groups * kKvGroup;
    const float* HWY_RESTRICT qs = q_scales + h * groups;
    const hn::CappedTag<float, kKvGroup / 2> df;  // int32 lanes of pairs of int8 products
    auto sum = hn::Zero(df);
    for (size_t g = 0; g < groups; ++g) {
      const size_t n = HWY_MIN(kKvGroup, head_dim - g * kKvGroup);
      if (n == kKvGroup) {
        sum = AddGroupDot(df, qh + g * kKvGroup, key + g * kKvGroup, qs[g] * ks[g], sum);
      } else {  // a short last group: the query is zero past it; the key is copied
        HWY_ALIGN int8_t tail[kKvGroup] = {0};
        memcpy(tail, key + g * kKvGroup, n);
        sum = AddGroupDot(df, qh + g * kKvGroup, tail, qs[g] * ks[g], sum);
      }
    }
    return ReduceSum(df, sum);
  }
  const void* ValueRow(size_t t) const { return values + row(t) * kv_stride; }
  HWY_INLINE hn::Vec<D> LoadValues(D d, size_t t, size_t kv, size_t i) const {
    const hn::Rebind<int8_t, D> d8;
    const hn::Rebind<int32_t, D> di;
    return hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, values + row(t) * kv_stride +
                                                                kv * head_dim + i)));
  }
  HWY_INLINE float ValueScale(size_t t, size_t kv, size_t i) const {
    return value_scales[row(t) * scale_stride + kv * groups + i / kKvGroup];
  }
  HWY_INLINE float Value(size_t t, size_t kv, size_t i) const {
    return static_cast<float>(values[row(t) * kv_stride + kv * head_dim + i]);
  }
};

// Spans [first_span, first_span + num_spans) of one token, every head. The cache is read
// position by position, each row once per pass for all heads (the keys of the run as
// one forward stream, then its values), rather than one strided walk per head:
// s[t] = scale * Score(t) (dot(K[t], q)), per span p = exp(s - max) (SpanExp), then
// o = sum_t p[t] V[t] over the span's t in order. With prefetch_values, each position's
// values are prefetched to L2 while its keys are read (1 thread, attention over a cache
// in DRAM 20 to 30 % faster in a harness; over a cache in L2, 10 % slower), so a run is
// kept to a few hundred KiB (AttendSpans).
template <class Cache>
HWY_INLINE void AttendSpanRun(const Cache& cache, const AttendSpansArgs& a,
                              size_t first_span, size_t num_spans,
                              float* HWY_RESTRICT probs, float* HWY_RESTRICT partial) {
  const size_t head_dim = a.head_dim, n_heads = a.n_heads, group = a.group;
  const size_t n_pos = a.n_pos, span = a.span, probs_stride = a.probs_stride;
  const size_t n_kv = n_heads / group, stride = AttentionPartialFloats(head_dim);
  const size_t t0 = first_span * span;
  const size_t t1 = HWY_MIN(n_pos, (first_span + num_spans) * span);
  // Scores, each span's maximum kept as it goes (in the partial's m).
  const size_t row_bytes = n_kv * head_dim * Cache::kValueBytes;
  for (size_t t = t0; t < t1; ++t) {
    const uintptr_t v_row = reinterpret_cast<uintptr_t>(cache.ValueRow(t));
    for (uintptr_t line = 0; a.prefetch_values && line < row_bytes; line += 64) {
      __builtin_prefetch(reinterpret_cast<const void*>(v_row + line), 0, 2);
    }
    float* HWY_RESTRICT m = partial + t / span * n_heads * stride + head_dim;
    const bool first = t % span == 0;
    for (size_t kv = 0; kv < n_kv; ++kv) {
      for (size_t h = kv * group; h < (kv + 1) * group; ++h) {
        float score = cache.Score(t, kv, h) * a.scale;
        if (a.softcap > 0.0f) score = a.softcap * std::tanh(score / a.softcap);
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
  const typename Cache::D d;
  const size_t N = hn::Lanes(d);
  const size_t body = head_dim - head_dim % N;
  for (size_t b0 = t0, b1; b0 < t1 && body > 0; b0 = b1) {
    const size_t c = b0 / span;
    const bool first_block = b0 == c * span;
    b1 = HWY_MIN(HWY_MIN(t1, b0 + kBlock), (c + 1) * span);
    for (size_t kv = 0; kv < n_kv; ++kv) {
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
            a0 = hn::MulAdd(hn::Set(d, p[t] * cache.ValueScale(t, kv, i)),
                            cache.LoadValues(d, t, kv, i), a0);
            a1 = hn::MulAdd(hn::Set(d, p[t] * cache.ValueScale(t, kv, i + N)),
                            cache.LoadValues(d, t, kv, i + N), a1);
            a2 = hn::MulAdd(hn::Set(d, p[t] * cache.ValueScale(t, kv, i + 2 * N)),
                            cache.LoadValues(d, t, kv, i + 2 * N), a2);
            a3 = hn::MulAdd(hn::Set(d, p[t] * cache.ValueScale(t, kv, i + 3 * N)),
                            cache.LoadValues(d, t, kv, i + 3 * N), a3);
          }
          hn::StoreU(a0, d, o + i);
          hn::StoreU(a1, d, o + i + N);
          hn::StoreU(a2, d, o + i + 2 * N);
          hn::StoreU(a3, d, o + i + 3 * N);
        }
        for (; i < body; i += N) {
          auto acc = first_block ? hn::Zero(d) : hn::LoadU(d, o + i);
          for (size_t t = b0; t < b1; ++t) {
            acc = hn::MulAdd(hn::Set(d, p[t] * cache.ValueScale(t, kv, i)),
                             cache.LoadValues(d, t, kv, i), acc);
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
        float acc = 0.0f;
        for (size_t t = c0; t < c1; ++t) {
          acc += p[t] * cache.ValueScale(t, kv, i) * cache.Value(t, kv, i);
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
  EMBER_DCHECK(a.group >= 1 && a.n_heads % a.group == 0 && a.head_dim >= 1);
  EMBER_DCHECK(a.span >= 1 && a.num_spans >= 1 && a.first_span * a.span < a.n_pos);
  EMBER_DCHECK(a.kv_stride >= a.n_heads / a.group * a.head_dim &&
               a.probs_stride >= a.n_pos);
  EMBER_DCHECK(
      a.first_row + a.n_pos <= a.ring_end ||
      (a.first_row < a.ring_end && a.ring_rows >= a.n_pos && a.ring_rows <= a.ring_end));
  constexpr size_t kRunBytes = size_t{256} << 10;
  const size_t span_bytes =
      a.span * a.n_heads / a.group * a.head_dim * Cache::kValueBytes;
  const size_t run = span_bytes >= kRunBytes ? 1 : kRunBytes / span_bytes;
  for (size_t c = a.first_span; c < a.first_span + a.num_spans; c += run) {
    const size_t n = HWY_MIN(run, a.first_span + a.num_spans - c);
    AttendSpanRun(cache, a, c, n, probs, partial);
  }
}

// AttendSpansFn, AttendSpansF16Fn, AttendSpansQ8Fn (kernel_table.h).
inline void AttendSpans(const float* HWY_RESTRICT q, const float* HWY_RESTRICT keys,
                        const float* HWY_RESTRICT values, const AttendSpansArgs& a,
                        float* HWY_RESTRICT probs, float* HWY_RESTRICT partial) {
  AttendSpansOf(DenseCache<F32Rows>{q, keys, values, a.kv_stride, a.head_dim,
                                    RingRows{a.first_row, a.ring_end, a.ring_rows}},
                a, probs, partial);
}

inline void AttendSpansF16(const float* HWY_RESTRICT q, const uint16_t* HWY_RESTRICT keys,
                           const uint16_t* HWY_RESTRICT values, const AttendSpansArgs& a,
                           float* HWY_RESTRICT probs, float* HWY_RESTRICT partial) {
  AttendSpansOf(DenseCache<F16Rows>{q, keys, values, a.kv_stride, a.head_dim,
                                    RingRows{a.first_row, a.ring_end, a.ring_rows}},
                a, probs, partial);
}

inline void AttendSpansQ8(
    const int8_t* HWY_RESTRICT q, const float* HWY_RESTRICT q_scales,
    const int8_t* HWY_RESTRICT keys, const float* HWY_RESTRICT key_scales,
    const int8_t* HWY_RESTRICT values, const float* HWY_RESTRICT value_scales,
    const AttendSpansArgs& a, float* HWY_RESTRICT probs, float* HWY_RESTRICT partial) {
  EMBER_DCHECK(a.scale_stride >= a.n_heads / a.group * KvGroups(a.head_dim));
  AttendSpansOf(Q8Cache{q, q_scales, keys, key_scales, values, value_scales, a.kv_stride,
                        a.scale_stride, a.head_dim, KvGroups(a.head_dim),
                        RingRows{a.first_row, a.ring_end, a.ring_rows}},
                a, probs, partial);
}

// QuantizeKvFn (kernel_table.h): per group, the absmax, s = absmax / 127 and
// round(x / s) as QuantizeActs computes them (a division, ties to even).
inline void QuantizeKv(const float* HWY_RESTRICT x, size_t n_heads, size_t head_dim,
                       size_t head_stride, int8_t* HWY_RESTRICT q,
                       float* HWY_RESTRICT scales) {
  const size_t groups = KvGroups(head_dim);
  const bool padded = head_stride >= groups * kKvGroup;
  for (size_t h = 0; h < n_heads; ++h) {
    for (size_t g = 0; g < groups; ++g) {
      const size_t begin = g * kKvGroup;
      const size_t n = HWY_MIN(kKvGroup, head_dim - begin);
      const float* HWY_RESTRICT xg = x + h * head_dim + begin;
      HWY_ALIGN float buf[kKvGroup];
      if (n < kKvGroup) {  // a short last group: zero padded
        memset(buf, 0, sizeof(buf));
        memcpy(buf, xg, n * sizeof(float));
        xg = buf;
      }
      HWY_ALIGN int8_t out[kKvGroup];
      int32_t sum;
      scales[h * groups + g] = QuantizeGroup32(xg, out, &sum);
      memcpy(q + h * head_stride + begin, out, padded ? kKvGroup : n);
    }
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
