// Per-target attention over q8 cache rows (int8 keys and values with a scale per group
// of kKvGroup): integer scores against the query in the same encoding (a key row's
// scores for every head at once with AVX-512 VNNI), values widened and scaled per group;
// and the q8 encoding of rows and queries.
#if defined(EMBER_KERNELS_ATTENTION_Q8_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_ATTENTION_Q8_INL_H_
#undef EMBER_KERNELS_ATTENTION_Q8_INL_H_
#else
#define EMBER_KERNELS_ATTENTION_Q8_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"
#include "kernels/attention.h"
#include "kernels/attention_spans-inl.h"
#include "kernels/dcheck.h"
#include "kernels/vec-inl.h"

// The current Highway target's features and AVX-512 VNNI (used on AVX3_DL alone).
#ifndef EMBER_AVX512_VNNI
#define EMBER_AVX512_VNNI __attribute__((target(HWY_TARGET_STR ",avx512vnni")))
#endif

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

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
  static constexpr size_t kKeysAhead = 16;  // positions (Prefetch)

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
  // In DRAM (decode): while the scores read position t, its values and value scales
  // are prefetched to L2 (the weighted sum reads them after the run's scores) and the
  // keys and key scales of position t + kKeysAhead to L1 (past the run: the runtime
  // gives two threads a span of 64 positions at a time). Attention over a 1024-position
  // q8 cache in DRAM, in a harness: 4.4 ms a token for 36 layers with values alone
  // prefetched (every key as the hardware fetched it), 2.9 with both. (Dense caches
  // prefetch their values alone: f32 keys prefetched too were slower.)
  HWY_INLINE void Prefetch(size_t t, size_t n_pos, size_t row_bytes) const {
    const size_t scale_bytes = n_kv * groups * sizeof(float);
    PrefetchLines<2>(values + row(t) * kv_stride, row_bytes);
    PrefetchLines<2>(value_scales + row(t) * scale_stride, scale_bytes);
    if (t + kKeysAhead >= n_pos) return;
    PrefetchLines<3>(keys + row(t + kKeysAhead) * kv_stride, row_bytes);
    PrefetchLines<3>(key_scales + row(t + kKeysAhead) * scale_stride, scale_bytes);
  }
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

// AttendSpansFn (attention.h) over q8 rows.
inline HWY_NOINLINE void AttendSpansQ8(const KvRows& kv, const AttendQuery& query,
                                       const AttendSpansArgs& a,
                                       float* HWY_RESTRICT probs,
                                       float* HWY_RESTRICT partial) {
  EMBER_DCHECK(kv.scale_stride >= a.n_heads / a.group * KvGroups(a.head_dim));
  const int8_t* HWY_RESTRICT q = query.q8;
  const float* HWY_RESTRICT q_scales = query.q8_scales;
  Q8Cache cache{q,
                q_scales,
                static_cast<const int8_t*>(kv.keys),
                kv.key_scales,
                static_cast<const int8_t*>(kv.values),
                kv.value_scales,
                kv.kv_stride,
                kv.scale_stride,
                a.head_dim,
                KvGroups(a.head_dim),
                a.n_heads / a.group,
                RingRows{a.first_row, kv.ring_end, kv.ring_rows}};
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

// QuantizeKvFn (attention.h): per group, the absmax, s = absmax / 127 and
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

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_ATTENTION_Q8_INL_H_
