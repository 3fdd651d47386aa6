// What a forward pass reads and writes besides the weights: the KV cache (kv_cache.h)
// and the activation buffers, as typed views into a session's arena (PlanSession places
// them).
#ifndef EMBER_RUNTIME_ACTIVATIONS_H_
#define EMBER_RUNTIME_ACTIVATIONS_H_

#include <cstddef>
#include <cstdint>

#include "runtime/kv_cache.h"
#include "runtime/linear.h"

namespace ember {

// Tokens whose attention runs as one parallel step; Activations::probs holds their rows.
inline constexpr size_t kMaxAttentionChunk = 4;
inline size_t AttentionChunk(size_t max_batch) {
  if (max_batch < 1) return 1;
  return max_batch < kMaxAttentionChunk ? max_batch : kMaxAttentionChunk;
}

// Blocked attention (Forward::AttentionBlocked over one whole bidirectional input, a
// vision tower's tile): queries per block, and the floats of one head's slot of
// Activations::blocked for n positions: its keys transposed (head_dim rows), its values
// (n, head_dim), a block's scores (kAttentionBlock rows) and scaled queries
// (kAttentionBlock, head_dim). Rows of n values lie BlockedStride(n) apart: 16 more, so
// that the rows of a product's tile do not all fall in one set of the cache (4096
// floats is a multiple of its way size). SIZE_MAX when that overflows.
inline constexpr size_t kAttentionBlock = 64;
inline size_t BlockedStride(size_t n) { return n + 16; }
inline size_t BlockedAttentionSlot(size_t n, size_t head_dim) {
  if (head_dim > SIZE_MAX / 4 || n > SIZE_MAX / 4) return SIZE_MAX;
  const size_t rows = head_dim + kAttentionBlock, stride = BlockedStride(n);
  if (stride > SIZE_MAX / rows || n > SIZE_MAX / (2 * head_dim + 1)) return SIZE_MAX;
  const size_t a = rows * stride, b = n * head_dim + kAttentionBlock * head_dim;
  return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

// Working memory of one forward pass over up to max_batch tokens. Shapes name the
// model's dimensions; `chunk` is AttentionChunk(max_batch).
struct Activations {
  size_t max_batch = 0;
  float* x = nullptr;         // (max_batch, d_model): the residual stream
  float* x_norm = nullptr;    // (max_batch, d_model): normalized input of a sub-block
  float* rope_cos = nullptr;  // (max_batch, head_dim)
  float* rope_sin = nullptr;  // (max_batch, head_dim)
  // Sliding layers' tables when they have their own RoPE base (else null).
  float* rope_local_cos = nullptr;  // (max_batch, head_dim)
  float* rope_local_sin = nullptr;  // (max_batch, head_dim)
  float* q = nullptr;         // (max_batch, q_dim)
  // New keys and values in f32, (2, max_batch, kv_dim), when they are not computed in
  // place in the cache (an f16 or q8 cache, a ring): KvCache::Store converts them.
  float* kv_new = nullptr;
  // A q8 cache's queries, in its encoding: (max_batch, n_heads, KvGroups(head_dim) *
  // kKvGroup) int8 and (max_batch, n_heads, KvGroups(head_dim)) scales (else null).
  int8_t* q8 = nullptr;
  float* q8_scales = nullptr;
  float* attn_out = nullptr;  // (max_batch, q_dim): heads concatenated
  float* probs = nullptr;     // (chunk, n_heads, max_context): attention weights
  float* spans = nullptr;     // (chunk, kMaxAttentionSpans, n_heads, head_dim + 2)
  // (n_heads, BlockedAttentionSlot(max_batch, head_dim)): the blocked attention's
  // scratch, where a plan gives it (a vision tower's, sharing ffn_a's bytes); else null.
  float* blocked = nullptr;
  float* proj = nullptr;      // (max_batch, d_model): attention or FFN projection
  float* ffn_a = nullptr;     // (max_batch, ffn_dim): gate, or up for a plain FFN
  float* ffn_b = nullptr;     // (max_batch, ffn_dim): up of a gated FFN (else null)
  QuantScratch quant;         // int8 copy of a q8/q4 product's input (null if none)
};

}  // namespace ember

#endif  // EMBER_RUNTIME_ACTIVATIONS_H_
