// Dispatch of the rope kernels (rope-inl.h) and the scalar table builder (rope.h).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/rope.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
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
void FillRopeKernels(KernelTable* table) { HWY_DYNAMIC_DISPATCH(FillRope)(table); }

namespace {
// cos and sin of pair i's angle at `pos`, in float as llama2.c and Hugging Face compute
// them: freq_i = theta^(-2i / head_dim), angle = pos * freq_i.
void PairAngle(size_t pos, float theta, size_t head_dim, size_t i, float* c, float* s) {
  const float freq = 1.0f / std::pow(theta, static_cast<float>(2 * i) / head_dim);
  const float angle = static_cast<float>(pos) * freq;
  *c = std::cos(angle);
  *s = std::sin(angle);
}

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

void RopeTables(size_t pos, float theta, size_t head_dim, bool interleaved, float* cos_x,
                float* sin_x) {
  for (size_t i = 0; i < head_dim / 2; ++i) {
    float c, s;
    PairAngle(pos, theta, head_dim, i, &c, &s);
    StorePair(head_dim, interleaved, i, c, s, cos_x, sin_x);
  }
}

void RopeShiftTables(size_t from, size_t to, float theta, size_t head_dim,
                     bool interleaved, float* cos_x, float* sin_x) {
  for (size_t i = 0; i < head_dim / 2; ++i) {
    float c_from, s_from, c_to, s_to;
    PairAngle(from, theta, head_dim, i, &c_from, &s_from);
    PairAngle(to, theta, head_dim, i, &c_to, &s_to);
    // cos(b - a) = cos b cos a + sin b sin a;  sin(b - a) = sin b cos a - cos b sin a
    const double c = double(c_to) * c_from + double(s_to) * s_from;
    const double s = double(s_to) * c_from - double(c_to) * s_from;
    StorePair(head_dim, interleaved, i, static_cast<float>(c), static_cast<float>(s),
              cos_x, sin_x);
  }
}
}  // namespace ember::kernels
#endif
