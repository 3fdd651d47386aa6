// GGUF architectures (see gguf_arch.h): {arch}.* keys to ModelConfig, tensors to ember's.
#include "tools/convert/gguf/gguf_arch.h"

#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "runtime/model/tensor_names.h"
#include "tools/convert/gguf/gguf_arch_keys.h"
#include "tools/convert/gguf/gguf_family.h"

namespace ember::tools {
namespace {


// Tensors the architecture has no place for, with what they mean (else the binder's
// message).
Status ExplainUnsupportedTensor(std::string_view name, const ModelConfig& c) {
  static const struct {
    const char* part;
    const char* meaning;
  } kHints[] = {{"_exps", "a mixture of experts"},
                {"ffn_gate_inp", "a mixture of experts"},
                {"attn_q_norm", "a norm on queries and keys"},
                {"attn_k_norm", "a norm on queries and keys"},
                {"post_attention_norm", "norms after the attention and FFN"},
                {"post_ffw_norm", "norms after the attention and FFN"}};
  for (const auto& hint : kHints) {
    const bool expected = (c.qk_norm && strstr(hint.part, "attn_") == hint.part) ||
                          (c.post_norms && strstr(hint.part, "post_") == hint.part);
    if (!expected && name.find(hint.part) != std::string_view::npos) {
      return Unimplemented(
          "GGUF: tensor %s holds %s, which ember does not support for %s",
          GgufQuote(name).c_str(), hint.meaning, c.architecture);
    }
  }
  return Status::Ok();
}

GgufTensorSource Whole(const GgufTensorInfo& t) {
  GgufTensorSource s;
  s.name = std::string(t.name);
  s.source = &t;
  s.shape = t.n_dims == 1 ? std::vector<uint64_t>{t.ne[0]}
                          : std::vector<uint64_t>{t.ne[1], t.ne[0]};
  return s;
}

// Splits a fused tensor by rows (a matrix) or elements (a vector) into parts of the
// given sizes under the given names.
Status Split(const GgufTensorInfo& t,
             const std::vector<std::pair<std::string, uint64_t>>& parts,
             std::vector<GgufTensorSource>* out) {
  uint64_t total = 0;
  for (const auto& part : parts) total += part.second;
  const uint64_t rows = t.n_dims == 1 ? t.ne[0] : t.ne[1];
  if (rows != total) {
    return InvalidModel("GGUF: tensor %s has %llu rows; its parts need %llu",
                        GgufQuote(t.name).c_str(), static_cast<unsigned long long>(rows),
                        static_cast<unsigned long long>(total));
  }
  uint64_t first = 0;
  for (const auto& [name, n] : parts) {
    GgufTensorSource s = Whole(t);
    s.name = name;
    s.shape[0] = n;
    s.first_row = first;
    first += n;
    out->push_back(std::move(s));
  }
  return Status::Ok();
}

// Every tensor as ember names it; attn_qkv split into Q, K and V, and Phi-3's ffn_up of
// 2 ffn_dim rows (gate, then up: llama.cpp's fused SwiGLU) into gate and up. RoPE factor
// tensors are config (ReadGgufRopeFactors), not weights.
Status MapTensors(const GgufFile& f, const ModelConfig& c, bool fused_ffn,
                  std::vector<GgufTensorSource>* out) {
  out->clear();
  for (const GgufTensorInfo& t : f.tensors()) {
    if (IsGgufRopeFactorTensor(t.name)) continue;
    EMBER_RETURN_IF_ERROR(ExplainUnsupportedTensor(t.name, c));
    if (t.n_dims > 2) {
      return InvalidModel("GGUF: tensor %s has %u dimensions (ember's have 1 or 2)",
                          GgufQuote(t.name).c_str(), t.n_dims);
    }
    unsigned layer = 0;
    int end = 0;
    const std::string name(t.name);
    char kind[8] = {0};
    if (sscanf(name.c_str(), "blk.%u.attn_qkv.%7[a-z]%n", &layer, kind, &end) == 2 &&
        end == static_cast<int>(name.size()) &&
        (strcmp(kind, "weight") == 0 || strcmp(kind, "bias") == 0)) {
      const bool weight = strcmp(kind, "weight") == 0;
      EMBER_RETURN_IF_ERROR(
          Split(t,
                {{names::LayerName(weight ? names::kAttnQ : names::kAttnQBias, layer),
                  c.q_dim()},
                 {names::LayerName(weight ? names::kAttnK : names::kAttnKBias, layer),
                  c.kv_dim()},
                 {names::LayerName(weight ? names::kAttnV : names::kAttnVBias, layer),
                  c.kv_dim()}},
                out));
      continue;
    }
    if (fused_ffn && sscanf(name.c_str(), "blk.%u.ffn_up.weight%n", &layer, &end) == 1 &&
        end == static_cast<int>(name.size()) && t.n_dims == 2 &&
        t.ne[1] == 2 * uint64_t{c.ffn_dim} &&
        !f.FindTensor(names::LayerName(names::kFfnGate, layer))) {
      EMBER_RETURN_IF_ERROR(Split(t,
                                  {{names::LayerName(names::kFfnGate, layer), c.ffn_dim},
                                   {names::LayerName(names::kFfnUp, layer), c.ffn_dim}},
                                  out));
      continue;
    }
    out->push_back(Whole(t));
  }
  return Status::Ok();
}

bool HasTensor(const std::vector<GgufTensorSource>& tensors, const std::string& name) {
  for (const GgufTensorSource& t : tensors) {
    if (t.name == name) return true;
  }
  return false;
}

// A classifier stored as an exact copy of the embedding (llama.cpp's llama2.c converter
// writes one) is the embedding: the model is tied, and the file keeps one copy.
void TieIdenticalClassifier(std::vector<GgufTensorSource>* tensors, bool* tied) {
  const GgufTensorInfo* embedding = nullptr;
  size_t output = tensors->size();
  for (size_t i = 0; i < tensors->size(); ++i) {
    if ((*tensors)[i].name == names::kTokEmbedding) embedding = (*tensors)[i].source;
    if ((*tensors)[i].name == names::kOutput) output = i;
  }
  *tied = output == tensors->size();
  if (*tied || !embedding) return;
  const GgufTensorInfo* o = (*tensors)[output].source;
  if (o->type == embedding->type && o->n_dims == embedding->n_dims &&
      memcmp(o->ne, embedding->ne, sizeof(o->ne)) == 0 &&
      memcmp(o->data, embedding->data, o->size_bytes) == 0) {
    tensors->erase(tensors->begin() + static_cast<std::ptrdiff_t>(output));
    *tied = true;
  }
}

}  // namespace

Status VocabSize(const GgufFile& f, const ArchKeys& keys, uint32_t* vocab) {
  const GgufTensorInfo* embedding = f.FindTensor(names::kTokEmbedding);
  if (!embedding || embedding->n_dims != 2) {
    return InvalidModel("GGUF: no 2-D tensor %s (the token embedding)",
                        names::kTokEmbedding);
  }
  if (embedding->ne[1] > (1u << 24)) {
    return InvalidModel("GGUF: a vocabulary of %llu tokens (at most 2^24)",
                        static_cast<unsigned long long>(embedding->ne[1]));
  }
  *vocab = static_cast<uint32_t>(embedding->ne[1]);
  uint32_t stated;
  EMBER_RETURN_IF_ERROR(keys.Dim("vocab_size", false, *vocab, 1 << 24, &stated));
  if (stated != *vocab) {
    return InvalidModel("GGUF: %s is %u but %s has %u rows",
                        keys.Key("vocab_size").c_str(), stated, names::kTokEmbedding,
                        *vocab);
  }
  return Status::Ok();
}

namespace {

// A decoder written as an embedding model (Qwen3-Embedding: `{arch}.pooling_type`, which
// llama.cpp's converter writes from a sentence-transformers directory): its pooling, and
// unit length as llama-embedding gives by default. 0 (or no key): a language model.
Status DecoderPooling(const GgufFile& f, const ArchKeys& k, ModelConfig* c) {
  int64_t pooling;
  EMBER_RETURN_IF_ERROR(f.GetInt(k.Key("pooling_type"), false, 0, 0, 4, &pooling));
  // llama.cpp's pooling types: 0 none, 1 mean, 2 cls, 3 last, 4 rank.
  static const Pooling kPoolings[] = {Pooling::kNone, Pooling::kMean, Pooling::kCls,
                                      Pooling::kLast};
  if (pooling == 4) {
    return Unimplemented(
        "GGUF: %s 4 (rank) on a decoder: convert the Hugging Face reranker with "
        "`ember convert --hf DIR --rerank qwen3`",
        k.Key("pooling_type").c_str());
  }
  c->pooling = kPoolings[pooling];
  c->normalize = pooling != 0;
  return Status::Ok();
}

// The families on Llama's blocks (gguf_family.h): the same keys; biases are in the file
// or not; RoPE on halves but for llama (llama.cpp's converter permutes Llama's Q/K rows
// to interleaved pairs and leaves the others' as Hugging Face has them).
Status LlamaLikeConfig(const GgufFile& f, const GgufFamily& family, ModelConfig* c) {
  const char* arch = family.arch;
  const ArchKeys k(f, arch);
  EMBER_RETURN_IF_ERROR(k.CheckAllKnown({"context_length",
                                         "embedding_length",
                                         "block_count",
                                         "feed_forward_length",
                                         "attention.head_count",
                                         "attention.head_count_kv",
                                         "attention.key_length",
                                         "attention.value_length",
                                         "attention.layer_norm_rms_epsilon",
                                         "rope.freq_base",
                                         "rope.dimension_count",
                                         "rope.scaling.type",
                                         "rope.scaling.factor",
                                         "rope.scaling.original_context_length",
                                         "rope.scaling.finetuned",
                                         "rope.scale_linear",
                                         "vocab_size",
                                         "attention.sliding_window",
                                         "expert_count",
                                         "expert_used_count",
                                         "tensor_data_layout",
                                         "pooling_type"},
                                        family.extra_keys));
  EMBER_RETURN_IF_ERROR(k.Dim("embedding_length", true, 0, 1 << 20, &c->d_model));
  EMBER_RETURN_IF_ERROR(k.Dim("block_count", true, 0, 4096, &c->n_layers));
  EMBER_RETURN_IF_ERROR(k.Dim("feed_forward_length", true, 0, 1 << 20, &c->ffn_dim));
  EMBER_RETURN_IF_ERROR(k.Dim("attention.head_count", true, 0, 1 << 16, &c->n_heads));
  EMBER_RETURN_IF_ERROR(
      k.Dim("attention.head_count_kv", false, c->n_heads, c->n_heads, &c->n_kv_heads));
  EMBER_RETURN_IF_ERROR(k.Dim("attention.key_length", false, c->d_model / c->n_heads,
                              1 << 16, &c->head_dim));
  uint32_t value_length, rope_dims, experts, window;
  EMBER_RETURN_IF_ERROR(
      k.Dim("attention.value_length", false, c->head_dim, 1 << 16, &value_length));
  EMBER_RETURN_IF_ERROR(
      k.Dim("rope.dimension_count", false, c->head_dim, 1 << 16, &rope_dims));
  EMBER_RETURN_IF_ERROR(
      k.Float("attention.layer_norm_rms_epsilon", 1e-5, 1e-12, 0.1, &c->norm_eps));
  EMBER_RETURN_IF_ERROR(k.Float("rope.freq_base", 10000.0, 1.0, 1e12, &c->rope_theta));
  if (!(c->rope_theta > 1.0f && c->rope_theta < 1e12f)) {  // as the loader requires
    return InvalidModel("GGUF: %s is %g (more than 1, less than 1e12 allowed)",
                        k.Key("rope.freq_base").c_str(), c->rope_theta);
  }
  EMBER_RETURN_IF_ERROR(k.RopeScaling(c));
  int64_t count;
  EMBER_RETURN_IF_ERROR(f.GetInt(k.Key("expert_count"), false, 0, 0, 1 << 16, &count));
  experts = static_cast<uint32_t>(count);
  if (experts > 0) {
    return Unimplemented("GGUF: a mixture of %u experts (%s) is not supported", experts,
                         k.Key("expert_count").c_str());
  }
  if (c->n_heads % c->n_kv_heads != 0 || c->head_dim % 2 != 0 || c->head_dim == 0 ||
      (!k.Has("attention.key_length") && c->d_model % c->n_heads != 0) ||
      c->q_dim() > (1u << 20)) {
    return InvalidModel(
        "GGUF: embedding length %u, %u heads, %u key/value heads and head_dim %u do "
        "not fit together",
        c->d_model, c->n_heads, c->n_kv_heads, c->head_dim);
  }
  if (value_length != c->head_dim) {
    return Unimplemented(
        "GGUF: key length %u and value length %u differ (ember's heads "
        "have one head_dim)",
        c->head_dim, value_length);
  }
  EMBER_RETURN_IF_ERROR(
      f.GetInt(k.Key("attention.sliding_window"), false, 0, 0, INT32_MAX, &count));
  window = static_cast<uint32_t>(count);
  snprintf(c->architecture, sizeof(c->architecture), "%s", arch);
  c->norm = NormKind::kRmsNorm;
  c->norm_placement = NormPlacement::kPre;
  c->final_norm = true;
  c->ffn = FfnKind::kGated;
  c->activation = Activation::kSiLU;
  c->positions = PositionKind::kRope;
  c->rope_pairing = family.pairing;
  c->mask = AttentionMask::kCausal;
  EMBER_RETURN_IF_ERROR(k.Dim("context_length", true, 0, 1 << 24, &c->max_context));
  EMBER_RETURN_IF_ERROR(ApplyGgufFamily(family, window, rope_dims, c));
  EMBER_RETURN_IF_ERROR(ReadGgufRopeFactors(f, family, c));
  EMBER_RETURN_IF_ERROR(DecoderPooling(f, k, c));
  return VocabSize(f, k, &c->vocab_size);
}

Status Gpt2Config(const GgufFile& f, ModelConfig* c) {
  const ArchKeys k(f, "gpt2");
  EMBER_RETURN_IF_ERROR(k.CheckAllKnown(
      {"context_length", "embedding_length", "block_count", "feed_forward_length",
       "attention.head_count", "attention.layer_norm_epsilon", "vocab_size"}));
  EMBER_RETURN_IF_ERROR(k.Dim("embedding_length", true, 0, 1 << 20, &c->d_model));
  EMBER_RETURN_IF_ERROR(k.Dim("block_count", true, 0, 4096, &c->n_layers));
  EMBER_RETURN_IF_ERROR(
      k.Dim("feed_forward_length", false, 4 * int64_t{c->d_model}, 1 << 20, &c->ffn_dim));
  EMBER_RETURN_IF_ERROR(k.Dim("attention.head_count", true, 0, 1 << 16, &c->n_heads));
  EMBER_RETURN_IF_ERROR(
      k.Float("attention.layer_norm_epsilon", 1e-5, 1e-12, 0.1, &c->norm_eps));
  EMBER_RETURN_IF_ERROR(k.Dim("context_length", true, 0, 1 << 24, &c->max_context));
  if (c->d_model % c->n_heads != 0) {
    return InvalidModel("GGUF: gpt2.embedding_length %u is not divisible by %u heads",
                        c->d_model, c->n_heads);
  }
  snprintf(c->architecture, sizeof(c->architecture), "gpt2");
  c->n_kv_heads = c->n_heads;
  c->head_dim = c->d_model / c->n_heads;
  c->norm = NormKind::kLayerNorm;
  c->norm_placement = NormPlacement::kPre;
  c->final_norm = true;
  c->ffn = FfnKind::kPlain;
  c->activation = Activation::kGeluTanh;  // GGML's gelu is the tanh approximation
  c->positions = PositionKind::kLearned;
  c->mask = AttentionMask::kCausal;
  c->qkv_bias = c->out_bias = c->ffn_bias = true;
  return VocabSize(f, k, &c->vocab_size);
}

}  // namespace

Status MapGgufModel(const GgufFile& f, uint32_t max_context, ModelConfig* c,
                    std::vector<GgufTensorSource>* tensors) {
  *c = ModelConfig();
  std::string_view arch;
  EMBER_RETURN_IF_ERROR(f.GetString("general.architecture", true, &arch));
  const GgufFamily* family = FindGgufFamily(arch);
  if (family) {
    EMBER_RETURN_IF_ERROR(LlamaLikeConfig(f, *family, c));
  } else if (arch == "gpt2") {
    EMBER_RETURN_IF_ERROR(Gpt2Config(f, c));
  } else if (arch == "bert") {
    EMBER_RETURN_IF_ERROR(BertConfig(f, c));
  } else {
    return Unimplemented(
        "GGUF: architecture %s is not supported (ember converts llama, qwen2, qwen3, "
        "gemma3, phi3, gpt2 and bert)",
        GgufQuote(arch).c_str());
  }
  if (max_context != 0) {
    if (c->positions == PositionKind::kLearned) {
      return InvalidArgument("--ctx: %s has a learned position table of %u positions",
                             c->architecture, c->max_context);
    }
    c->max_context = max_context;
  }
  EMBER_RETURN_IF_ERROR(MapTensors(f, *c, family && family->phi3, tensors));
  if (arch == "bert") RenameBertTensors(tensors);
  TieIdenticalClassifier(tensors, &c->tied_classifier);
  if (c->positions == PositionKind::kRope) {
    // Biases are in the file or not (Llama-architecture models with biases exist).
    c->qkv_bias = HasTensor(*tensors, names::LayerName(names::kAttnQBias, 0));
    c->out_bias = HasTensor(*tensors, names::LayerName(names::kAttnOutBias, 0));
    c->ffn_bias = HasTensor(*tensors, names::LayerName(names::kFfnUpBias, 0));
  }
  c->output_bias = HasTensor(*tensors, names::kOutputBias);
  return Status::Ok();
}

}  // namespace ember::tools
