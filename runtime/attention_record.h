// Attention recording: which layers, heads and positions a session keeps the attention
// weights of, and the layout of the record (caller memory, or an arena buffer the
// planner sizes when SessionOptions asks for one).
#ifndef EMBER_RUNTIME_ATTENTION_RECORD_H_
#define EMBER_RUNTIME_ATTENTION_RECORD_H_

#include <cstddef>
#include <cstdint>

#include "runtime/model/config.h"
#include "runtime/status.h"

namespace ember {

// What to record: layers [first_layer, first_layer + num_layers), heads likewise (query
// heads: under GQA each query head has its own weights), for query and key positions
// [0, max_positions) of the session. Positions past max_positions are not recorded.
struct AttentionRecordOptions {
  bool enabled = false;
  uint32_t first_layer = 0;
  uint32_t num_layers = 0;  // 0: through the last layer
  uint32_t first_head = 0;
  uint32_t num_heads = 0;      // 0: through the last head
  uint32_t max_positions = 0;  // 0: the session's context
};

// Recorded attention weights, as softmax probabilities:
//   weights[((l * num_heads + h) * positions + q) * positions + k]
// is the weight query position q puts on key position k in layer first_layer + l, head
// first_head + h; 0 where the mask hides k from q (k > q in a causal model). Rows
// q < rows are written (rows = min(session position, positions)); later ones are not
// yet. Every written row is complete, masked zeros included.
struct AttentionRecord {
  uint32_t first_layer = 0, num_layers = 0;
  uint32_t first_head = 0, num_heads = 0;
  size_t positions = 0;  // rows and columns of each head's matrix
  size_t rows = 0;
  float* weights = nullptr;  // null: not recording

  size_t num_floats() const {
    return size_t{num_layers} * num_heads * positions * positions;
  }
  // Weights of query q over keys [0, positions) in the l-th recorded layer, h-th head.
  float* row(size_t l, size_t h, size_t q) const {
    return weights + ((l * num_heads + h) * positions + q) * positions;
  }
};

// Checks `options` against the model and the session's context and fills the layout of
// `record` (weights stay null). Fails for empty or out-of-range selections and for a
// record too large to address.
Status ResolveAttentionRecord(const ModelConfig& config, size_t context,
                              const AttentionRecordOptions& options,
                              AttentionRecord* record);

// Copies one query token's weights for every recorded head of `layer` into the record:
// probs[h * probs_stride + t] for first_key <= t < end_key (cut to the record's
// positions), zeros elsewhere (keys a sliding window hides, or later ones). Does nothing
// for a layer or position outside the record.
void RecordAttentionRow(const AttentionRecord& record, size_t layer, size_t position,
                        const float* probs, size_t probs_stride, size_t first_key,
                        size_t end_key);

}  // namespace ember

#endif  // EMBER_RUNTIME_ATTENTION_RECORD_H_
