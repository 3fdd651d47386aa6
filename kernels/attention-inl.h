// Per-target attention of one query head over the cached keys and values.
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

// probs = softmax(scale * K q) over n_pos positions; out = sum_t probs[t] V[t].
inline void Attend(const float* HWY_RESTRICT q, const float* HWY_RESTRICT keys,
                   const float* HWY_RESTRICT values, size_t kv_stride, size_t n_pos,
                   size_t head_dim, float scale, float* HWY_RESTRICT probs,
                   float* HWY_RESTRICT out) {
  for (size_t t = 0; t < n_pos; ++t) {
    probs[t] = DotRow(keys + t * kv_stride, q, head_dim) * scale;
  }
  Softmax(probs, n_pos);

  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = head_dim - head_dim % N;
  for (size_t i = 0; i < body; i += N) {
    auto acc = hn::Zero(d);
    for (size_t t = 0; t < n_pos; ++t) {
      acc =
          hn::MulAdd(hn::Set(d, probs[t]), hn::LoadU(d, values + t * kv_stride + i), acc);
    }
    hn::StoreU(acc, d, out + i);
  }
  for (size_t i = body; i < head_dim; ++i) {
    float acc = 0.0f;
    for (size_t t = 0; t < n_pos; ++t) acc += probs[t] * values[t * kv_stride + i];
    out[i] = acc;
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_ATTENTION_INL_H_
