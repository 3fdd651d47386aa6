// GGUF's bert architecture (see gguf_arch_keys.h): BERT-style encoders as llama.cpp's
// converter writes them.
#include <cstdio>

#include "runtime/model/tensor_names.h"
#include "tools/convert/gguf/gguf_arch_keys.h"

namespace ember::tools {

Status BertConfig(const GgufFile& f, ModelConfig* c) {
  const ArchKeys k(f, "bert");
  EMBER_RETURN_IF_ERROR(k.CheckAllKnown(
      {"context_length", "embedding_length", "block_count", "feed_forward_length",
       "attention.head_count", "attention.layer_norm_epsilon", "attention.causal",
       "pooling_type", "vocab_size"}));
  EMBER_RETURN_IF_ERROR(k.Dim("embedding_length", true, 0, 1 << 20, &c->d_model));
  EMBER_RETURN_IF_ERROR(k.Dim("block_count", true, 0, 4096, &c->n_layers));
  EMBER_RETURN_IF_ERROR(k.Dim("feed_forward_length", true, 0, 1 << 22, &c->ffn_dim));
  EMBER_RETURN_IF_ERROR(k.Dim("attention.head_count", true, 0, 1 << 16, &c->n_heads));
  EMBER_RETURN_IF_ERROR(
      k.Float("attention.layer_norm_epsilon", 1e-12, 1e-20, 0.1, &c->norm_eps));
  EMBER_RETURN_IF_ERROR(k.Dim("context_length", true, 0, 1 << 24, &c->max_context));
  bool causal;
  EMBER_RETURN_IF_ERROR(f.GetBool(k.Key("attention.causal"), false, false, &causal));
  if (causal) return Unimplemented("GGUF: a causal bert (bert.attention.causal true)");
  if (c->d_model % c->n_heads != 0) {
    return InvalidModel("GGUF: bert.embedding_length %u is not divisible by %u heads",
                        c->d_model, c->n_heads);
  }
  int64_t pooling, types;
  EMBER_RETURN_IF_ERROR(f.GetInt(k.Key("pooling_type"), false, 1, 0, 4, &pooling));
  EMBER_RETURN_IF_ERROR(
      f.GetInt("tokenizer.ggml.token_type_count", false, 2, 0, 256, &types));
  snprintf(c->architecture, sizeof(c->architecture), "bert");
  c->n_kv_heads = c->n_heads;
  c->head_dim = c->d_model / c->n_heads;
  c->norm = NormKind::kLayerNorm;
  c->norm_placement = NormPlacement::kPost;
  c->final_norm = false;
  c->ffn = FfnKind::kPlain;
  // BERT's GELU is erf's (Hugging Face's "gelu"); llama.cpp runs ggml_gelu, the tanh
  // approximation: its vectors differ from the model's by that (docs/embeddings.md).
  c->activation = Activation::kGeluErf;
  c->positions = PositionKind::kLearned;
  c->mask = AttentionMask::kBidirectional;
  c->qkv_bias = c->out_bias = c->ffn_bias = true;
  c->token_types = static_cast<uint32_t>(types);
  c->embedding_norm = true;
  // llama.cpp's pooling types: 0 none, 1 mean, 2 cls, 3 last, 4 rank (a head on cls).
  switch (pooling) {
    case 0:
      return Unimplemented("GGUF: bert.pooling_type 0 (none): per-token outputs");
    case 1:
      c->pooling = Pooling::kMean;
      break;
    case 3:
      c->pooling = Pooling::kLast;
      break;
    default:
      c->pooling = Pooling::kCls;
  }
  // llama-embedding normalizes (L2) by default; a reranker's score stays raw.
  c->normalize = pooling != 4;
  if (pooling == 4) {
    const GgufTensorInfo* out = f.FindTensor(names::kClsOut);
    if (!out || out->n_dims != 2) {
      return InvalidModel("GGUF: bert.pooling_type 4 (rank) without %s", names::kClsOut);
    }
    c->labels = static_cast<uint32_t>(out->ne[1]);
    c->label_pooler = f.FindTensor(names::kClsPool) != nullptr;
  }
  return VocabSize(f, k, &c->vocab_size);
}

void RenameBertTensors(std::vector<GgufTensorSource>* tensors) {
  for (GgufTensorSource& t : *tensors) {
    unsigned layer = 0;
    int end = 0;
    char kind[8] = {0};
    const char* name = t.name.c_str();
    struct Rename {
      const char* from;
      const char* weight;
      const char* bias;
    };
    static const Rename kRenames[] = {
        {"blk.%u.attn_output_norm.%7[a-z]%n", names::kAttnNorm, names::kAttnNormBias},
        {"blk.%u.layer_output_norm.%7[a-z]%n", names::kFfnNorm, names::kFfnNormBias}};
    for (const Rename& r : kRenames) {
      end = 0;
      if (sscanf(name, r.from, &layer, kind, &end) != 2 ||
          end != static_cast<int>(t.name.size())) {
        continue;
      }
      const std::string k(kind);
      if (k == "weight") t.name = names::LayerName(r.weight, layer);
      if (k == "bias") t.name = names::LayerName(r.bias, layer);
      break;
    }
  }
}

}  // namespace ember::tools
