// Hugging Face import (see hf_import.h): config.json -> ModelConfig, HF tensor names ->
// ember's, then the tokenizer; the result is checked the way the loader will check it.
#include "tools/convert/hf/hf_import.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "runtime/model/tensor_names.h"
#include "runtime/model/weights.h"
#include "tools/convert/hf/hf_models.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/convert/hf/hf_weights.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

// Parses an enum from its lower-case name (the names config.cc prints).
template <typename E>
Status ParseEnum(const JsonFields& f, const char* key, E fallback,
                 std::initializer_list<std::pair<const char*, E>> values, E* out) {
  std::string name;
  EMBER_RETURN_IF_ERROR(f.String(key, false, "", &name));
  if (name.empty()) {
    *out = fallback;
    return Status::Ok();
  }
  std::string allowed;
  for (const auto& [text, value] : values) {
    if (name == text) {
      *out = value;
      return Status::Ok();
    }
    allowed += std::string(allowed.empty() ? "" : ", ") + text;
  }
  return InvalidArgument("config.json: %s '%.40s' is not one of %s", key, name.c_str(),
                         allowed.c_str());
}

// The Config fields of current families (schema/model.fbs), under their own names; the
// layers' kinds as a list of "global" and "sliding".
Status ReadEmberFamilyFields(const JsonFields& f, ModelConfig* c) {
  EMBER_RETURN_IF_ERROR(ParseEnum(f, "rope_scaling", RopeScaling::kNone,
                                  {{"none", RopeScaling::kNone},
                                   {"linear", RopeScaling::kLinear},
                                   {"llama3", RopeScaling::kLlama3},
                                   {"yarn", RopeScaling::kYarn},
                                   {"longrope", RopeScaling::kLongRope}},
                                  &c->rope_scaling));
  struct Number {
    const char* key;
    float* out;
    double fallback;
  };
  double v;
  for (const Number& n : {Number{"rope_scaling_factor", &c->rope_scaling_factor, 1},
                          Number{"rope_low_freq_factor", &c->rope_low_freq_factor, 1},
                          Number{"rope_high_freq_factor", &c->rope_high_freq_factor, 4},
                          Number{"rope_beta_fast", &c->rope_beta_fast, 32},
                          Number{"rope_beta_slow", &c->rope_beta_slow, 1},
                          Number{"rope_attention_factor", &c->rope_attention_factor, 1},
                          Number{"rope_local_theta", &c->rope_local_theta, 0},
                          Number{"embedding_scale", &c->embedding_scale, 1},
                          Number{"attention_scale", &c->attention_scale, 0},
                          Number{"attn_softcap", &c->attn_softcap, 0},
                          Number{"final_softcap", &c->final_softcap, 0}}) {
    EMBER_RETURN_IF_ERROR(f.Float(n.key, false, n.fallback, 0.0, 1e12, &v));
    *n.out = static_cast<float>(v);
  }
  int64_t i;
  EMBER_RETURN_IF_ERROR(f.Int("rope_original_context", false, 0, 0, 1 << 24, &i));
  c->rope_original_context = static_cast<uint32_t>(i);
  EMBER_RETURN_IF_ERROR(f.Int("sliding_window", false, 0, 0, 1 << 24, &i));
  c->sliding_window = static_cast<uint32_t>(i);
  EMBER_RETURN_IF_ERROR(
      f.Bool("rope_yarn_truncate", false, true, &c->rope_yarn_truncate));
  EMBER_RETURN_IF_ERROR(f.Bool("qk_norm", false, false, &c->qk_norm));
  EMBER_RETURN_IF_ERROR(f.Bool("post_norms", false, false, &c->post_norms));
  EMBER_RETURN_IF_ERROR(f.NumberList("rope_freq_factors", &c->rope_freq_factors));
  EMBER_RETURN_IF_ERROR(
      f.NumberList("rope_long_freq_factors", &c->rope_long_freq_factors));
  EMBER_RETURN_IF_ERROR(f.Int("rope_dim", false, 0, 0, 1 << 20, &i));
  c->rope_dim = static_cast<uint32_t>(i);
  c->layer_attention.clear();
  if (f.Has("layer_attention")) {
    std::vector<std::string> kinds;
    EMBER_RETURN_IF_ERROR(f.StringList("layer_attention", &kinds));
    for (const std::string& kind : kinds) {
      if (kind != "global" && kind != "sliding") {
        return InvalidArgument(
            "config.json: layer_attention '%.40s' is not one of global, sliding",
            kind.c_str());
      }
      c->layer_attention.push_back(kind == "sliding" ? LayerAttention::kSliding
                                                     : LayerAttention::kGlobal);
    }
  }
  return Status::Ok();
}

}  // namespace

// model_type "ember" (declared in hf_models.h with the Hugging Face architectures).
Status ImportEmber(const JsonFields& f, HfWeights* w, ModelSpec* spec) {
  ModelConfig& c = spec->config;
  std::string arch;
  EMBER_RETURN_IF_ERROR(f.String("architecture", false, "custom", &arch));
  snprintf(c.architecture, sizeof(c.architecture), "%s", arch.c_str());
  struct Dim {
    const char* key;
    uint32_t* out;
    int64_t max;
  };
  int64_t v;
  for (const Dim& dim :
       {Dim{"d_model", &c.d_model, 1 << 20}, Dim{"n_layers", &c.n_layers, 4096},
        Dim{"n_heads", &c.n_heads, 1 << 20}, Dim{"ffn_dim", &c.ffn_dim, 1 << 20},
        Dim{"vocab_size", &c.vocab_size, 1 << 24},
        Dim{"max_context", &c.max_context, 1 << 24}}) {
    EMBER_RETURN_IF_ERROR(f.Int(dim.key, true, 0, 1, dim.max, &v));
    *dim.out = static_cast<uint32_t>(v);
  }
  EMBER_RETURN_IF_ERROR(f.Int("n_kv_heads", false, c.n_heads, 1, c.n_heads, &v));
  c.n_kv_heads = static_cast<uint32_t>(v);
  EMBER_RETURN_IF_ERROR(f.Int("head_dim", false, c.d_model / c.n_heads, 1, 1 << 20, &v));
  c.head_dim = static_cast<uint32_t>(v);
  double eps, theta;
  EMBER_RETURN_IF_ERROR(f.Float("norm_eps", false, 1e-5, 1e-12, 0.1, &eps));
  EMBER_RETURN_IF_ERROR(f.Float("rope_theta", false, 10000.0, 1.0, 1e12, &theta));
  c.norm_eps = static_cast<float>(eps);
  c.rope_theta = static_cast<float>(theta);
  EMBER_RETURN_IF_ERROR(ParseEnum(
      f, "norm", NormKind::kRmsNorm,
      {{"rmsnorm", NormKind::kRmsNorm}, {"layernorm", NormKind::kLayerNorm}}, &c.norm));
  EMBER_RETURN_IF_ERROR(ParseEnum(
      f, "norm_placement", NormPlacement::kPre,
      {{"pre", NormPlacement::kPre}, {"post", NormPlacement::kPost}}, &c.norm_placement));
  EMBER_RETURN_IF_ERROR(
      ParseEnum(f, "ffn", FfnKind::kGated,
                {{"gated", FfnKind::kGated}, {"plain", FfnKind::kPlain}}, &c.ffn));
  EMBER_RETURN_IF_ERROR(ParseEnum(f, "activation", Activation::kSiLU,
                                  {{"silu", Activation::kSiLU},
                                   {"relu", Activation::kReLU},
                                   {"gelu_tanh", Activation::kGeluTanh},
                                   {"gelu_erf", Activation::kGeluErf}},
                                  &c.activation));
  EMBER_RETURN_IF_ERROR(ParseEnum(f, "positions", PositionKind::kRope,
                                  {{"none", PositionKind::kNone},
                                   {"learned", PositionKind::kLearned},
                                   {"rope", PositionKind::kRope}},
                                  &c.positions));
  EMBER_RETURN_IF_ERROR(ParseEnum(
      f, "rope_pairing", RopePairing::kInterleaved,
      {{"interleaved", RopePairing::kInterleaved}, {"half", RopePairing::kHalf}},
      &c.rope_pairing));
  EMBER_RETURN_IF_ERROR(ParseEnum(f, "mask", AttentionMask::kCausal,
                                  {{"causal", AttentionMask::kCausal},
                                   {"bidirectional", AttentionMask::kBidirectional}},
                                  &c.mask));
  EMBER_RETURN_IF_ERROR(f.Bool("final_norm", false, true, &c.final_norm));
  EMBER_RETURN_IF_ERROR(f.Bool("qkv_bias", false, false, &c.qkv_bias));
  EMBER_RETURN_IF_ERROR(f.Bool("out_bias", false, false, &c.out_bias));
  EMBER_RETURN_IF_ERROR(f.Bool("ffn_bias", false, false, &c.ffn_bias));
  EMBER_RETURN_IF_ERROR(f.Bool("tied_classifier", false, true, &c.tied_classifier));
  EMBER_RETURN_IF_ERROR(f.Bool("output_bias", false, false, &c.output_bias));
  int64_t token_types;
  EMBER_RETURN_IF_ERROR(f.Int("token_types", false, 0, 0, 256, &token_types));
  c.token_types = static_cast<uint32_t>(token_types);
  EMBER_RETURN_IF_ERROR(f.Bool("embedding_norm", false, false, &c.embedding_norm));
  EMBER_RETURN_IF_ERROR(ParseEnum(f, "pooling", Pooling::kNone,
                                  {{"none", Pooling::kNone},
                                   {"mean", Pooling::kMean},
                                   {"cls", Pooling::kCls},
                                   {"last", Pooling::kLast}},
                                  &c.pooling));
  EMBER_RETURN_IF_ERROR(f.Bool("normalize", false, false, &c.normalize));
  int64_t labels;
  EMBER_RETURN_IF_ERROR(f.Int("labels", false, 0, 0, 65536, &labels));
  c.labels = static_cast<uint32_t>(labels);
  EMBER_RETURN_IF_ERROR(f.Bool("label_pooler", false, false, &c.label_pooler));
  if (c.n_heads % c.n_kv_heads != 0) {
    return InvalidArgument("config.json: n_kv_heads %u does not divide n_heads %u",
                           c.n_kv_heads, c.n_heads);
  }
  EMBER_RETURN_IF_ERROR(ReadEmberFamilyFields(f, &c));
  for (const auto& [name, tensor] : w->tensors()) {
    TensorSpec t;
    t.name = name;
    t.shape = tensor->shape;
    EMBER_RETURN_IF_ERROR(w->Read(name, t.shape, &t.values));
    spec->tensors.push_back(std::move(t));
  }
  return Status::Ok();
}

namespace {

Status SpecialIds(const JsonFields& f, const Json& root, SpecialTokens* specials) {
  for (auto [key, out] :
       {std::pair<const char*, int64_t*>{"bos_token_id", &specials->bos_id},
        {"eos_token_id", &specials->eos_id}}) {
    // Newer configs may list several end ids; the first is the end of text.
    const auto list = root.find(key);
    if (list != root.end() && list->is_array() && !list->empty()) {
      const Json& first = list->front();
      if (!first.is_number_unsigned() || first.get<uint64_t>() >= (1u << 24)) {
        return InvalidArgument("config.json: '%s' must list token ids", key);
      }
      *out = static_cast<int64_t>(first.get<uint64_t>());
    } else {
      EMBER_RETURN_IF_ERROR(f.Int(key, false, -1, 0, 1 << 24, out));
    }
  }
  return Status::Ok();
}

// Every end-of-generation id: eos_token_id of config.json (a number or a list; for a
// multimodal config also its text_config's) and of generation_config.json, and the
// tokenizer's EOS. Llama 3 Instruct ends turns with 128009 (<|eot_id|>) and 128008
// besides 128001; Gemma with 106 (<end_of_turn>) besides 1. Their token types stay as
// the tokenizer says (ending generation on a token does not change how text splits).
Status StopIds(const std::string& dir, const Json& root, TokenizerSpec* tok) {
  std::vector<int32_t> ids;
  // A number or a list of numbers. Neither is copied nor printed whole: a list nested a
  // million deep would take as many stack frames to copy or print.
  const auto add = [&](const Json& value, const std::string& where) -> Status {
    if (value.is_null()) return Status::Ok();
    const auto add_id = [&](const Json& id) -> Status {
      if (!id.is_number_unsigned() || id.get<uint64_t>() >= tok->pieces.size()) {
        return InvalidArgument(
            "%s: eos_token_id %.40s is not a token id below %zu", where.c_str(),
            id.is_number() ? id.dump().c_str() : id.type_name(), tok->pieces.size());
      }
      const int32_t v = static_cast<int32_t>(id.get<uint64_t>());
      if (std::find(ids.begin(), ids.end(), v) == ids.end()) ids.push_back(v);
      return Status::Ok();
    };
    if (!value.is_array()) return add_id(value);
    for (const Json& id : value) EMBER_RETURN_IF_ERROR(add_id(id));
    return Status::Ok();
  };
  if (tok->eos_id >= 0) ids.push_back(tok->eos_id);
  const auto text_config = root.find("text_config");
  for (const Json* config :
       {&root, text_config != root.end() ? &*text_config : nullptr}) {
    if (!config || !config->is_object()) continue;
    const auto eos = config->find("eos_token_id");
    if (eos != config->end()) EMBER_RETURN_IF_ERROR(add(*eos, "config.json"));
  }
  const std::string generation_path = dir + "/generation_config.json";
  if (access(generation_path.c_str(), R_OK) == 0) {
    Json generation;
    EMBER_RETURN_IF_ERROR(ReadJsonFile(generation_path, &generation));
    if (!generation.is_object()) {
      return InvalidArgument("%s: not a JSON object", generation_path.c_str());
    }
    const auto eos = generation.find("eos_token_id");
    if (eos != generation.end()) EMBER_RETURN_IF_ERROR(add(*eos, generation_path));
  }
  tok->stop_ids = ids;
  return Status::Ok();
}

Status ImportHfUnguarded(const std::string& dir, ModelSpec* spec) {
  const std::string config_path = dir + "/config.json";
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(config_path, &root));
  if (!root.is_object())
    return InvalidArgument("%s: not a JSON object", config_path.c_str());
  const JsonFields f(root, "config.json");
  std::string model_type;
  EMBER_RETURN_IF_ERROR(f.String("model_type", true, "", &model_type));
  if (model_type != "gpt2" && model_type != "bert" && !IsDecoderFamily(model_type) &&
      model_type != "ember") {
    return Unimplemented(
        "config.json: model_type '%.40s' is not supported (ember converts gpt2, bert, "
        "llama, mistral, qwen2, qwen3, gemma2, gemma3_text, gemma3, idefics3, smolvlm, "
        "phi3 and ember)",
        model_type.c_str());
  }
  HfWeights weights;
  EMBER_RETURN_IF_ERROR(weights.Open(dir));
  *spec = ModelSpec();
  if (model_type == "gpt2") {
    EMBER_RETURN_IF_ERROR(ImportGpt2(f, &weights, spec));
  } else if (model_type == "bert") {
    EMBER_RETURN_IF_ERROR(ImportBert(f, &weights, spec));
  } else if (IsDecoderFamily(model_type)) {
    EMBER_RETURN_IF_ERROR(ImportDecoder(model_type, root, &weights, spec));
  } else {
    EMBER_RETURN_IF_ERROR(ImportEmber(f, &weights, spec));
  }
  EMBER_RETURN_IF_ERROR(weights.CheckAllUsed());
  EMBER_RETURN_IF_ERROR(ReadSentenceTransformers(dir, spec));
  SpecialTokens specials;
  EMBER_RETURN_IF_ERROR(SpecialIds(f, root, &specials));
  EMBER_RETURN_IF_ERROR(
      ReadHfTokenizer(dir, spec->config.vocab_size, specials, &spec->tokenizer));
  EMBER_RETURN_IF_ERROR(StopIds(dir, root, &spec->tokenizer));
  EMBER_RETURN_IF_ERROR(ReadSentenceTransformersPrompts(dir, &spec->tokenizer));
  if (spec->vision) EMBER_RETURN_IF_ERROR(ReadVisionProcessor(dir, spec));
  spec->description = "Hugging Face " + model_type + " model from " + dir;
  return CheckSpecTensors(*spec);
}

}  // namespace

Status ImportHf(const std::string& dir, ModelSpec* spec) {
  return CatchJsonErrors(dir, [&] { return ImportHfUnguarded(dir, spec); });
}

Status CheckSpecTensors(const ModelSpec& spec) {
  std::vector<Tensor> views(spec.tensors.size());
  for (size_t i = 0; i < views.size(); ++i) {
    const TensorSpec& t = spec.tensors[i];
    Tensor& v = views[i];
    v.name = t.name.c_str();
    v.dtype = DType::kF32;  // the shapes and names are what matter here
    v.layout = Layout::kRowMajor;
    if (t.shape.empty() || t.shape.size() > kMaxTensorDims) {
      return InvalidArgument("tensor '%.100s' has %zu dimensions", t.name.c_str(),
                             t.shape.size());
    }
    v.n_dims = static_cast<uint32_t>(t.shape.size());
    for (size_t d = 0; d < t.shape.size(); ++d) v.shape[d] = t.shape[d];
  }
  Weights weights;
  EMBER_RETURN_IF_ERROR(
      BindWeights(spec.config, views, &weights, spec.vision.has_value()));
  if (!spec.vision) return Status::Ok();
  VisionWeights vision;
  return BindVisionWeights(*spec.vision, spec.config.d_model, views, &vision);
}

}  // namespace ember::tools
