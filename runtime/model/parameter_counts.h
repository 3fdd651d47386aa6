// Parameters of a model counted by kind (embeddings, attention's four projections, the
// feed-forward block, norms, the classifier) and by weight type: what `ember inspect`
// prints and ember_model_info (the C API) reports, from one count.
#ifndef EMBER_RUNTIME_MODEL_PARAMETER_COUNTS_H_
#define EMBER_RUNTIME_MODEL_PARAMETER_COUNTS_H_

#include <cstddef>
#include <cstdint>

#include "runtime/model/config.h"
#include "runtime/model/model.h"

namespace ember {

// In the order `ember inspect` prints them. A tensor's kind comes from its GGUF-style
// name (tensor_names.h); biases count with their weights.
enum class ParameterKind : uint8_t {
  kEmbeddings = 0,  // token_embd, position_embd
  kWq = 1,
  kWk = 2,
  kWv = 3,
  kWo = 4,
  kFfn = 5,         // gate, up, down
  kNorms = 6,       // every norm's scale and shift
  kClassifier = 7,  // output (none when tied to the token embedding)
  kOther = 8,
  kVision = 9,  // a vision tower and its connector ("v." and "mm.")
};
inline constexpr size_t kNumParameterKinds = 10;
inline constexpr size_t kNumDTypes = static_cast<size_t>(DType::kQ6K) + 1;

// "embeddings", "W_q", "W_k", "W_v", "W_o", "ffn", "norms", "classifier", "other",
// "vision".
// A tensor's elements: the product of its dimensions.
uint64_t Elements(const Tensor& t);

const char* ParameterKindName(ParameterKind kind);
ParameterKind ParameterKindOf(const char* tensor_name);

struct ParameterCount {
  uint64_t parameters = 0;  // elements: weights and biases
  uint64_t tensors = 0;
  uint64_t bytes = 0;  // as stored (scales, minimums and panel padding included)
};

struct ParameterCounts {
  uint64_t total = 0;  // Model::parameter_count(): a tied classifier counted once
  ParameterCount by_kind[kNumParameterKinds];
  ParameterCount by_dtype[kNumDTypes];  // indexed by DType

  const ParameterCount& of(ParameterKind kind) const {
    return by_kind[static_cast<size_t>(kind)];
  }
  const ParameterCount& of(DType dtype) const {
    return by_dtype[static_cast<size_t>(dtype)];
  }
};

// One pass over the model's tensor table; allocates nothing.
ParameterCounts CountParameters(const Model& model);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_PARAMETER_COUNTS_H_
