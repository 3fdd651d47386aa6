// Per-target attention of one token's query heads over the cached keys and values.
#if defined(EMBER_KERNELS_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_ATTENTION_INL_H_
#undef EMBER_KERNELS_ATTENTION_INL_H_
#else
#define EMBER_KERNELS_ATTENTION_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/elementwise-inl.h"
#include "kernels/matvec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// AttendHeadsFn (kernel_table.h): heads [first_head, first_head + num_heads) of one
// token. The cache is read position by position, each position's row once per pass for
// all the heads of the range (with all heads: one contiguous forward stream), rather
// than one strided walk per head. Each head's arithmetic is the same whatever the
// range, so any split of the heads gives identical results: probs[t] =
// scale * dot(K[t], q) (DotRow), a softmax, then out = sum_t probs[t] V[t] accumulated
// over t in order from zero.
inline void AttendHeads(const float* HWY_RESTRICT q, const float* HWY_RESTRICT keys,
                        const float* HWY_RESTRICT values, size_t kv_stride, size_t n_pos,
                        size_t head_dim, size_t group, size_t first_head,
                        size_t num_heads, float scale, float* HWY_RESTRICT probs,
                        size_t probs_stride, float* HWY_RESTRICT out) {
  const size_t last_head = first_head + num_heads;
  const size_t first_kv = first_head / group, last_kv = (last_head - 1) / group;
  // Query heads [head_begin(kv), head_end(kv)) of the range read KV head kv.
  const auto head_begin = [&](size_t kv) { return HWY_MAX(first_head, kv * group); };
  const auto head_end = [&](size_t kv) { return HWY_MIN(last_head, (kv + 1) * group); };

  for (size_t t = 0; t < n_pos; ++t) {
    for (size_t kv = first_kv; kv <= last_kv; ++kv) {
      const float* HWY_RESTRICT key = keys + t * kv_stride + kv * head_dim;
      for (size_t h = head_begin(kv); h < head_end(kv); ++h) {
        probs[(h - first_head) * probs_stride + t] =
            DotRow(key, q + h * head_dim, head_dim) * scale;
      }
    }
  }
  for (size_t i = 0; i < num_heads; ++i) Softmax(probs + i * probs_stride, n_pos);

  // out: blocks of kBlock positions, each head's partial sums kept in registers over a
  // block and in `out` between blocks (the same chain of MulAdds as one loop over t).
  constexpr size_t kBlock = 8;
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = head_dim - head_dim % N;
  for (size_t t0 = 0; t0 < n_pos && body > 0; t0 += kBlock) {
    const size_t t1 = HWY_MIN(n_pos, t0 + kBlock);
    for (size_t kv = first_kv; kv <= last_kv; ++kv) {
      const float* HWY_RESTRICT v = values + kv * head_dim;
      for (size_t h = head_begin(kv); h < head_end(kv); ++h) {
        const float* HWY_RESTRICT p = probs + (h - first_head) * probs_stride;
        float* HWY_RESTRICT o = out + h * head_dim;
        for (size_t i = 0; i < body; i += N) {
          auto acc = t0 == 0 ? hn::Zero(d) : hn::LoadU(d, o + i);
          for (size_t t = t0; t < t1; ++t) {
            acc = hn::MulAdd(hn::Set(d, p[t]), hn::LoadU(d, v + t * kv_stride + i), acc);
          }
          hn::StoreU(acc, d, o + i);
        }
      }
    }
  }
  // The columns no whole vector covers (small heads), per head as the reference does.
  for (size_t h = first_head; h < last_head; ++h) {
    const float* HWY_RESTRICT p = probs + (h - first_head) * probs_stride;
    const float* HWY_RESTRICT v = values + h / group * head_dim;
    for (size_t i = body; i < head_dim; ++i) {
      float acc = 0.0f;
      for (size_t t = 0; t < n_pos; ++t) acc += p[t] * v[t * kv_stride + i];
      out[h * head_dim + i] = acc;
    }
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_ATTENTION_INL_H_
