// Attention recording (see attention_record.h).
#include "runtime/attention_record.h"

#include <cstring>

namespace ember {

Status ResolveAttentionRecord(const ModelConfig& config, size_t context,
                              const AttentionRecordOptions& options,
                              AttentionRecord* record) {
  *record = AttentionRecord();
  if (!options.enabled) return Status::Ok();
  // Ranges in 64 bits: first + num must not wrap around.
  const uint64_t layer_end = uint64_t{options.first_layer} + options.num_layers;
  if (options.first_layer >= config.n_layers || layer_end > config.n_layers) {
    return InvalidArgument(
        "attention record: layers [%u, %llu) are outside the model's %u layers",
        options.first_layer,
        static_cast<unsigned long long>(options.num_layers ? layer_end : config.n_layers),
        config.n_layers);
  }
  const uint64_t head_end = uint64_t{options.first_head} + options.num_heads;
  if (options.first_head >= config.n_heads || head_end > config.n_heads) {
    return InvalidArgument(
        "attention record: heads [%u, %llu) are outside the model's %u heads",
        options.first_head,
        static_cast<unsigned long long>(options.num_heads ? head_end : config.n_heads),
        config.n_heads);
  }
  if (options.max_positions > context) {
    return InvalidArgument(
        "attention record: %u positions exceed the session's context of %zu",
        options.max_positions, context);
  }
  record->first_layer = options.first_layer;
  record->num_layers =
      options.num_layers ? options.num_layers : config.n_layers - options.first_layer;
  record->first_head = options.first_head;
  record->num_heads =
      options.num_heads ? options.num_heads : config.n_heads - options.first_head;
  record->positions = options.max_positions ? options.max_positions : context;
  // layers x heads x positions^2 floats must be addressable (think of a 32-bit device
  // and a long context).
  const uint64_t p = record->positions;
  const uint64_t limit = SIZE_MAX / 2 / sizeof(float);
  const uint64_t per_head = p * p;  // p < 2^32, so no wrap
  const uint64_t heads = uint64_t{record->num_layers} * record->num_heads;
  if (per_head > limit || (per_head && heads > limit / per_head)) {
    return ResourceExhausted(
        "attention record of %u layers x %u heads x %zu x %zu positions is too large "
        "for this machine",
        record->num_layers, record->num_heads, record->positions, record->positions);
  }
  return Status::Ok();
}

void RecordAttentionRow(const AttentionRecord& record, size_t layer, size_t position,
                        const float* probs, size_t probs_stride, size_t first_key,
                        size_t end_key) {
  if (layer < record.first_layer || layer - record.first_layer >= record.num_layers ||
      position >= record.positions) {
    return;
  }
  const size_t l = layer - record.first_layer;
  const size_t end = end_key < record.positions ? end_key : record.positions;
  const size_t first = first_key < end ? first_key : end;
  for (size_t h = 0; h < record.num_heads; ++h) {
    float* row = record.row(l, h, position);
    const float* from = probs + (record.first_head + h) * probs_stride;
    memset(row, 0, first * sizeof(float));
    memcpy(row + first, from + first, (end - first) * sizeof(float));
    memset(row + end, 0, (record.positions - end) * sizeof(float));
  }
}

}  // namespace ember
