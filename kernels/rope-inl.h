// Per-target rotary position embedding (tables from RopeTables, kernels/rope.h).
#if defined(EMBER_KERNELS_ROPE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_ROPE_INL_H_
#undef EMBER_KERNELS_ROPE_INL_H_
#else
#define EMBER_KERNELS_ROPE_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/dcheck.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Pairs (2i, 2i+1): x = x cos_x + swap_pairs(x) sin_x.
inline void RopeInterleaved(float* HWY_RESTRICT x, const float* HWY_RESTRICT cos_x,
                            const float* HWY_RESTRICT sin_x, size_t n_heads,
                            size_t head_dim) {
  EMBER_DCHECK(head_dim % 2 == 0);
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  // A one-lane target cannot swap within a vector; its body is empty.
  const size_t body = N >= 2 ? head_dim - head_dim % N : 0;
  for (size_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (size_t j = 0; j < body; j += N) {
      const auto a = hn::LoadU(d, v + j);
      const auto swapped = hn::Reverse2(d, a);
      const auto r = hn::MulAdd(a, hn::LoadU(d, cos_x + j),
                                hn::Mul(swapped, hn::LoadU(d, sin_x + j)));
      hn::StoreU(r, d, v + j);
    }
    for (size_t j = body; j + 1 < head_dim; j += 2) {
      const float a = v[j], b = v[j + 1];
      v[j] = a * cos_x[j] + b * sin_x[j];
      v[j + 1] = b * cos_x[j + 1] + a * sin_x[j + 1];
    }
  }
}

// Pairs (i, i + head_dim/2), Hugging Face rotate_half.
inline void RopeHalf(float* HWY_RESTRICT x, const float* HWY_RESTRICT cos_x,
                     const float* HWY_RESTRICT sin_x, size_t n_heads, size_t head_dim) {
  EMBER_DCHECK(head_dim % 2 == 0);
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t half = head_dim / 2;
  const size_t body = half - half % N;
  for (size_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (size_t i = 0; i < body; i += N) {
      const auto a = hn::LoadU(d, v + i);
      const auto b = hn::LoadU(d, v + i + half);
      const auto ra =
          hn::MulAdd(a, hn::LoadU(d, cos_x + i), hn::Mul(b, hn::LoadU(d, sin_x + i)));
      const auto rb = hn::MulAdd(b, hn::LoadU(d, cos_x + i + half),
                                 hn::Mul(a, hn::LoadU(d, sin_x + i + half)));
      hn::StoreU(ra, d, v + i);
      hn::StoreU(rb, d, v + i + half);
    }
    for (size_t i = body; i < half; ++i) {
      const float a = v[i], b = v[i + half];
      v[i] = a * cos_x[i] + b * sin_x[i];
      v[i + half] = b * cos_x[i + half] + a * sin_x[i + half];
    }
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_ROPE_INL_H_
