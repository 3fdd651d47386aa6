// Rotary position embedding: the per-position lane tables the rope kernels consume.
#ifndef EMBER_KERNELS_ROPE_H_
#define EMBER_KERNELS_ROPE_H_

#include <cstddef>

namespace ember::kernels {

// Fills cos_x[head_dim], sin_x[head_dim] for position `pos`:
//   freq_i = theta^(-2i / head_dim), angle_i = pos * freq_i  (i < head_dim / 2; the
//   float arithmetic of llama2.c and Hugging Face),
// laid out per lane for the pairing (see RopeFn in kernel_table.h): interleaved puts pair
// i at lanes (2i, 2i+1), half at (i, i + head_dim/2); sin_x is -sin at the pair's first
// lane and +sin at its second.
void RopeTables(size_t pos, float theta, size_t head_dim, bool interleaved, float* cos_x,
                float* sin_x);

// Tables (laid out as RopeTables') that turn a key rotated for position `from` into the
// key rotated for position `to`: the rotation by angle_i(to) - angle_i(from), each angle
// the float RopeTables computes, the difference's cos and sin formed in double from
// their cos and sin. (A context shift moves cached keys with them.)
void RopeShiftTables(size_t from, size_t to, float theta, size_t head_dim,
                     bool interleaved, float* cos_x, float* sin_x);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_ROPE_H_
