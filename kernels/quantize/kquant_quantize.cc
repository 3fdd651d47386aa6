// The K-quant quantizer (see kquant_quantize.h). Float arithmetic is plain single
// precision in a fixed order, so a conversion gives the same file on every machine.
#include "kernels/quantize/kquant_quantize.h"

#include <cmath>
#include <cstring>

#include "kernels/half.h"
#include "kernels/quantize/kquant_pack.h"

namespace ember::kernels {
namespace {

// Sub-blocks whose largest magnitude is below this are all zeros (as GGML's).
constexpr float kZeroGroup = 1e-15f;

// round-to-nearest-even(v) clamped to [lo, hi] (NaN gives lo), for |lo|, |hi| < 2^22:
// between them, adding 1.5 * 2^23 leaves no fraction bits and the addition rounds (to
// nearest even, as std::nearbyint, which is a library call: a conversion spends most of
// its time rounding).
int RoundClamp(float v, int lo, int hi) {
  if (!(v > static_cast<float>(lo))) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  constexpr float kMagic = 12582912.0f;
  return static_cast<int>((v + kMagic) - kMagic);
}

// Weighted affine fit of x[0, n) ~ scale * q + offset with q in 0..nmax and offset <= 0
// (see QuantizeKQuantBlock): the q in q[], -offset in *min; returns the scale.
float FitAffine(const float* x, const float* w, int n, int nmax, float rmin, float rdelta,
                int nsteps, uint8_t* q, float* min) {
  float lo = x[0], hi = x[0], sum_w = 0, sum_wx = 0;
  for (int i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
    sum_w += w[i];
    sum_wx += w[i] * x[i];
  }
  if (lo > 0) lo = 0;
  if (hi == lo) {  // constant (zero or negative) values: q = 0, all in the offset
    memset(q, 0, n);
    *min = -lo;
    return 0.0f;
  }
  float inverse = static_cast<float>(nmax) / (hi - lo);
  float scale = 1.0f / inverse;
  float best = 0;
  for (int i = 0; i < n; ++i) {
    q[i] = static_cast<uint8_t>(RoundClamp(inverse * (x[i] - lo), 0, nmax));
    const float diff = scale * q[i] + lo - x[i];
    best += w[i] * diff * diff;
  }
  uint8_t trial[32];
  for (int step = 0; step <= nsteps; ++step) {
    inverse =
        (rmin + rdelta * static_cast<float>(step) + static_cast<float>(nmax)) / (hi - lo);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = RoundClamp(inverse * (x[i] - lo), 0, nmax);
      trial[i] = static_cast<uint8_t>(l);
      sum_l += w[i] * static_cast<float>(l);
      sum_l2 += w[i] * static_cast<float>(l) * static_cast<float>(l);
      sum_xl += w[i] * static_cast<float>(l) * x[i];
    }
    // Least squares for (s, m) in x ~ s * l + m: the 2x2 normal equations.
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (!(det > 0)) continue;
    float s = (sum_w * sum_xl - sum_wx * sum_l) / det;
    float m = (sum_l2 * sum_wx - sum_l * sum_xl) / det;
    if (m > 0) {  // the offset may not be positive: fit the scale alone
      m = 0;
      s = sum_xl / sum_l2;
    }
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float diff = s * trial[i] + m - x[i];
      err += w[i] * diff * diff;
    }
    if (err < best) {
      memcpy(q, trial, n);
      best = err;
      scale = s;
      lo = m;
    }
  }
  *min = -lo;
  return scale;
}

// Symmetric fit of x[0, n) ~ scale * l, l in [-nmax, nmax - 1], weights x^2 (see
// QuantizeKQuantBlock): l + nmax in q[]; returns the scale (0 for a zero sub-block).
float FitSymmetric(const float* x, int n, int nmax, uint8_t* q) {
  float extreme = 0, magnitude = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > magnitude) {
      magnitude = std::fabs(x[i]);
      extreme = x[i];
    }
  }
  if (magnitude < kZeroGroup) {
    memset(q, 0, n);
    return 0.0f;
  }
  // sum(w x l) and sum(w l^2) for the l that `inverse` rounds to, written to out.
  const auto sums = [&](float inverse, uint8_t* out, float* slx, float* sl2) {
    *slx = 0;
    *sl2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = RoundClamp(inverse * x[i], -nmax, nmax - 1);
      out[i] = static_cast<uint8_t>(l + nmax);
      const float w = x[i] * x[i];
      *slx += w * x[i] * static_cast<float>(l);
      *sl2 += w * static_cast<float>(l) * static_cast<float>(l);
    }
  };
  float slx, sl2;
  sums(-static_cast<float>(nmax) / extreme, q, &slx, &sl2);
  float scale = sl2 != 0 ? slx / sl2 : 0.0f;
  float best = scale * slx;
  uint8_t trial[16];
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    sums(-(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / extreme, trial,
         &slx, &sl2);
    // A larger sum(w x l)^2 / sum(w l^2) is a smaller weighted squared error.
    if (sl2 > 0 && slx * slx > best * sl2) {
      memcpy(q, trial, n);
      scale = slx / sl2;
      best = scale * slx;
    }
  }
  return scale;
}

void QuantizeAffineBlock(KQuantKind kind, const float* x, KQuantBlockValues* out) {
  const bool q4 = kind == KQuantKind::kQ4K;
  const int nmax = q4 ? 15 : 31;
  float scales[8], mins[8], max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float* xj = x + 32 * j;
    float sum_x2 = 0;
    for (int i = 0; i < 32; ++i) sum_x2 += xj[i] * xj[i];
    const float rms = std::sqrt(sum_x2 / 32);
    float w[32];
    for (int i = 0; i < 32; ++i) w[i] = rms + std::fabs(xj[i]);
    scales[j] = FitAffine(xj, w, 32, nmax, q4 ? -1.0f : -0.5f, 0.1f, q4 ? 20 : 15,
                          out->q + 32 * j, &mins[j]);
    max_scale = scales[j] > max_scale ? scales[j] : max_scale;
    max_min = mins[j] > max_min ? mins[j] : max_min;
  }
  const float inverse_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inverse_min = max_min > 0 ? 63.0f / max_min : 0.0f;
  for (int j = 0; j < 8; ++j) {
    out->scales[j] = static_cast<int16_t>(RoundClamp(inverse_scale * scales[j], 0, 63));
    out->mins[j] = static_cast<uint8_t>(RoundClamp(inverse_min * mins[j], 0, 63));
  }
  out->d = FloatToHalf(max_scale / 63.0f);
  out->dmin = FloatToHalf(max_min / 63.0f);
  const float d = HalfToFloat(out->d), dmin = HalfToFloat(out->dmin);
  for (int j = 0; j < 8; ++j) {
    const float scale = d * static_cast<float>(out->scales[j]);
    if (scale == 0) continue;  // every weight is -min whatever q is: keep the fit's q
    const float min = dmin * static_cast<float>(out->mins[j]);
    for (int i = 32 * j; i < 32 * j + 32; ++i) {
      out->q[i] = static_cast<uint8_t>(RoundClamp((x[i] + min) / scale, 0, nmax));
    }
  }
}

void QuantizeSymmetricBlock(const float* x, KQuantBlockValues* out) {
  float scales[16], max_scale = 0, max_magnitude = 0;
  for (int k = 0; k < 16; ++k) {
    scales[k] = FitSymmetric(x + 16 * k, 16, 32, out->q + 16 * k);
    if (std::fabs(scales[k]) > max_magnitude) {
      max_magnitude = std::fabs(scales[k]);
      max_scale = scales[k];
    }
  }
  out->dmin = 0;
  if (max_magnitude < kZeroGroup) {  // all zeros
    out->d = 0;
    memset(out->scales, 0, sizeof(out->scales));
    memset(out->q, 0, sizeof(out->q));
    return;
  }
  const float inverse = -128.0f / max_scale;
  out->d = FloatToHalf(1.0f / inverse);
  for (int k = 0; k < 16; ++k) {
    out->scales[k] = static_cast<int16_t>(RoundClamp(inverse * scales[k], -128, 127));
  }
  const float d = HalfToFloat(out->d);
  for (int k = 0; k < 16; ++k) {
    const float scale = d * static_cast<float>(out->scales[k]);
    if (scale == 0) continue;
    for (int i = 16 * k; i < 16 * k + 16; ++i) {
      out->q[i] = static_cast<uint8_t>(RoundClamp(x[i] / scale, -32, 31) + 32);
    }
  }
}

}  // namespace

void QuantizeKQuantBlock(KQuantKind kind, const float* x, KQuantBlockValues* out) {
  if (kind == KQuantKind::kQ6K) {
    QuantizeSymmetricBlock(x, out);
  } else {
    QuantizeAffineBlock(kind, x, out);
  }
}

void QuantizeKQuantRowGgml(KQuantKind kind, const float* x, size_t cols, uint8_t* out) {
  KQuantBlockValues values;
  for (size_t s = 0; s < KQuantSuperBlocks(cols); ++s) {
    QuantizeKQuantBlock(kind, x + s * kKQuantBlock, &values);
    WriteGgmlKQuantBlock(kind, values, out + s * GgmlKQuantBlockBytes(kind));
  }
}

bool PackKQuant(KQuantKind kind, const float* w, size_t rows, size_t cols, uint8_t* out) {
  if (rows == 0 || cols == 0 || cols % kKQuantBlock != 0) return false;
  memset(out, 0, KQuantPackedBytes(kind, rows, cols));
  KQuantBlockValues values;
  for (size_t row = 0; row < rows; ++row) {
    for (size_t s = 0; s < KQuantSuperBlocks(cols); ++s) {
      QuantizeKQuantBlock(kind, w + row * cols + s * kKQuantBlock, &values);
      PutKQuantBlock(kind, values, cols, row, s, out);
    }
  }
  return true;
}

}  // namespace ember::kernels
