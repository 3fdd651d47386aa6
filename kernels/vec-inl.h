// Per-target helpers shared by the kernels: reductions and the padded-tail idiom.
#if defined(EMBER_KERNELS_VEC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_VEC_INL_H_
#undef EMBER_KERNELS_VEC_INL_H_
#else
#define EMBER_KERNELS_VEC_INL_H_
#endif

#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V>
HWY_INLINE float ReduceSum(D d, V v) {
  return hn::GetLane(hn::SumOfLanes(d, v));
}

template <class D, class V>
HWY_INLINE float ReduceMax(D d, V v) {
  return hn::GetLane(hn::MaxOfLanes(d, v));
}

// Rounds to the nearest integer, ties to even, for |v| < 2^23: adding and subtracting
// 2^23 (with v's sign) leaves no fraction bits, and the FPU rounds the sum. The same on
// every target (Highway 1.0.3's SCALAR NearestInt adds 0.5 and gets 0.49999997 wrong).
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> RoundToInt(DF df, hn::Vec<DF> v) {
  const auto large = hn::CopySignToAbs(hn::Set(df, 8388608.0f), v);
  return hn::ConvertTo(hn::RebindToSigned<DF>(), hn::Sub(hn::Add(v, large), large));
}

// One group of 32 floats to int8 (QuantizeActsFn's and QuantizeKvFn's encoding):
// s = absmax / 127, q[i] = round(x[i] / s) (a division: ties to even) clamped to
// [-127, 127]; all zeros when s is not positive (zeros, or a NaN input). Writes the 32
// values and *sum = their sum; returns s.
HWY_INLINE float QuantizeGroup32(const float* HWY_RESTRICT x, int8_t* HWY_RESTRICT q,
                                 int32_t* HWY_RESTRICT sum) {
  const hn::CappedTag<float, 32> df;
  const hn::Rebind<int32_t, decltype(df)> di;
  const hn::Rebind<int8_t, decltype(df)> d8;
  const size_t N = hn::Lanes(df);
  auto vmax = hn::Zero(df);
  for (size_t i = 0; i < 32; i += N) vmax = hn::Max(vmax, hn::Abs(hn::LoadU(df, x + i)));
  const float scale = ReduceMax(df, vmax) / 127.0f;
  if (!(scale > 0.0f)) {
    memset(q, 0, 32);
    *sum = 0;
    return scale;
  }
  const auto vscale = hn::Set(df, scale);
  const auto lo = hn::Set(di, -127);
  const auto hi = hn::Set(di, 127);
  auto vsum = hn::Zero(di);
  for (size_t i = 0; i < 32; i += N) {
    auto qi = RoundToInt(df, hn::Div(hn::LoadU(df, x + i), vscale));
    qi = hn::Min(hn::Max(qi, lo), hi);
    vsum = hn::Add(vsum, qi);
    hn::StoreU(hn::DemoteTo(d8, qi), d8, q + i);
  }
  *sum = hn::GetLane(hn::SumOfLanes(di, vsum));
  return scale;
}

// Applies `func(v) -> v` to x[0, n) in place, a whole vector at a time. The tail goes
// through a zero-padded stack vector so it takes exactly the same arithmetic as the body
// and no load or store leaves [x, x + n).
template <class D, class Func>
HWY_INLINE void TransformInPlace(D d, float* HWY_RESTRICT x, size_t n, const Func& func) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(func(hn::LoadU(d, x + i)), d, x + i);
  if (i < n) {
    HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {0};
    memcpy(buf, x + i, (n - i) * sizeof(float));
    hn::Store(func(hn::Load(d, buf)), d, buf);
    memcpy(x + i, buf, (n - i) * sizeof(float));
  }
}

// As TransformInPlace, with a second input b of the same length: a = func(a, b).
template <class D, class Func>
HWY_INLINE void Transform2InPlace(D d, float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                                  size_t n, const Func& func) {
  const size_t N = hn::Lanes(d);
  size_t i = 0;
  for (; i + N <= n; i += N) {
    hn::StoreU(func(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, a + i);
  }
  if (i < n) {
    HWY_ALIGN float buf_a[HWY_MAX_BYTES / sizeof(float)] = {0};
    HWY_ALIGN float buf_b[HWY_MAX_BYTES / sizeof(float)] = {0};
    memcpy(buf_a, a + i, (n - i) * sizeof(float));
    memcpy(buf_b, b + i, (n - i) * sizeof(float));
    hn::Store(func(hn::Load(d, buf_a), hn::Load(d, buf_b)), d, buf_a);
    memcpy(a + i, buf_a, (n - i) * sizeof(float));
  }
}

// Sum of f(v) over x[0, n) where f maps a vector to a vector of terms; the tail is zero
// padded, so f(0) must be 0.
template <class D, class Func>
HWY_INLINE float SumTransformed(D d, const float* HWY_RESTRICT x, size_t n,
                                const Func& func) {
  const size_t N = hn::Lanes(d);
  auto acc = hn::Zero(d);
  size_t i = 0;
  for (; i + N <= n; i += N) acc = hn::Add(acc, func(hn::LoadU(d, x + i)));
  if (i < n) {
    HWY_ALIGN float buf[HWY_MAX_BYTES / sizeof(float)] = {0};
    memcpy(buf, x + i, (n - i) * sizeof(float));
    acc = hn::Add(acc, func(hn::Load(d, buf)));
  }
  return ReduceSum(d, acc);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_VEC_INL_H_
