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

// The current Highway target's features and AVX-512 VNNI (used on AVX3_DL alone).
#ifndef EMBER_AVX512_VNNI
#define EMBER_AVX512_VNNI __attribute__((target(HWY_TARGET_STR ",avx512vnni")))
#endif

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ExpMinusSum, compiled once for the spans and the merge (the vector exp is most of
// the attention code's size, which counts on a microcontroller).
inline HWY_NOINLINE float SpanExp(float* HWY_RESTRICT x, size_t n, float max) {
  return ExpMinusSum(x, n, max);
}

// How each cache type is read: Score(t, kv, h) = dot(K[t] of KV head kv, q_h) (q8 also
// Scores(t, ...): every head's of position t at once), and the values of position t as
// Row r = RowOf(t): columns [v, v + Lanes(D)) of the row as LoadAt(d, r, v) (one
// column: ValueAt(r, v)) times ScaleAt(r, g) of their group g. f32 and f16 have no scale
// (1, which the compiler folds: the f32 kernel computes exactly p[t] * V[t]).
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
    return DotRow<F16Format>(k, q, n);
  }
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const uint16_t* HWY_RESTRICT p) {
    return F16Format::Load(d, p);
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
  static constexpr bool kRowScores = false;
  const void* ValueRow(size_t t) const { return values + row(t) * kv_stride; }
  // A position's values, read by the weighted sum: LoadAt(d, RowOf(t), v) the values
  // [v, v + Lanes(d)) of the row (v = kv * head_dim + i), ScaleAt(row, g) the scale of
  // group g of the row (kv * GroupsPerHead(head_dim) + i / kKvGroup): 1 here.
  struct Row {
    const T* HWY_RESTRICT values;
  };
  static size_t GroupsPerHead(size_t) { return 0; }
  HWY_INLINE Row RowOf(size_t t) const { return Row{values + row(t) * kv_stride}; }
  template <class DV>
  HWY_INLINE hn::Vec<DV> LoadAt(DV d, const Row& r, size_t v) const {
    return Rows::Load(d, r.values + v);
  }
  HWY_INLINE float ScaleAt(const Row&, size_t) const { return 1.0f; }
  HWY_INLINE float ValueAt(const Row& r, size_t v) const {
    return Rows::ToFloat(r.values[v]);
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
  size_t kv_stride, scale_stride, head_dim, groups, n_kv;
  RingRows row;
  static constexpr size_t kValueBytes = sizeof(int8_t);
  static constexpr bool kRowScores = true;

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
#if HWY_TARGET == HWY_AVX3_DL
  // With AVX-512 VNNI, heads of whole 64-byte chunks (head_dim % 64 == 0) and the query
  // prepared by AttendSpansQ8: every head's score of position t from its key row at
  // once (ScoresVnni).
  // Per query head j of a KV head, in the key row's n_kv * groups groups: the query's
  // values (q itself when group is 1), each group's sum and scale.
  const int8_t* HWY_RESTRICT q_rows = nullptr;
  const int32_t* HWY_RESTRICT q_sums = nullptr;
  const float* HWY_RESTRICT q_row_scales = nullptr;
#endif
  HWY_INLINE void Scores(size_t t, size_t n_kv, size_t group, float* HWY_RESTRICT out,
                         size_t out_stride) const {
#if HWY_TARGET == HWY_AVX3_DL
    if (q_sums != nullptr) return ScoresVnni(t, group, out, out_stride);
#endif
    for (size_t kv = 0, h = 0; kv < n_kv; ++kv) {
      for (size_t end = h + group; h < end; ++h) out[h * out_stride] = Score(t, kv, h);
    }
  }
#if HWY_TARGET == HWY_AVX3_DL
  // Each 64-byte chunk of the key row, +128 as unsigned bytes (xor 0x80), times the
  // query head's bytes (signed) by vpdpbusd: 16 int32 lanes, 8 per group. Eight chunks'
  // lanes are then summed to their 16 groups (two levels of unpack and add, one of
  // 128-bit blocks, a permute to group order), less 128 x the query group's sum: each
  // group's exact int32 dot. Times both scales, summed per head.
  // (Highway 1.0.3's AVX3_DL target selects CPUs with AVX-512 VNNI but does not
  // compile for it: hence the attribute.)
  static EMBER_AVX512_VNNI HWY_INLINE __m512i DotChunk(const int8_t* HWY_RESTRICT key,
                                                       const int8_t* HWY_RESTRICT q) {
    const __m512i k = _mm512_xor_si512(_mm512_loadu_si512(key),
                                       _mm512_set1_epi8(static_cast<char>(0x80)));
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), k, _mm512_loadu_si512(q));
  }
  EMBER_AVX512_VNNI HWY_NOINLINE void ScoresVnni(size_t t, size_t group,
                                                 float* HWY_RESTRICT out,
                                                 size_t out_stride) const {
    const size_t r = row(t);
    const int8_t* HWY_RESTRICT key = keys + r * kv_stride;
    const float* HWY_RESTRICT ks = key_scales + r * scale_stride;
    const size_t head_groups = groups, row_groups = n_kv * groups,
                 chunks = row_groups / 2;
    const size_t heads_per_batch = 16 / head_groups;  // head_groups divides 16
    const __m512i order =
        _mm512_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15);
    for (size_t j = 0; j < group; ++j) {
      const int8_t* HWY_RESTRICT qj = q_rows + j * row_groups * kKvGroup;
      for (size_t c0 = 0; c0 < chunks; c0 += 8) {
        const int8_t* HWY_RESTRICT kc = key + 64 * c0;
        const int8_t* HWY_RESTRICT qc = qj + 64 * c0;
        const size_t left = chunks - c0;  // chunks past the row's end are zero
        const __m512i v[8] = {
            DotChunk(kc, qc),
            left > 1 ? DotChunk(kc + 64, qc + 64) : _mm512_setzero_si512(),
            left > 2 ? DotChunk(kc + 128, qc + 128) : _mm512_setzero_si512(),
            left > 3 ? DotChunk(kc + 192, qc + 192) : _mm512_setzero_si512(),
            left > 4 ? DotChunk(kc + 256, qc + 256) : _mm512_setzero_si512(),
            left > 5 ? DotChunk(kc + 320, qc + 320) : _mm512_setzero_si512(),
            left > 6 ? DotChunk(kc + 384, qc + 384) : _mm512_setzero_si512(),
            left > 7 ? DotChunk(kc + 448, qc + 448) : _mm512_setzero_si512()};
        const auto pairs = [](__m512i a, __m512i b) {
          return _mm512_add_epi32(_mm512_unpacklo_epi32(a, b),
                                  _mm512_unpackhi_epi32(a, b));
        };
        const auto quads = [](__m512i a, __m512i b) {
          return _mm512_add_epi32(_mm512_unpacklo_epi64(a, b),
                                  _mm512_unpackhi_epi64(a, b));
        };
        const __m512i t0 = quads(pairs(v[0], v[1]), pairs(v[2], v[3]));
        const __m512i t1 = quads(pairs(v[4], v[5]), pairs(v[6], v[7]));
        __m512i sums =
            _mm512_add_epi32(_mm512_shuffle_i32x4(t0, t1, _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_i32x4(t0, t1, _MM_SHUFFLE(3, 1, 3, 1)));
        sums = _mm512_permutexvar_epi32(order, sums);
        const size_t g0 = 2 * c0, n = HWY_MIN(size_t{16}, row_groups - g0);
        const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1);
        const size_t qrow = j * row_groups + g0;
        sums = _mm512_sub_epi32(
            sums, _mm512_slli_epi32(_mm512_maskz_loadu_epi32(mask, q_sums + qrow), 7));
        const __m512 dots = _mm512_mul_ps(
            _mm512_mul_ps(_mm512_cvtepi32_ps(sums), _mm512_maskz_loadu_ps(mask, ks + g0)),
            _mm512_maskz_loadu_ps(mask, q_row_scales + qrow));
        HWY_ALIGN float d[16];
        _mm512_store_ps(d, dots);
        for (size_t g = 0, h = (c0 / 8) * heads_per_batch * group + j; g < n;
             g += head_groups, h += group) {
          float sum = d[g];
          for (size_t i = 1; i < head_groups; ++i) sum += d[g + i];
          out[h * out_stride] = sum;
        }
      }
    }
  }
#endif
  const void* KeyRow(size_t t) const { return keys + row(t) * kv_stride; }
  const void* KeyScaleRow(size_t t) const { return key_scales + row(t) * scale_stride; }
  const void* ValueScaleRow(size_t t) const {
    return value_scales + row(t) * scale_stride;
  }
  size_t scale_bytes() const { return n_kv * groups * sizeof(float); }
  const void* ValueRow(size_t t) const { return values + row(t) * kv_stride; }
  struct Row {
    const int8_t* HWY_RESTRICT values;
    const float* HWY_RESTRICT scales;
  };
  static size_t GroupsPerHead(size_t head_dim) { return KvGroups(head_dim); }
  HWY_INLINE Row RowOf(size_t t) const {
    const size_t r = row(t);
    return Row{values + r * kv_stride, value_scales + r * scale_stride};
  }
  template <class DV>
  HWY_INLINE hn::Vec<DV> LoadAt(DV d, const Row& r, size_t v) const {
    const hn::Rebind<int8_t, DV> d8;
    const hn::Rebind<int32_t, DV> di;
    return hn::ConvertTo(d, hn::PromoteTo(di, hn::LoadU(d8, r.values + v)));
  }
  HWY_INLINE float ScaleAt(const Row& r, size_t g) const { return r.scales[g]; }
  HWY_INLINE float ValueAt(const Row& r, size_t v) const {
    return static_cast<float>(r.values[v]);
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

// Prefetches the lines of bytes [row, row + bytes) to L1 (locality 3) or L2 (2).
template <int kLocality>
HWY_INLINE void PrefetchLines(const void* row, size_t bytes) {
  const char* line =
      reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(row) & ~uintptr_t{63});
  const char* end = static_cast<const char*>(row) + bytes;
  for (; line + 192 < end; line += 256) {  // four lines a step
    __builtin_prefetch(line, 0, kLocality);
    __builtin_prefetch(line + 64, 0, kLocality);
    __builtin_prefetch(line + 128, 0, kLocality);
    __builtin_prefetch(line + 192, 0, kLocality);
  }
  for (; line < end; line += 64) __builtin_prefetch(line, 0, kLocality);
}

// A q8 cache in DRAM (decode): while the scores read position t, its values and value
// scales are prefetched to L2 (the weighted sum reads them after the run's scores) and
// the keys and key scales of position t + kKeysAhead to L1 (past the run: the runtime
// gives two threads a span of 64 positions at a time). Attention over a 1024-position q8
// cache in DRAM, in a harness: 4.4 ms a token for 36 layers with values alone
// prefetched (every key as the hardware fetched it), 2.9 with both. (Dense caches
// prefetch their values alone: f32 keys prefetched too were slower.)
constexpr size_t kKeysAhead = 16;
template <class Cache>
HWY_INLINE void PrefetchRows(const Cache& cache, size_t t, size_t n_pos,
                             size_t row_bytes) {
  PrefetchLines<2>(cache.ValueRow(t), row_bytes);
  PrefetchLines<2>(cache.ValueScaleRow(t), cache.scale_bytes());
  if (t + kKeysAhead >= n_pos) return;
  PrefetchLines<3>(cache.KeyRow(t + kKeysAhead), row_bytes);
  PrefetchLines<3>(cache.KeyScaleRow(t + kKeysAhead), cache.scale_bytes());
}

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
  // Scores. A q8 cache (kRowScores): every head's raw dot of a position at once
  // (Scores), then per span and head scaled (soft-capped), their maximum (the partial's
  // m) and exp(s - m). Dense caches keep one loop per head: with the q8 cache's form
  // their decode at depth 1024 was 6 % slower (ember bench, f32, medians of 5 runs:
  // 151.2 against 159.9 tokens/s).
  const size_t row_bytes = n_kv * head_dim * Cache::kValueBytes;
  if constexpr (Cache::kRowScores) {
    for (size_t t = t0; t < t1; ++t) {
      if (a.prefetch_values) PrefetchRows(cache, t, n_pos, row_bytes);
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
    for (size_t t = t0; t < t1; ++t) {
      // (The values' lines one by one: PrefetchLines here measured 3 % slower for f32.)
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
  Q8Cache cache{q,
                q_scales,
                keys,
                key_scales,
                values,
                value_scales,
                a.kv_stride,
                a.scale_stride,
                a.head_dim,
                KvGroups(a.head_dim),
                a.n_heads / a.group,
                RingRows{a.first_row, a.ring_end, a.ring_rows}};
#if HWY_TARGET == HWY_AVX3_DL
  // The query in the key row's order of groups, per query head of a KV head: its groups'
  // sums (the +128 bias's correction) and scales.
  constexpr size_t kMaxGroups = 256;
  HWY_ALIGN int32_t q_sums[kMaxGroups];
  HWY_ALIGN float q_row_scales[kMaxGroups];
  HWY_ALIGN int8_t q_rows[kMaxGroups * kKvGroup];
  const size_t groups = cache.groups, n_groups = a.n_heads * groups;
  if (a.head_dim % 64 == 0 && a.head_dim <= 512 && n_groups <= kMaxGroups) {
    const size_t n_kv = a.n_heads / a.group;
    for (size_t j = 0; j < a.group; ++j) {
      for (size_t g = 0; g < n_kv * groups; ++g) {
        const size_t h = g / groups * a.group + j, hg = h * groups + g % groups;
        int32_t sum = 0;
        for (size_t i = 0; i < kKvGroup; ++i) sum += q[hg * kKvGroup + i];
        const size_t rg = j * n_kv * groups + g;
        q_sums[rg] = sum;
        q_row_scales[rg] = q_scales[hg];
        if (a.group > 1) memcpy(q_rows + rg * kKvGroup, q + hg * kKvGroup, kKvGroup);
      }
    }
    cache.q_rows = a.group > 1 ? q_rows : q;
    cache.q_sums = q_sums;
    cache.q_row_scales = q_row_scales;
  }
#endif
  AttendSpansOf(cache, a, probs, partial);
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
