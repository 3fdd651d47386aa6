// The decoder families with Llama's tensor names (see hf_models.h), told apart by data:
// each family's config class defaults and its departures from Llama (biases, qk-norm,
// Gemma's norms and scales, Phi-3's fused projections, sliding layers), and the text
// models of multimodal checkpoints (Gemma 3's, Idefics3's and SmolVLM's).
#include <cmath>
#include <cstring>

#include "kernels/half.h"
#include "runtime/model/tensor_names.h"
#include "tools/convert/hf/hf_mapper.h"
#include "tools/convert/hf/hf_models.h"
#include "tools/convert/hf/hf_rope.h"

namespace ember::tools {
namespace {

enum class Bias {
  kNone,       // no projection has a bias (Mistral, Phi-3)
  kAttention,  // attention_bias: q, k, v and o (Llama, Qwen3, Gemma)
  kQkv,        // always q, k and v, never o (Qwen2)
};

// A family: the defaults its config class has for keys a config.json may leave out
// (transformers writes only values that differ from a default), and how it differs
// from Llama.
struct Family {
  std::string model_type;
  bool tied = false;
  double theta = 1e4, eps = 1e-6;
  std::string activation = "silu";             // hidden_activation (Gemma) or hidden_act
  int64_t head_dim = 0;                        // 0: hidden_size / num_attention_heads
  int64_t kv_heads = 0;                        // 0: num_attention_heads
  double attn_softcap = 0, final_softcap = 0;  // 0: none
  double local_theta = 0;  // rope_local_base_freq's default (0: no local base)
  SlidingLayout sliding;
  Bias bias = Bias::kNone;
  bool mlp_bias = false;  // Llama's mlp_bias key
  bool qk_norm = false;   // self_attn.q_norm, k_norm (Qwen3, Gemma 3)
  bool gemma = false;     // (1 + w) norms, sqrt(d) embedding scale, post norms, scalar
  bool fused = false;     // Phi-3: qkv_proj and gate_up_proj
};

// The transformers config classes' defaults (LlamaConfig, MistralConfig, ...).
bool FindFamily(const std::string& model_type, Family* out) {
  Family f;
  f.model_type = model_type;
  if (model_type == "llama") {
    f.bias = Bias::kAttention;
    f.mlp_bias = true;
  } else if (model_type == "mistral") {
    f.kv_heads = 8;
    f.sliding.all_layers = true;  // every layer slides when sliding_window is set
    f.sliding.default_window = 4096;
  } else if (model_type == "qwen2" || model_type == "qwen3") {
    f.sliding.qwen = true;
    f.sliding.default_window = 4096;
    f.bias = model_type == "qwen2" ? Bias::kQkv : Bias::kAttention;
    f.head_dim = model_type == "qwen3" ? 128 : 0;
    f.qk_norm = model_type == "qwen3";
  } else if (model_type == "gemma2" || model_type == "gemma3_text") {
    const bool gemma3 = model_type == "gemma3_text";
    f.tied = true;
    f.theta = gemma3 ? 1e6 : 1e4;
    f.activation = "gelu_pytorch_tanh";
    f.head_dim = 256;
    f.kv_heads = 4;
    f.attn_softcap = gemma3 ? 0 : 50;
    f.final_softcap = gemma3 ? 0 : 30;
    f.local_theta = gemma3 ? 1e4 : 0;
    f.sliding.default_pattern = gemma3 ? 6 : 2;  // every pattern-th layer is global
    f.sliding.default_window = 4096;
    f.bias = Bias::kAttention;
    f.qk_norm = gemma3;
    f.gemma = true;
  } else if (model_type == "phi3") {
    f.eps = 1e-5;
    f.sliding.all_layers = true;
    f.fused = true;
  } else {
    return false;
  }
  *out = f;
  return true;
}

// Keys whose non-default values change the math in a way ember does not reproduce.
Status RefuseUnsupported(const JsonFields& f) {
  if (f.Has("quantization_config")) {
    return Unimplemented(
        "config.json: quantization_config: pre-quantized checkpoints are not read "
        "(convert the float weights; --dtype quantizes)");
  }
  return Status::Ok();
}

// Phi3's partial_rotary_factor (Phi-4-mini: 0.75): RoPE turns the first
// int(head_dim * factor) values of each head. Other families' modeling code rotates whole
// heads, so there it is refused.
Status ReadPartialRotary(const JsonFields& f, const Family& family, ModelConfig* c) {
  double partial;
  EMBER_RETURN_IF_ERROR(f.Float("partial_rotary_factor", false, 1.0, 0.0, 1.0, &partial));
  if (partial == 1.0) return Status::Ok();
  const uint32_t dims = static_cast<uint32_t>(c->head_dim * partial);
  if (family.model_type != "phi3" || dims == 0 || dims % 2 != 0) {
    return Unimplemented(
        "config.json: partial_rotary_factor %g (RoPE on %u of %u values of a head) is "
        "not supported for %s",
        partial, dims, c->head_dim, family.model_type.c_str());
  }
  c->rope_dim = dims;
  return Status::Ok();
}

// The model dtype's rounding of sqrt(d_model), Gemma's embedding normalizer:
// transformers makes it a float32 tensor and casts it to the embedding's dtype
// (bfloat16 for Google's checkpoints: sqrt(640) = 25.298 becomes 25.25). The dtype is
// torch_dtype (dtype in transformers 5) of the text config or else of config.json's top
// level (a multimodal checkpoint's), else the stored embedding's.
Status EmbeddingScale(const Json& config, const Json& root, const HfWeights& w,
                      const std::string& embedding, int64_t d_model, float* scale) {
  std::string dtype;
  for (const Json* level : {&config, &root}) {
    const JsonFields f(*level, "config.json");
    if (!dtype.empty()) break;
    EMBER_RETURN_IF_ERROR(
        f.String(f.Has("torch_dtype") ? "torch_dtype" : "dtype", false, "", &dtype));
  }
  if (dtype.empty()) {
    const auto it = w.tensors().find(embedding);
    const std::string stored = it == w.tensors().end() ? "F32" : it->second->dtype;
    dtype = stored == "BF16" ? "bfloat16" : stored == "F16" ? "float16" : "float32";
  }
  const float sqrt_d = static_cast<float>(std::sqrt(static_cast<double>(d_model)));
  if (dtype == "bfloat16") {
    *scale = kernels::BFloat16ToFloat(kernels::FloatToBFloat16(sqrt_d));
  } else if (dtype == "float16") {
    *scale = kernels::HalfToFloat(kernels::FloatToHalf(sqrt_d));
  } else if (dtype == "float32" || dtype == "float64") {
    *scale = sqrt_d;
  } else {
    return InvalidArgument("config.json: torch_dtype '%.40s' is not a float type",
                           dtype.c_str());
  }
  return Status::Ok();
}

std::string Layer(const char* format, uint32_t i) { return names::LayerName(format, i); }

// Idefics3ForConditionalGeneration's model types (SmolVLM's is Idefics3's).
bool IsIdefics3(const std::string& model_type) {
  return model_type == "idefics3" || model_type == "smolvlm";
}

}  // namespace

bool IsDecoderFamily(const std::string& model_type) {
  Family family;
  return model_type == "gemma3" || IsIdefics3(model_type) ||
         FindFamily(model_type, &family);
}

Status ImportDecoder(const std::string& model_type, const Json& root, HfWeights* w,
                     ModelSpec* spec) {
  // Multimodal checkpoints, their config in text_config. Gemma 3's: the language model
  // of Gemma3ForConditionalGeneration, its tensors under language_model.model.
  // (transformers < 4.52) or model.language_model. Idefics3's (SmolVLM's): a Llama
  // (AutoModel of text_config, model_type llama unless it says otherwise) under
  // model.text_model., lm_head at the root.
  const bool idefics3 = IsIdefics3(model_type);
  const bool multimodal = model_type == "gemma3" || idefics3;
  // find, not operator[]: nlohmann's const operator[] on a missing key reads freed memory.
  const auto text_config = root.find("text_config");
  if (multimodal && (text_config == root.end() || !text_config->is_object())) {
    return InvalidArgument("config.json: a %s model needs a text_config object",
                           model_type.c_str());
  }
  const Json& config = multimodal ? *text_config : root;
  const JsonFields f(config, multimodal ? "config.json text_config" : "config.json");
  std::string text_type = multimodal ? "gemma3_text" : model_type;
  if (idefics3) {
    EMBER_RETURN_IF_ERROR(f.String("model_type", false, "llama", &text_type));
    if (text_type != "llama") {
      return Unimplemented(
          "config.json text_config: model_type '%.40s' (a %s model's text model is read "
          "as llama)",
          text_type.c_str(), model_type.c_str());
    }
  }
  Family family;
  if (!FindFamily(text_type, &family)) {
    return Unimplemented("config.json: model_type '%.40s' is not a decoder family",
                         model_type.c_str());
  }
  std::string prefix = "model.", head = "lm_head.weight";
  if (idefics3) {
    prefix = "model.text_model.";
  } else if (multimodal) {
    const bool old_names = w->Has("language_model.model.embed_tokens.weight");
    prefix = old_names ? "language_model.model." : "model.language_model.";
    head = old_names ? "language_model.lm_head.weight" : "lm_head.weight";
    if (root.find("vision_config") == root.end()) {
      for (const char* p : {"vision_tower.", "multi_modal_projector.",
                            "model.vision_tower.", "model.multi_modal_projector."}) {
        w->IgnorePrefix(p);
      }
    }
  }
  EMBER_RETURN_IF_ERROR(RefuseUnsupported(f));
  if (multimodal) {
    EMBER_RETURN_IF_ERROR(RefuseUnsupported(JsonFields(root, "config.json")));
  }
  // EmbeddingGemma: Gemma 3 with bidirectional attention, saved as Gemma3TextModel
  // (its tensors without "model.").
  bool bidirectional;
  EMBER_RETURN_IF_ERROR(
      f.Bool("use_bidirectional_attention", false, false, &bidirectional));
  if (bidirectional && family.model_type != "gemma3_text") {
    return Unimplemented("config.json: use_bidirectional_attention is read for Gemma 3");
  }
  if (!multimodal && !w->Has(prefix + "embed_tokens.weight") &&
      w->Has("embed_tokens.weight")) {
    prefix = "";
  }

  ModelConfig& c = spec->config;
  int64_t d, ffn, layers, heads, kv_heads, head_dim, positions, vocab;
  double eps, scalar, attn_softcap, final_softcap;
  std::string act;
  bool tied, attention_bias = false, mlp_bias = false;
  EMBER_RETURN_IF_ERROR(f.Int("hidden_size", true, 0, 1, 1 << 20, &d));
  EMBER_RETURN_IF_ERROR(f.Int("intermediate_size", true, 0, 1, 1 << 20, &ffn));
  EMBER_RETURN_IF_ERROR(f.Int("num_hidden_layers", true, 0, 1, 4096, &layers));
  EMBER_RETURN_IF_ERROR(f.Int("num_attention_heads", true, 0, 1, 1 << 20, &heads));
  EMBER_RETURN_IF_ERROR(f.Int("num_key_value_heads", false,
                              family.kv_heads ? family.kv_heads : heads, 1, heads,
                              &kv_heads));
  EMBER_RETURN_IF_ERROR(f.Int("head_dim", false,
                              family.head_dim ? family.head_dim : d / heads, 2, 1 << 20,
                              &head_dim));
  EMBER_RETURN_IF_ERROR(
      f.Int("max_position_embeddings", true, 0, 1, 1 << 24, &positions));
  EMBER_RETURN_IF_ERROR(f.Int("vocab_size", true, 0, 1, 1 << 24, &vocab));
  EMBER_RETURN_IF_ERROR(f.Float("rms_norm_eps", false, family.eps, 1e-12, 0.1, &eps));
  // Gemma's modeling code reads hidden_activation alone (a hidden_act beside it is
  // ignored), the others hidden_act.
  EMBER_RETURN_IF_ERROR(
      f.String(family.gemma ? "hidden_activation" : "hidden_act", false,
               family.activation, &act));
  EMBER_RETURN_IF_ERROR(f.Bool("tie_word_embeddings", false, family.tied, &tied));
  if (idefics3 && root.contains("tie_word_embeddings")) {
    // Idefics3ForConditionalGeneration ties lm_head by the top-level key (its class
    // default false), whatever text_config says.
    EMBER_RETURN_IF_ERROR(
        JsonFields(root, "config.json").Bool("tie_word_embeddings", false, false, &tied));
  }
  if (family.bias == Bias::kAttention) {
    EMBER_RETURN_IF_ERROR(f.Bool("attention_bias", false, false, &attention_bias));
  }
  if (family.mlp_bias) EMBER_RETURN_IF_ERROR(f.Bool("mlp_bias", false, false, &mlp_bias));
  if (heads % kv_heads != 0 || head_dim % 2 != 0) {
    return InvalidArgument(
        "config.json: %lld heads, %lld key/value heads and head_dim %lld do not fit "
        "together",
        static_cast<long long>(heads), static_cast<long long>(kv_heads),
        static_cast<long long>(head_dim));
  }
  snprintf(c.architecture, sizeof(c.architecture), "%s", family.model_type.c_str());
  c.d_model = d;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.head_dim = head_dim;
  c.ffn_dim = ffn;
  c.vocab_size = vocab;
  c.max_context = positions;
  c.norm = NormKind::kRmsNorm;
  c.norm_placement = NormPlacement::kPre;
  c.norm_eps = static_cast<float>(eps);
  c.final_norm = true;
  c.ffn = FfnKind::kGated;
  EMBER_RETURN_IF_ERROR(ParseHfActivation(act, &c.activation));
  c.positions = PositionKind::kRope;
  c.rope_pairing = RopePairing::kHalf;
  c.mask = bidirectional ? AttentionMask::kBidirectional : AttentionMask::kCausal;
  c.qkv_bias = family.bias == Bias::kQkv || attention_bias;
  c.out_bias = attention_bias;
  c.ffn_bias = mlp_bias;
  c.tied_classifier = tied;
  c.qk_norm = family.qk_norm;
  EMBER_RETURN_IF_ERROR(ReadPartialRotary(f, family, &c));
  EMBER_RETURN_IF_ERROR(
      ReadHfRope(config, family.theta, positions, family.model_type == "phi3", &c));
  EMBER_RETURN_IF_ERROR(ReadSlidingLayers(config, family.sliding, &c));
  if (family.gemma) {
    c.post_norms = true;
    EMBER_RETURN_IF_ERROR(EmbeddingScale(config, root, *w, prefix + "embed_tokens.weight",
                                         d, &c.embedding_scale));
    EMBER_RETURN_IF_ERROR(
        f.Float("query_pre_attn_scalar", false, 256, 1e-6, 1e12, &scalar));
    c.attention_scale = static_cast<float>(1.0 / std::sqrt(scalar));
    EMBER_RETURN_IF_ERROR(f.Float("attn_logit_softcapping", false, family.attn_softcap, 0,
                                  1e6, &attn_softcap));
    EMBER_RETURN_IF_ERROR(f.Float("final_logit_softcapping", false, family.final_softcap,
                                  0, 1e6, &final_softcap));
    c.attn_softcap = static_cast<float>(attn_softcap);
    c.final_softcap = static_cast<float>(final_softcap);
    if (family.local_theta > 0 && !f.Has("rope_parameters")) {  // Gemma 3's local base
      double local;
      EMBER_RETURN_IF_ERROR(
          f.Float("rope_local_base_freq", false, family.local_theta, 1.0, 1e12, &local));
      c.rope_local_theta = static_cast<float>(local);
    }
    if (c.layer_attention.empty()) c.rope_local_theta = 0;  // no layer slides
  }

  // Tensors. Gemma's norms hold w of x / rms * (1 + w): the file stores 1 + w.
  const bool gemma = family.gemma;
  const float norm_offset = gemma ? 1.0f : 0.0f;
  const char* after_attention = gemma ? names::kAttnPostNorm : names::kFfnNorm;
  const uint64_t D = d, Q = c.q_dim(), KV = c.kv_dim(), F = ffn, V = vocab, HD = head_dim;
  Mapper m(w, spec);
  EMBER_RETURN_IF_ERROR(
      m.Copy(prefix + "embed_tokens.weight", names::kTokEmbedding, {V, D}));
  for (uint32_t i = 0; i < layers; ++i) {
    const std::string l = prefix + "layers." + std::to_string(i) + ".";
    struct Item {
      const char* hf;
      const char* ember;
      std::vector<uint64_t> shape;
      bool present;
      float offset;
    };
    const Item items[] = {
        {"input_layernorm.weight", names::kAttnNorm, {D}, true, norm_offset},
        {"self_attn.q_proj.weight", names::kAttnQ, {Q, D}, !family.fused, 0},
        {"self_attn.k_proj.weight", names::kAttnK, {KV, D}, !family.fused, 0},
        {"self_attn.v_proj.weight", names::kAttnV, {KV, D}, !family.fused, 0},
        {"self_attn.o_proj.weight", names::kAttnOut, {D, Q}, true, 0},
        {"self_attn.q_proj.bias", names::kAttnQBias, {Q}, c.qkv_bias, 0},
        {"self_attn.k_proj.bias", names::kAttnKBias, {KV}, c.qkv_bias, 0},
        {"self_attn.v_proj.bias", names::kAttnVBias, {KV}, c.qkv_bias, 0},
        {"self_attn.o_proj.bias", names::kAttnOutBias, {D}, c.out_bias, 0},
        {"self_attn.q_norm.weight", names::kAttnQNorm, {HD}, c.qk_norm, norm_offset},
        {"self_attn.k_norm.weight", names::kAttnKNorm, {HD}, c.qk_norm, norm_offset},
        // Gemma: post_attention_layernorm is the attention output's norm.
        {"post_attention_layernorm.weight", after_attention, {D}, true, norm_offset},
        {"pre_feedforward_layernorm.weight", names::kFfnNorm, {D}, gemma, norm_offset},
        {"post_feedforward_layernorm.weight",
         names::kFfnPostNorm,
         {D},
         gemma,
         norm_offset},
        {"mlp.gate_proj.weight", names::kFfnGate, {F, D}, !family.fused, 0},
        {"mlp.up_proj.weight", names::kFfnUp, {F, D}, !family.fused, 0},
        {"mlp.down_proj.weight", names::kFfnDown, {D, F}, true, 0},
        {"mlp.gate_proj.bias", names::kFfnGateBias, {F}, mlp_bias, 0},
        {"mlp.up_proj.bias", names::kFfnUpBias, {F}, mlp_bias, 0},
        {"mlp.down_proj.bias", names::kFfnDownBias, {D}, mlp_bias, 0},
    };
    for (const Item& item : items) {
      if (!item.present) continue;
      EMBER_RETURN_IF_ERROR(
          m.Copy(l + item.hf, Layer(item.ember, i), item.shape, item.offset));
    }
    if (family.fused) {  // Phi-3: rows [q; k; v] and [gate; up]
      EMBER_RETURN_IF_ERROR(m.SplitRows(l + "self_attn.qkv_proj.weight", D,
                                        {{Layer(names::kAttnQ, i), Q},
                                         {Layer(names::kAttnK, i), KV},
                                         {Layer(names::kAttnV, i), KV}}));
      EMBER_RETURN_IF_ERROR(
          m.SplitRows(l + "mlp.gate_up_proj.weight", D,
                      {{Layer(names::kFfnGate, i), F}, {Layer(names::kFfnUp, i), F}}));
    }
    w->Ignore(l + "self_attn.rotary_emb.inv_freq");  // a buffer in older checkpoints
  }
  EMBER_RETURN_IF_ERROR(
      m.Copy(prefix + "norm.weight", names::kOutputNorm, {D}, norm_offset));
  if (!multimodal && w->Has("score.weight")) {
    // *ForSequenceClassification: the last token's final state through `score` (no
    // bias), Qwen3-Reranker's yes-minus-no head as its seq-cls conversion stores it.
    const std::vector<uint64_t>& shape = w->tensors().at("score.weight")->shape;
    if (shape.size() != 2 || shape[0] == 0 || shape[0] > 65536 || shape[1] != D) {
      return InvalidArgument("score.weight: a (labels, %llu) matrix expected",
                             static_cast<unsigned long long>(D));
    }
    c.labels = static_cast<uint32_t>(shape[0]);
    c.pooling = Pooling::kLast;
    c.tied_classifier = true;  // no vocabulary logits: nothing reads the head
    EMBER_RETURN_IF_ERROR(
        m.Copy("score.weight", names::kClsOut, {uint64_t{c.labels}, D}));
    TensorSpec bias;
    bias.name = names::kClsOutBias;
    bias.shape = {c.labels};
    bias.values.assign(c.labels, 0.0f);
    spec->tensors.push_back(std::move(bias));
    if (w->Has(head)) return InvalidArgument("both score.weight and %s", head.c_str());
    return Status::Ok();
  }
  if (tied) {
    w->Ignore(head);
  } else {
    EMBER_RETURN_IF_ERROR(m.Copy(head, names::kOutput, {V, D}));
  }
  if (idefics3) return ImportIdefics3Vision(model_type, root, w, spec);
  if (multimodal && root.find("vision_config") != root.end()) {
    return ImportGemma3Vision(root, w, spec);
  }
  return Status::Ok();
}

}  // namespace ember::tools
