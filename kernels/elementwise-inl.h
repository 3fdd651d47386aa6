// Per-target elementwise kernels: softmax, argmax, activations, residual add, gating
// multiply.
#if defined(EMBER_KERNELS_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_ELEMENTWISE_INL_H_
#undef EMBER_KERNELS_ELEMENTWISE_INL_H_
#else
#define EMBER_KERNELS_ELEMENTWISE_INL_H_
#endif

#include <limits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// x = exp(x - max) in place; returns the sum of the new x. A softmax without its
// division (attention merges spans of positions with it).
inline float ExpMinusSum(float* HWY_RESTRICT x, size_t n, float max) {
  const hn::ScalableTag<float> d;
  const auto vmax = hn::Set(d, max);
  TransformInPlace(d, x, n, [&](auto v) { return hn::Exp(d, hn::Sub(v, vmax)); });
  return SumTransformed(d, x, n, [](auto v) { return v; });
}

// x = exp(x - max) / sum(exp(x - max)), in place.
inline void Softmax(float* HWY_RESTRICT x, size_t n) {
  if (n == 0) return;
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  float max = x[0];
  size_t i = 0;
  if (n >= N) {
    auto vmax = hn::LoadU(d, x);
    for (i = N; i + N <= n; i += N) vmax = hn::Max(vmax, hn::LoadU(d, x + i));
    max = ReduceMax(d, vmax);
  }
  for (; i < n; ++i) max = x[i] > max ? x[i] : max;
  const float sum = ExpMinusSum(x, n, max);
  const auto inv = hn::Set(d, 1.0f / sum);
  TransformInPlace(d, x, n, [&](auto v) { return hn::Mul(v, inv); });
}

// *index = the first position of the largest value in x[0, n), n >= 1, NaNs skipped (0
// when every value is NaN). A pass for the maximum, then one for its first position.
inline void ArgMax(const float* HWY_RESTRICT x, size_t n, size_t* HWY_RESTRICT index) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const float lowest = -std::numeric_limits<float>::infinity();
  float max = lowest;
  size_t i = 0;
  if (n >= N) {
    auto vmax = hn::Set(d, lowest);
    for (; i + N <= n; i += N) {
      const auto v = hn::LoadU(d, x + i);
      vmax = hn::Max(vmax, hn::IfThenElse(hn::IsNaN(v), vmax, v));
    }
    max = ReduceMax(d, vmax);
  }
  for (; i < n; ++i) max = x[i] > max ? x[i] : max;
  const auto target = hn::Set(d, max);
  for (i = 0; i + N <= n; i += N) {
    const intptr_t lane = hn::FindFirstTrue(d, hn::Eq(hn::LoadU(d, x + i), target));
    if (lane >= 0) {
      *index = i + static_cast<size_t>(lane);
      return;
    }
  }
  for (; i < n; ++i) {
    if (x[i] == max) {
      *index = i;
      return;
    }
  }
  *index = 0;
}

// silu(x) = x / (1 + exp(-x))
inline void Silu(float* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<float> d;
  const auto one = hn::Set(d, 1.0f);
  TransformInPlace(
      d, x, n, [&](auto v) { return hn::Div(v, hn::Add(one, hn::Exp(d, hn::Neg(v)))); });
}

inline void Relu(float* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<float> d;
  TransformInPlace(d, x, n, [&](auto v) { return hn::ZeroIfNegative(v); });
}

// gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
inline void GeluTanh(float* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<float> d;
  const auto half = hn::Set(d, 0.5f);
  const auto one = hn::Set(d, 1.0f);
  const auto k0 = hn::Set(d, 0.7978845608028654f);  // sqrt(2/pi)
  const auto k1 = hn::Set(d, 0.044715f);
  TransformInPlace(d, x, n, [&](auto v) {
    const auto inner = hn::Mul(k0, hn::MulAdd(hn::Mul(k1, v), hn::Mul(v, v), v));
    return hn::Mul(hn::Mul(half, v), hn::Add(one, hn::Tanh(d, inner)));
  });
}

// gelu(x) = 0.5 x (1 + erf(x / sqrt(2))), with erf from Abramowitz & Stegun 7.1.26:
// erf(z) = 1 - (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) exp(-z^2), t = 1 / (1 + p z),
// z >= 0, |error| <= 1.5e-7; erf(-z) = -erf(z).
inline void GeluErf(float* HWY_RESTRICT x, size_t n) {
  const hn::ScalableTag<float> d;
  const auto half = hn::Set(d, 0.5f);
  const auto one = hn::Set(d, 1.0f);
  const auto inv_sqrt2 = hn::Set(d, 0.7071067811865476f);
  const auto p = hn::Set(d, 0.3275911f);
  const auto a1 = hn::Set(d, 0.254829592f);
  const auto a2 = hn::Set(d, -0.284496736f);
  const auto a3 = hn::Set(d, 1.421413741f);
  const auto a4 = hn::Set(d, -1.453152027f);
  const auto a5 = hn::Set(d, 1.061405429f);
  TransformInPlace(d, x, n, [&](auto v) {
    const auto z = hn::Abs(hn::Mul(v, inv_sqrt2));
    const auto t = hn::Div(one, hn::MulAdd(p, z, one));
    auto poly = hn::MulAdd(a5, t, a4);
    poly = hn::MulAdd(poly, t, a3);
    poly = hn::MulAdd(poly, t, a2);
    poly = hn::MulAdd(poly, t, a1);
    poly = hn::Mul(poly, t);
    const auto erf_abs = hn::NegMulAdd(poly, hn::Exp(d, hn::Neg(hn::Mul(z, z))), one);
    const auto erf = hn::CopySign(erf_abs, v);
    return hn::Mul(hn::Mul(half, v), hn::Add(one, erf));
  });
}

inline void Add(float* HWY_RESTRICT a, const float* HWY_RESTRICT b, size_t n) {
  const hn::ScalableTag<float> d;
  Transform2InPlace(d, a, b, n, [](auto va, auto vb) { return hn::Add(va, vb); });
}

inline void Mul(float* HWY_RESTRICT a, const float* HWY_RESTRICT b, size_t n) {
  const hn::ScalableTag<float> d;
  Transform2InPlace(d, a, b, n, [](auto va, auto vb) { return hn::Mul(va, vb); });
}

// x = s x, in place.
inline void Scale(float* HWY_RESTRICT x, float s, size_t n) {
  const hn::ScalableTag<float> d;
  const auto vs = hn::Set(d, s);
  TransformInPlace(d, x, n, [&](auto v) { return hn::Mul(v, vs); });
}

// x = cap tanh(x / cap), in place: soft-capping (Gemma 2's logits and scores).
inline void SoftCap(float* HWY_RESTRICT x, float cap, size_t n) {
  const hn::ScalableTag<float> d;
  const auto vcap = hn::Set(d, cap);
  const auto inv = hn::Set(d, 1.0f / cap);
  TransformInPlace(d, x, n,
                   [&](auto v) { return hn::Mul(vcap, hn::Tanh(d, hn::Mul(v, inv))); });
}

inline void AddBias(float* HWY_RESTRICT x, const float* HWY_RESTRICT bias, size_t rows,
                    size_t n) {
  for (size_t r = 0; r < rows; ++r) Add(x + r * n, bias, n);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_ELEMENTWISE_INL_H_
