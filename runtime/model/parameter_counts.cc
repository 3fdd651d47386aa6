// Parameters by kind and by weight type (see parameter_counts.h).
#include "runtime/model/parameter_counts.h"

#include <cstring>

#include "runtime/model/tensor.h"
#include "runtime/model/tensor_names.h"

namespace ember {

uint64_t Elements(const Tensor& t) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < t.n_dims; ++d) n *= t.shape[d];
  return n;
}

const char* ParameterKindName(ParameterKind kind) {
  static const char* const kNames[kNumParameterKinds] = {
      "embeddings", "W_q",   "W_k",        "W_v",   "W_o",
      "ffn",        "norms", "classifier", "other", "vision"};
  const size_t i = static_cast<size_t>(kind);
  return i < kNumParameterKinds ? kNames[i] : "other";
}

ParameterKind ParameterKindOf(const char* tensor_name) {
  struct Rule {
    const char* fragment;
    ParameterKind kind;
  };
  if (names::IsVisionTensor(tensor_name)) {
    return ParameterKind::kVision;
  }
  // The first rule whose fragment the name holds decides.
  static const Rule kRules[] = {
      {"attn_q.", ParameterKind::kWq},
      {"attn_k.", ParameterKind::kWk},
      {"attn_v.", ParameterKind::kWv},
      {"attn_output.", ParameterKind::kWo},
      {"ffn_gate.", ParameterKind::kFfn},
      {"ffn_up.", ParameterKind::kFfn},
      {"ffn_down.", ParameterKind::kFfn},
      {"norm.", ParameterKind::kNorms},
      {"token_embd.", ParameterKind::kEmbeddings},
      {"position_embd.", ParameterKind::kEmbeddings},
      {"token_types.", ParameterKind::kEmbeddings},
      {"cls.", ParameterKind::kClassifier},
      {"output.", ParameterKind::kClassifier},
  };
  for (const Rule& r : kRules) {
    if (strstr(tensor_name, r.fragment)) return r.kind;
  }
  return ParameterKind::kOther;
}

ParameterCounts CountParameters(const Model& model) {
  ParameterCounts counts;
  counts.total = model.parameter_count();
  for (const Tensor& t : model.tensors()) {
    const uint64_t n = Elements(t);
    ParameterCount& kind = counts.by_kind[static_cast<size_t>(ParameterKindOf(t.name))];
    kind.parameters += n;
    kind.tensors += 1;
    kind.bytes += t.size_bytes;
    const size_t d = static_cast<size_t>(t.dtype);
    if (d < kNumDTypes) {  // the loader accepts no other
      counts.by_dtype[d].parameters += n;
      counts.by_dtype[d].tensors += 1;
      counts.by_dtype[d].bytes += t.size_bytes;
    }
  }
  return counts;
}

}  // namespace ember
