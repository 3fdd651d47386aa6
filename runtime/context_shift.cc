// Session::ShiftContext and MakeRoom: generation past the context by dropping part of
// the cache and moving the rest down (see session.h).
#include <cstring>

#include "kernels/rope.h"
#include "runtime/checked_math.h"
#include "runtime/forward.h"
#include "runtime/session.h"

namespace ember {

Status Session::ShiftContext(size_t keep, size_t discard) {
  const ModelConfig& c = model_->config();
  if (c.positions == PositionKind::kLearned) {
    return InvalidArgument(
        "context shift needs rotary (RoPE) positions or none; this model's positions "
        "are learned (added to its input), so its cache cannot be moved");
  }
  size_t end;  // keep + discard, which a caller's values may wrap past SIZE_MAX
  if (discard == 0 || !CheckedAdd(keep, discard, &end) || end > position_) {
    return InvalidArgument(
        "context shift: cannot drop %zu positions after the first %zu of %zu", discard,
        keep, position_);
  }
  if (!RopeShiftable(c, plan_.max_context)) {
    return InvalidArgument(
        "context shift: LongRoPE picks its factors per pass, and with a context of %zu "
        "past its original %u the moved keys cannot be rotated as a fresh pass would",
        plan_.max_context, c.rope_original_context);
  }
  if (record_.weights != nullptr) {
    return InvalidArgument(
        "context shift: the attention record counts positions from "
        "the start; stop recording first");
  }
  const KvCache& kv = buffers_.kv;
  for (size_t layer = 0; layer < c.n_layers; ++layer) {
    if (kv.layers[layer].ring > 0 && kv.layers[layer].sink != keep) {
      return InvalidArgument(
          "context shift: layer %zu keeps a ring of its sliding window after the %zu "
          "positions a shift keeps (SessionOptions::context_keep); it cannot keep %zu",
          layer, kv.layers[layer].sink, keep);
    }
  }
  const size_t moved = position_ - keep - discard;
  for (size_t layer = 0; layer < c.n_layers; ++layer) {
    // A ring moves every position at once (its slots rotate); the rest row by row.
    if (kv.layers[layer].ring > 0) {
      kv.RotateRing(layer, discard);
    } else {
      kv.MoveRows(layer, keep + discard, keep, moved);
    }
  }
  if (c.positions == PositionKind::kRope) {
    // Each layer's keys turn with that layer's RoPE (a sliding layer's own base, Gemma
    // 3; the scaled global RoPE else), over its rotated dimensions (rope_dims). Between
    // passes the activations are free: rope_cos/rope_sin hold a chunk's global tables,
    // rope_local_cos/rope_local_sin its local ones (max_batch rows of head_dim each), q
    // one key row (q_dim >= kv_dim).
    const Activations& act = buffers_.act;
    const size_t hd = c.head_dim, dims = c.rope_dims(), chunk = act.max_batch;
    const bool interleaved = c.rope_pairing == RopePairing::kInterleaved;
    const auto rope = interleaved ? kernels_.rope_interleaved : kernels_.rope_half;
    const bool local = c.rope_local_theta > 0.0f && c.has_sliding_layers();
    const kernels::RopeParams global_params = GlobalRopeParams(c);
    kernels::RopeParams local_params;
    local_params.theta = c.rope_local_theta;
    for (size_t p0 = keep; p0 < keep + moved; p0 += chunk) {
      const size_t n = keep + moved - p0 < chunk ? keep + moved - p0 : chunk;
      for (size_t j = 0; j < n; ++j) {
        kernels::RopeShiftTables(p0 + j + discard, p0 + j, global_params, dims,
                                 interleaved, act.rope_cos + j * hd,
                                 act.rope_sin + j * hd);
        if (local) {
          kernels::RopeShiftTables(p0 + j + discard, p0 + j, local_params, dims,
                                   interleaved, act.rope_local_cos + j * hd,
                                   act.rope_local_sin + j * hd);
        }
      }
      for (size_t layer = 0; layer < c.n_layers; ++layer) {
        const bool layer_local = local && c.sliding(layer);
        const float* cos = layer_local ? act.rope_local_cos : act.rope_cos;
        const float* sin = layer_local ? act.rope_local_sin : act.rope_sin;
        // A ring holds the last `ring` positions only (each its own slot).
        const size_t ring = kv.layers[layer].ring, end = keep + moved;
        const size_t lo = ring > 0 && end - keep > ring ? end - ring : keep;
        for (size_t j = p0 < lo ? lo - p0 : 0; j < n; ++j) {
          kv.Load(layer, kKeys, p0 + j, act.q);
          if (dims == hd) {
            rope(act.q, cos + j * hd, sin + j * hd, c.n_kv_heads, hd);
          } else {  // partial rotation: each head's first `dims` values
            for (size_t h = 0; h < c.n_kv_heads; ++h) {
              rope(act.q + h * hd, cos + j * hd, sin + j * hd, 1, dims);
            }
          }
          kv.StoreRow(kernels_, layer, kKeys, p0 + j, act.q);
        }
      }
    }
  }
  // The tokens move with their keys: chat's cached-prefix match and the penalties read
  // the history of the positions as they now are.
  memmove(buffers_.history + keep, buffers_.history + keep + discard,
          moved * sizeof(int32_t));
  position_ -= discard;
  ++shifts_;
  return Status::Ok();
}

Status Session::MakeRoom(size_t n) {
  const size_t context = plan_.max_context;
  if (n <= context && position_ <= context - n) return Status::Ok();
  if (!plan_.context_shift) {
    return OutOfRange(
        "context full: %zu tokens at position %zu exceed the context of %zu", n,
        position_, context);
  }
  const size_t keep = plan_.context_keep;
  if (n > context - keep || position_ < keep) {
    return OutOfRange(
        "%zu tokens do not fit a context of %zu even after a context shift that keeps "
        "%zu",
        n, context, keep);
  }
  // Half of what is not kept, or as much more as the n new positions need.
  const size_t half = (position_ - keep) / 2;
  const size_t needed = position_ + n - context;
  return ShiftContext(keep, half > needed ? half : needed);
}

}  // namespace ember
