// Model summaries (see model_summary.h).
#include "tools/cli/model_summary.h"

#include <cstring>

namespace ember::tools {
namespace {

uint64_t Elements(const Tensor& t) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < t.n_dims; ++d) n *= t.shape[d];
  return n;
}

// The kind of a tensor from its GGUF-style name (runtime/tensor_names.h).
const char* KindOf(const char* name) {
  struct Rule {
    const char* fragment;
    const char* kind;
  };
  static const Rule kRules[] = {
      {"attn_q.", "W_q"},
      {"attn_k.", "W_k"},
      {"attn_v.", "W_v"},
      {"attn_output.", "W_o"},
      {"ffn_gate.", "ffn"},
      {"ffn_up.", "ffn"},
      {"ffn_down.", "ffn"},
      {"norm.", "norms"},
      {"token_embd.", "embeddings"},
      {"position_embd.", "embeddings"},
      {"output.", "classifier"},
  };
  for (const Rule& r : kRules) {
    if (strstr(name, r.fragment)) return r.kind;
  }
  return "other";
}

}  // namespace

std::vector<KindCount> ParametersByKind(const Model& model) {
  std::vector<KindCount> kinds;
  for (const char* k : {"embeddings", "W_q", "W_k", "W_v", "W_o", "ffn", "norms",
                        "classifier", "other"}) {
    kinds.push_back({k, 0, 0});
  }
  for (const Tensor& t : model.tensors()) {
    for (KindCount& k : kinds) {
      if (k.kind == KindOf(t.name)) {
        k.parameters += Elements(t);
        k.tensors += 1;
      }
    }
  }
  std::vector<KindCount> present;
  for (const KindCount& k : kinds) {
    if (k.tensors) present.push_back(k);
  }
  return present;
}

std::vector<DTypeCount> DTypeCounts(const Model& model) {
  std::vector<DTypeCount> counts;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8, DType::kQ4}) {
    DTypeCount c{d, 0, 0, 0};
    for (const Tensor& t : model.tensors()) {
      if (t.dtype != d) continue;
      c.parameters += Elements(t);
      c.bytes += t.size_bytes;
      c.tensors += 1;
    }
    if (c.tensors) counts.push_back(c);
  }
  return counts;
}

std::string DTypeMix(const Model& model) {
  std::string mix;
  for (const DTypeCount& c : DTypeCounts(model)) {
    if (!mix.empty()) mix += " ";
    mix += std::string(DTypeName(c.dtype)) + ":" + std::to_string(c.tensors);
  }
  return mix;
}

}  // namespace ember::tools
