// Per-target attention of one token's query heads over one layer's cached keys and
// values, in spans of positions that a merge combines (attention_spans-inl.h): the
// kernel entry for any cache type (KvRows), the dense f32 and f16 rows here, the q8 rows
// in attention_q8-inl.h.
#if defined(EMBER_KERNELS_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_ATTENTION_INL_H_
#undef EMBER_KERNELS_ATTENTION_INL_H_
#else
#define EMBER_KERNELS_ATTENTION_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "kernels/attention.h"
#include "kernels/attention_q8-inl.h"
#include "kernels/attention_spans-inl.h"
#include "kernels/dcheck.h"
#include "kernels/matvec-inl.h"
#include "kernels/matvec16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Dense rows of f32 (Format F32Format), or of f16 widened to f32 in registers (F16Format:
// vcvtph2ps with F16C), read as matvec-inl.h's dot products read a row.
template <class Format>
struct DenseCache {
  using D = hn::ScalableTag<float>;
  using T = typename Format::T;
  const float* HWY_RESTRICT q;
  const T* HWY_RESTRICT keys;
  const T* HWY_RESTRICT values;
  size_t kv_stride, head_dim;
  RingRows row;
  static constexpr size_t kValueBytes = sizeof(T);

  HWY_INLINE float Score(size_t t, size_t kv, size_t h) const {
    return DotRow<Format>(keys + row(t) * kv_stride + kv * head_dim, q + h * head_dim,
                          head_dim);
  }
  // Score of positions t..t+3 at once (each exactly Score's): four chains in flight.
  HWY_INLINE void Score4(size_t t, size_t kv, size_t h, float* HWY_RESTRICT out) const {
    const T* k = keys + kv * head_dim;
    DotRowsAt4<Format>(k + row(t) * kv_stride, k + row(t + 1) * kv_stride,
                       k + row(t + 2) * kv_stride, k + row(t + 3) * kv_stride,
                       q + h * head_dim, head_dim, out);
  }
  static constexpr bool kRowScores = false;
  // The values' lines one by one (PrefetchLines measured 3 % slower for f32); the keys
  // are left to the hardware prefetcher (f32 keys prefetched too were slower).
  HWY_INLINE void Prefetch(size_t t, size_t, size_t row_bytes) const {
    const uintptr_t v_row = reinterpret_cast<uintptr_t>(values + row(t) * kv_stride);
    for (uintptr_t line = 0; line < row_bytes; line += 64) {
      __builtin_prefetch(reinterpret_cast<const void*>(v_row + line), 0, 2);
    }
  }
  // No scales: ScaleAt is 1.
  struct Row {
    const T* HWY_RESTRICT values;
  };
  static size_t GroupsPerHead(size_t) { return 0; }
  HWY_INLINE Row RowOf(size_t t) const { return Row{values + row(t) * kv_stride}; }
  template <class DV>
  HWY_INLINE hn::Vec<DV> LoadAt(DV d, const Row& r, size_t v) const {
    return Format::Load(d, r.values + v);
  }
  HWY_INLINE float ScaleAt(const Row&, size_t) const { return 1.0f; }
  HWY_INLINE float ValueAt(const Row& r, size_t v) const {
    return Format::ToFloat(r.values[v]);
  }
};

// AttendSpansFn (attention.h) over f32 or f16 rows.
template <class Format>
HWY_NOINLINE void AttendSpansDense(const KvRows& kv, const AttendQuery& query,
                                   const AttendSpansArgs& a, float* HWY_RESTRICT probs,
                                   float* HWY_RESTRICT partial) {
  using T = typename Format::T;
  AttendSpansOf(
      DenseCache<Format>{query.q, static_cast<const T*>(kv.keys),
                         static_cast<const T*>(kv.values), kv.kv_stride, a.head_dim,
                         RingRows{a.first_row, kv.ring_end, kv.ring_rows}},
      a, probs, partial);
}

// AttendSpansFn (attention.h): the kernel for the rows' type.
inline void AttendSpans(const KvRows& kv, const AttendQuery& query,
                        const AttendSpansArgs& a, float* HWY_RESTRICT probs,
                        float* HWY_RESTRICT partial) {
  EMBER_DCHECK(a.group >= 1 && a.n_heads % a.group == 0 && a.head_dim >= 1);
  EMBER_DCHECK(a.span >= 1 && a.num_spans >= 1 && a.first_span * a.span < a.n_pos);
  EMBER_DCHECK(kv.kv_stride >= a.n_heads / a.group * a.head_dim &&
               a.probs_stride >= a.n_pos);
  EMBER_DCHECK(a.first_row + a.n_pos <= kv.ring_end ||
               (a.first_row < kv.ring_end && kv.ring_rows >= a.n_pos &&
                kv.ring_rows <= kv.ring_end));
  switch (kv.type) {
    case KvType::kF32:
      return AttendSpansDense<F32Format>(kv, query, a, probs, partial);
    case KvType::kF16:
      return AttendSpansDense<F16Format>(kv, query, a, probs, partial);
    case KvType::kQ8:
      return AttendSpansQ8(kv, query, a, probs, partial);
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_ATTENTION_INL_H_
