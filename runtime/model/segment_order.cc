#include "runtime/model/segment_order.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <utility>

#include "runtime/model/tensor_names.h"

namespace ember {
namespace {

// Where a tensor goes among the segments: in the order one forward pass reads them, so
// decode streams the file front to back and each matrix's stream runs on into the next
// (the matvec kernels prefetch past a matrix's end): the embeddings looked up per token,
// then each layer's tensors in the order of its steps, then the final norm and the
// classifier, which is the token embedding itself when tied. Other names come last.
// Returns (group, position within the group); ties keep the importer's order.
std::pair<uint64_t, uint64_t> ForwardRank(const std::string& name, bool tied) {
  static const char* const kLayerOrder[] = {"attn_norm.weight",
                                            "attn_norm.bias",
                                            "attn_q.weight",
                                            "attn_q.bias",
                                            "attn_k.weight",
                                            "attn_k.bias",
                                            "attn_v.weight",
                                            "attn_v.bias",
                                            "attn_q_norm.weight",
                                            "attn_k_norm.weight",
                                            "attn_output.weight",
                                            "attn_output.bias",
                                            "post_attention_norm.weight",
                                            "ffn_norm.weight",
                                            "ffn_norm.bias",
                                            "ffn_gate.weight",
                                            "ffn_gate.bias",
                                            "ffn_up.weight",
                                            "ffn_up.bias",
                                            "ffn_down.weight",
                                            "ffn_down.bias",
                                            "post_ffw_norm.weight"};
  static const char* const kOutputOrder[] = {names::kOutputNorm, names::kOutputNormBias,
                                             names::kOutput, names::kOutputBias,
                                             names::kTokEmbedding};
  constexpr uint64_t kLayers = 1, kOutputs = uint64_t{1} << 32, kOthers = kOutputs + 1;
  if (name == names::kPosEmbedding) return {0, 0};
  if (name == names::kTokEmbedding && !tied) return {0, 1};
  unsigned layer = 0;
  int prefix = 0;
  if (sscanf(name.c_str(), "blk.%u.%n", &layer, &prefix) == 1 && prefix > 0) {
    const std::string rest = name.substr(static_cast<size_t>(prefix));
    for (uint64_t i = 0; i < std::size(kLayerOrder); ++i) {
      if (rest == kLayerOrder[i]) return {kLayers + layer, i};
    }
    return {kLayers + layer, std::size(kLayerOrder)};
  }
  for (uint64_t i = 0; i < std::size(kOutputOrder); ++i) {
    if (name == kOutputOrder[i]) return {kOutputs, i};
  }
  return {kOthers, 0};
}

}  // namespace

// In ForwardRank's order.
std::vector<size_t> SegmentOrder(const ModelSpec& spec) {
  std::vector<size_t> order(spec.tensors.size());
  std::vector<std::pair<uint64_t, uint64_t>> rank(spec.tensors.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
    rank[i] = ForwardRank(spec.tensors[i].name, spec.config.tied_classifier);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rank[a] < rank[b]; });
  return order;
}

}  // namespace ember
