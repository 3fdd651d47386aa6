// Rotary position embedding: the per-position lane tables the rope kernels consume, and
// the frequencies of plain and scaled RoPE (linear, Llama 3.1, YaRN).
#ifndef EMBER_KERNELS_ROPE_H_
#define EMBER_KERNELS_ROPE_H_

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

enum class RopeScalingKind : uint8_t {
  kNone = 0,
  kLinear = 1,
  kLlama3 = 2,
  kYarn = 3,
  kLongRope = 4
};

// How pair i of a head_dim-wide head turns with the position. With base frequencies
// f_i = theta^(-2i / head_dim) (i < head_dim / 2):
//   kNone    f_i (in float arithmetic, as llama2.c and Hugging Face compute it)
//   kLinear  f_i / factor
//   kLlama3  wavelength w = 2 pi / f_i, L = original_context: f_i where w < L / high,
//            f_i / factor where w > L / low, else (1 - s) f_i / factor + s f_i with
//            s = (L / w - low) / (high - low)
//   kYarn    the ramp r_i = clamp((i - lo) / (hi - lo), 0, 1) between the dimensions
//            lo, hi at which f_i turns beta_fast and beta_slow times over L positions
//            (d ln(L / (2 pi beta)) / (2 ln theta), floored and ceiled when truncate,
//            clamped to [0, d - 1]); f_i (r_i / factor + 1 - r_i); cos and sin are
//            multiplied by attention_factor
//   kLongRope f_i (the caller picks the short or long freq_factors per pass); cos and
//            sin are multiplied by attention_factor
// (the scaled kinds in double, as Hugging Face's modeling_rope_utils defines them), then
// divided by freq_factors[i] when there are factors.
struct RopeParams {
  float theta = 10000.0f;
  RopeScalingKind scaling = RopeScalingKind::kNone;
  float factor = 1.0f;
  float low_freq_factor = 1.0f, high_freq_factor = 4.0f;  // kLlama3
  float original_context = 0.0f;                          // kLlama3, kYarn
  float beta_fast = 32.0f, beta_slow = 1.0f;              // kYarn
  float attention_factor = 1.0f;                          // kYarn, kLongRope
  bool truncate = true;                                   // kYarn
  // null, or head_dim / 2 divisors applied after the scaling (llama.cpp's rope_freqs).
  const float* freq_factors = nullptr;
};

// The frequency of pair i (radians per position).
float RopeFrequency(const RopeParams& params, size_t i, size_t head_dim);

// Fills cos_x[head_dim], sin_x[head_dim] for position `pos`: angle_i = pos * freq_i (in
// float), laid out per lane for the pairing (see RopeFn in kernel_table.h): interleaved
// puts pair i at lanes (2i, 2i+1), half at (i, i + head_dim/2); sin_x is -sin at the
// pair's first lane and +sin at its second (both times attention_factor for kYarn).
void RopeTables(size_t pos, const RopeParams& params, size_t head_dim, bool interleaved,
                float* cos_x, float* sin_x);
// Plain RoPE with base theta.
void RopeTables(size_t pos, float theta, size_t head_dim, bool interleaved, float* cos_x,
                float* sin_x);

// Tables (laid out as RopeTables') that turn a key rotated for position `from` into the
// key rotated for position `to`: the rotation by angle_i(to) - angle_i(from), each angle
// the float RopeTables computes with the same params, the difference's cos and sin
// formed in double from their cos and sin. attention_factor is not applied again (the
// key already carries it). A context shift moves cached keys with them.
void RopeShiftTables(size_t from, size_t to, const RopeParams& params, size_t head_dim,
                     bool interleaved, float* cos_x, float* sin_x);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_ROPE_H_
