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

void RopeTables(size_t pos, float theta, size_t head_dim, bool interleaved, float* cos_x,
                float* sin_x) {
  const size_t half = head_dim / 2;
  for (size_t i = 0; i < half; ++i) {
    const float freq = 1.0f / std::pow(theta, static_cast<float>(2 * i) / head_dim);
    const float angle = static_cast<float>(pos) * freq;
    const float c = std::cos(angle), s = std::sin(angle);
    const size_t first = interleaved ? 2 * i : i;
    const size_t second = interleaved ? 2 * i + 1 : i + half;
    cos_x[first] = c;
    cos_x[second] = c;
    sin_x[first] = -s;
    sin_x[second] = s;
  }
}
}  // namespace ember::kernels
#endif
