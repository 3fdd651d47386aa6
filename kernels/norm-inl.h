// Per-target RMSNorm and LayerNorm over one vector.
#if defined(EMBER_KERNELS_NORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_NORM_INL_H_
#undef EMBER_KERNELS_NORM_INL_H_
#else
#define EMBER_KERNELS_NORM_INL_H_
#endif

#include <cmath>

#include "hwy/highway.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = (x[i] - shift) * scale * weight[i] (+ bias[i])
HWY_INLINE void ScaleShift(const float* HWY_RESTRICT x, float shift, float scale,
                           const float* HWY_RESTRICT weight,
                           const float* HWY_RESTRICT bias, float* HWY_RESTRICT out,
                           size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const auto vshift = hn::Set(d, shift);
  const auto vscale = hn::Set(d, scale);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    auto v = hn::Mul(hn::Mul(hn::Sub(hn::LoadU(d, x + i), vshift), vscale),
                     hn::LoadU(d, weight + i));
    if (bias) v = hn::Add(v, hn::LoadU(d, bias + i));
    hn::StoreU(v, d, out + i);
  }
  for (; i < n; ++i) {
    float v = (x[i] - shift) * scale * weight[i];
    if (bias) v += bias[i];
    out[i] = v;
  }
}

// out = x / sqrt(mean(x^2) + eps) * weight
inline void RmsNorm(const float* HWY_RESTRICT x, const float* HWY_RESTRICT weight,
                    float eps, float* HWY_RESTRICT out, size_t n) {
  const hn::ScalableTag<float> d;
  const float sum_sq = SumTransformed(d, x, n, [](auto v) { return hn::Mul(v, v); });
  const float scale = 1.0f / std::sqrt(sum_sq / static_cast<float>(n) + eps);
  ScaleShift(x, 0.0f, scale, weight, nullptr, out, n);
}

// In place, each of `rows` rows of n values: x = x / sqrt(mean(x^2) + eps) * weight
// (the per-head norm of q and k: one weight vector for every head), in RmsNorm's
// arithmetic.
inline void RmsNormRows(float* HWY_RESTRICT x, const float* HWY_RESTRICT weight,
                        float eps, size_t rows, size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  for (size_t r = 0; r < rows; ++r) {
    float* HWY_RESTRICT row = x + r * n;
    const float sum_sq = SumTransformed(d, row, n, [](auto v) { return hn::Mul(v, v); });
    const float scale = 1.0f / std::sqrt(sum_sq / static_cast<float>(n) + eps);
    const auto vscale = hn::Set(d, scale);
    size_t i = 0;
    for (; i + N <= n; i += N) {
      const auto v = hn::Mul(hn::LoadU(d, row + i), vscale);
      hn::StoreU(hn::Mul(v, hn::LoadU(d, weight + i)), d, row + i);
    }
    for (; i < n; ++i) row[i] = row[i] * scale * weight[i];
  }
}

// out = (x - mean) / sqrt(var + eps) * weight + bias, var the biased variance
// (two passes: exact for inputs with a large mean).
inline void LayerNorm(const float* HWY_RESTRICT x, const float* HWY_RESTRICT weight,
                      const float* HWY_RESTRICT bias, float eps, float* HWY_RESTRICT out,
                      size_t n) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const float mean = SumTransformed(d, x, n, [](auto v) { return v; }) / n;
  const auto vmean = hn::Set(d, mean);
  auto acc = hn::Zero(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto c = hn::Sub(hn::LoadU(d, x + i), vmean);
    acc = hn::MulAdd(c, c, acc);
  }
  float var = ReduceSum(d, acc);
  for (; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  const float scale = 1.0f / std::sqrt(var / static_cast<float>(n) + eps);
  ScaleShift(x, mean, scale, weight, bias, out, n);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_NORM_INL_H_
