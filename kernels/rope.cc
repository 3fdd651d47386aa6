// Dispatch of the rope kernels (rope-inl.h) and the scalar table builder (rope.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/rope.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/dispatch.h"
#include "kernels/kernel_table.h"
#include "kernels/rope-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
void FillRope(KernelTable* table) {
  table->rope_interleaved = &RopeInterleaved;
  table->rope_half = &RopeHalf;
}
}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cmath>

#include "kernels/rope.h"

namespace ember::kernels {
HWY_EXPORT(FillRope);
void FillRopeKernels(KernelTable* table, const IsaChoice& isa) {
  EMBER_DISPATCH(FillRope, isa.hwy_targets)(table);
}

namespace {

// Hugging Face's _compute_yarn_parameters: the dimension at which the base frequency
// turns `rotations` times over `context` positions.
double YarnCorrectionDim(double rotations, double dim, double theta, double context) {
  const double kPi = 3.14159265358979323846;
  return dim * std::log(context / (rotations * 2 * kPi)) / (2 * std::log(theta));
}

// RopeFrequency before freq_factors.
float ScaledFrequency(const RopeParams& p, size_t i, size_t head_dim) {
  if (p.scaling == RopeScalingKind::kNone) {
    return 1.0f / std::pow(p.theta, static_cast<float>(2 * i) / head_dim);
  }
  const double kPi = 3.14159265358979323846;
  const double base = 1.0 / std::pow(double{p.theta}, double(2 * i) / double(head_dim));
  const double factor = p.factor;
  switch (p.scaling) {
    case RopeScalingKind::kNone:
    case RopeScalingKind::kLongRope:  // all in freq_factors
      return static_cast<float>(base);
    case RopeScalingKind::kLinear:
      return static_cast<float>(base / factor);
    case RopeScalingKind::kLlama3: {
      const double context = p.original_context, wavelength = 2 * kPi / base;
      const double low = p.low_freq_factor, high = p.high_freq_factor;
      if (wavelength < context / high) return static_cast<float>(base);
      if (wavelength > context / low) return static_cast<float>(base / factor);
      const double smooth = (context / wavelength - low) / (high - low);
      return static_cast<float>((1 - smooth) * base / factor + smooth * base);
    }
    case RopeScalingKind::kYarn: {
      const double dim = static_cast<double>(head_dim);
      double lo = YarnCorrectionDim(p.beta_fast, dim, p.theta, p.original_context);
      double hi = YarnCorrectionDim(p.beta_slow, dim, p.theta, p.original_context);
      if (p.truncate) {
        lo = std::floor(lo);
        hi = std::ceil(hi);
      }
      lo = lo > 0 ? lo : 0;
      hi = hi < dim - 1 ? hi : dim - 1;
      if (lo == hi) hi += 0.001;  // as Hugging Face: no division by zero
      double ramp = (static_cast<double>(i) - lo) / (hi - lo);
      ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
      // Interpolated (base / factor) where the ramp is 1, the base where it is 0.
      return static_cast<float>(base / factor * ramp + base * (1 - ramp));
    }
  }
  return static_cast<float>(base);
}

}  // namespace

float RopeFrequency(const RopeParams& p, size_t i, size_t head_dim) {
  const float scaled = ScaledFrequency(p, i, head_dim);
  return p.freq_factors ? scaled / p.freq_factors[i] : scaled;
}

namespace {
// Stores pair i's (c, s) at its two lanes (-s at the first, +s at the second).
void StorePair(size_t head_dim, bool interleaved, size_t i, float c, float s,
               float* cos_x, float* sin_x) {
  const size_t first = interleaved ? 2 * i : i;
  const size_t second = interleaved ? 2 * i + 1 : i + head_dim / 2;
  cos_x[first] = c;
  cos_x[second] = c;
  sin_x[first] = -s;
  sin_x[second] = s;
}
}  // namespace

void RopeTables(size_t pos, const RopeParams& params, size_t head_dim, bool interleaved,
                float* cos_x, float* sin_x) {
  const bool scaled = params.scaling == RopeScalingKind::kYarn ||
                      params.scaling == RopeScalingKind::kLongRope;
  const float attention = params.attention_factor;
  for (size_t i = 0; i < head_dim / 2; ++i) {
    const float angle = static_cast<float>(pos) * RopeFrequency(params, i, head_dim);
    float c = std::cos(angle), s = std::sin(angle);
    if (scaled) {
      c *= attention;
      s *= attention;
    }
    StorePair(head_dim, interleaved, i, c, s, cos_x, sin_x);
  }
}

void RopeShiftTables(size_t from, size_t to, const RopeParams& params, size_t head_dim,
                     bool interleaved, float* cos_x, float* sin_x) {
  for (size_t i = 0; i < head_dim / 2; ++i) {
    const float freq = RopeFrequency(params, i, head_dim);
    const float a = static_cast<float>(from) * freq, b = static_cast<float>(to) * freq;
    const float c_from = std::cos(a), s_from = std::sin(a);
    const float c_to = std::cos(b), s_to = std::sin(b);
    // cos(b - a) = cos b cos a + sin b sin a;  sin(b - a) = sin b cos a - cos b sin a
    const double c = double(c_to) * c_from + double(s_to) * s_from;
    const double s = double(s_to) * c_from - double(c_to) * s_from;
    StorePair(head_dim, interleaved, i, static_cast<float>(c), static_cast<float>(s),
              cos_x, sin_x);
  }
}

void RopeTables(size_t pos, float theta, size_t head_dim, bool interleaved, float* cos_x,
                float* sin_x) {
  RopeParams params;
  params.theta = theta;
  RopeTables(pos, params, head_dim, interleaved, cos_x, sin_x);
}
}  // namespace ember::kernels
#endif
