// Hugging Face architectures (see hf_models.h): GPT2LMHeadModel and LlamaForCausalLM
// config fields and tensors mapped to ember's config and tensor names.
#include "tools/convert/hf_models.h"

#include "runtime/tensor_names.h"

namespace ember::tools {
namespace {

// Builds the spec's tensor list from HF tensors.
class Mapper {
 public:
  Mapper(HfWeights* weights, ModelSpec* spec) : w_(*weights), spec_(*spec) {}

  // Copies `hf_name` of `shape` to `name`.
  Status Copy(const std::string& hf_name, const std::string& name,
              std::vector<uint64_t> shape) {
    TensorSpec t;
    t.name = name;
    t.shape = shape;
    EMBER_RETURN_IF_ERROR(w_.Read(hf_name, shape, &t.values));
    spec_.tensors.push_back(std::move(t));
    return Status::Ok();
  }

  // A Conv1D weight stored (in, out), split along `out` into parts of the given widths,
  // each transposed to ember's (out, in).
  Status Conv1D(const std::string& hf_name, uint64_t in,
                const std::vector<std::pair<std::string, uint64_t>>& parts) {
    uint64_t out = 0;
    for (const auto& part : parts) out += part.second;
    std::vector<float> values;
    EMBER_RETURN_IF_ERROR(w_.Read(hf_name, {in, out}, &values));
    uint64_t first = 0;
    for (const auto& [name, rows] : parts) {
      TensorSpec t;
      t.name = name;
      t.shape = {rows, in};
      t.values.resize(rows * in);
      for (uint64_t r = 0; r < rows; ++r) {
        for (uint64_t c = 0; c < in; ++c)
          t.values[r * in + c] = values[c * out + first + r];
      }
      first += rows;
      spec_.tensors.push_back(std::move(t));
    }
    return Status::Ok();
  }

  // A bias of the summed widths, split the same way.
  Status SplitVector(const std::string& hf_name,
                     const std::vector<std::pair<std::string, uint64_t>>& parts) {
    uint64_t total = 0;
    for (const auto& part : parts) total += part.second;
    std::vector<float> values;
    EMBER_RETURN_IF_ERROR(w_.Read(hf_name, {total}, &values));
    uint64_t first = 0;
    for (const auto& [name, n] : parts) {
      TensorSpec t;
      t.name = name;
      t.shape = {n};
      t.values.assign(values.begin() + first, values.begin() + first + n);
      first += n;
      spec_.tensors.push_back(std::move(t));
    }
    return Status::Ok();
  }

 private:
  HfWeights& w_;
  ModelSpec& spec_;
};

std::string Layer(const char* format, uint32_t i) { return names::LayerName(format, i); }

// An activation name as Hugging Face configs spell it.
Status ParseHfActivation(const std::string& name, Activation* out) {
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") {
    *out = Activation::kGeluTanh;  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  } else if (name == "gelu") {
    *out = Activation::kGeluErf;
  } else if (name == "relu") {
    *out = Activation::kReLU;
  } else if (name == "silu" || name == "swish") {
    *out = Activation::kSiLU;
  } else {
    return Unimplemented("config.json: activation '%.40s' is not supported",
                         name.c_str());
  }
  return Status::Ok();
}

}  // namespace

// GPT2LMHeadModel: wte, wpe, h.{i}.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
// mlp.c_proj}, ln_f, with or without the "transformer." prefix.
Status ImportGpt2(const JsonFields& f, HfWeights* w, ModelSpec* spec) {
  ModelConfig& c = spec->config;
  int64_t d, layers, heads, positions, vocab, inner;
  double eps;
  std::string act;
  bool tied, scale_attn, inverse_layer_scale, cross_attention;
  EMBER_RETURN_IF_ERROR(f.Int("n_embd", true, 0, 1, 1 << 20, &d));
  EMBER_RETURN_IF_ERROR(f.Int("n_layer", true, 0, 1, 4096, &layers));
  EMBER_RETURN_IF_ERROR(f.Int("n_head", true, 0, 1, 1 << 20, &heads));
  // n_positions; very old configs call it n_ctx.
  EMBER_RETURN_IF_ERROR(
      f.Int(f.Has("n_positions") || !f.Has("n_ctx") ? "n_positions" : "n_ctx", true, 0, 1,
            1 << 24, &positions));
  EMBER_RETURN_IF_ERROR(f.Int("vocab_size", true, 0, 1, 1 << 24, &vocab));
  EMBER_RETURN_IF_ERROR(f.Int("n_inner", false, 4 * d, 1, 1 << 20, &inner));
  EMBER_RETURN_IF_ERROR(f.Float("layer_norm_epsilon", false, 1e-5, 1e-12, 0.1, &eps));
  EMBER_RETURN_IF_ERROR(f.String("activation_function", false, "gelu_new", &act));
  EMBER_RETURN_IF_ERROR(f.Bool("tie_word_embeddings", false, true, &tied));
  EMBER_RETURN_IF_ERROR(f.Bool("scale_attn_weights", false, true, &scale_attn));
  EMBER_RETURN_IF_ERROR(
      f.Bool("scale_attn_by_inverse_layer_idx", false, false, &inverse_layer_scale));
  EMBER_RETURN_IF_ERROR(f.Bool("add_cross_attention", false, false, &cross_attention));
  if (!scale_attn || inverse_layer_scale || cross_attention) {
    return Unimplemented(
        "config.json: GPT-2 variants without 1/sqrt(head_dim) attention "
        "scaling or with cross-attention are not supported");
  }
  if (d % heads != 0) {
    return InvalidArgument("config.json: n_embd %lld is not divisible by n_head %lld",
                           static_cast<long long>(d), static_cast<long long>(heads));
  }
  snprintf(c.architecture, sizeof(c.architecture), "gpt2");
  c.d_model = d;
  c.n_layers = layers;
  c.n_heads = c.n_kv_heads = heads;
  c.head_dim = d / heads;
  c.ffn_dim = inner;
  c.vocab_size = vocab;
  c.max_context = positions;
  c.norm = NormKind::kLayerNorm;
  c.norm_placement = NormPlacement::kPre;
  c.norm_eps = static_cast<float>(eps);
  c.final_norm = true;
  c.ffn = FfnKind::kPlain;
  EMBER_RETURN_IF_ERROR(ParseHfActivation(act, &c.activation));
  c.positions = PositionKind::kLearned;
  c.mask = AttentionMask::kCausal;
  c.qkv_bias = c.out_bias = c.ffn_bias = true;
  c.tied_classifier = tied;

  const std::string p = w->Has("transformer.wte.weight") ? "transformer." : "";
  const uint64_t D = d, F = inner, V = vocab;
  Mapper m(w, spec);
  EMBER_RETURN_IF_ERROR(m.Copy(p + "wte.weight", names::kTokEmbedding, {V, D}));
  EMBER_RETURN_IF_ERROR(
      m.Copy(p + "wpe.weight", names::kPosEmbedding, {uint64_t(positions), D}));
  for (uint32_t i = 0; i < layers; ++i) {
    const std::string h = p + "h." + std::to_string(i) + ".";
    EMBER_RETURN_IF_ERROR(m.Copy(h + "ln_1.weight", Layer(names::kAttnNorm, i), {D}));
    EMBER_RETURN_IF_ERROR(m.Copy(h + "ln_1.bias", Layer(names::kAttnNormBias, i), {D}));
    EMBER_RETURN_IF_ERROR(m.Conv1D(h + "attn.c_attn.weight", D,
                                   {{Layer(names::kAttnQ, i), D},
                                    {Layer(names::kAttnK, i), D},
                                    {Layer(names::kAttnV, i), D}}));
    EMBER_RETURN_IF_ERROR(
        m.SplitVector(h + "attn.c_attn.bias", {{Layer(names::kAttnQBias, i), D},
                                               {Layer(names::kAttnKBias, i), D},
                                               {Layer(names::kAttnVBias, i), D}}));
    EMBER_RETURN_IF_ERROR(
        m.Conv1D(h + "attn.c_proj.weight", D, {{Layer(names::kAttnOut, i), D}}));
    EMBER_RETURN_IF_ERROR(
        m.Copy(h + "attn.c_proj.bias", Layer(names::kAttnOutBias, i), {D}));
    EMBER_RETURN_IF_ERROR(m.Copy(h + "ln_2.weight", Layer(names::kFfnNorm, i), {D}));
    EMBER_RETURN_IF_ERROR(m.Copy(h + "ln_2.bias", Layer(names::kFfnNormBias, i), {D}));
    EMBER_RETURN_IF_ERROR(
        m.Conv1D(h + "mlp.c_fc.weight", D, {{Layer(names::kFfnUp, i), F}}));
    EMBER_RETURN_IF_ERROR(m.Copy(h + "mlp.c_fc.bias", Layer(names::kFfnUpBias, i), {F}));
    EMBER_RETURN_IF_ERROR(
        m.Conv1D(h + "mlp.c_proj.weight", F, {{Layer(names::kFfnDown, i), D}}));
    EMBER_RETURN_IF_ERROR(
        m.Copy(h + "mlp.c_proj.bias", Layer(names::kFfnDownBias, i), {D}));
    w->Ignore(h + "attn.bias");         // the causal mask buffer of older checkpoints
    w->Ignore(h + "attn.masked_bias");  // and its fill value
  }
  EMBER_RETURN_IF_ERROR(m.Copy(p + "ln_f.weight", names::kOutputNorm, {D}));
  EMBER_RETURN_IF_ERROR(m.Copy(p + "ln_f.bias", names::kOutputNormBias, {D}));
  if (tied) {
    w->Ignore("lm_head.weight");  // a copy of wte when saved at all
  } else {
    EMBER_RETURN_IF_ERROR(m.Copy("lm_head.weight", names::kOutput, {V, D}));
  }
  return Status::Ok();
}

// LlamaForCausalLM: model.embed_tokens, model.layers.{i}.{input_layernorm,
// self_attn.{q,k,v,o}_proj, post_attention_layernorm, mlp.{gate,up,down}_proj},
// model.norm, lm_head. Q and K are in rotate_half order: RoPE pairs (i, i + head_dim/2).
Status ImportLlama(const JsonFields& f, HfWeights* w, ModelSpec* spec) {
  ModelConfig& c = spec->config;
  int64_t d, ffn, layers, heads, kv_heads, head_dim, positions, vocab;
  double eps, theta;
  std::string act;
  bool tied, attention_bias, mlp_bias;
  EMBER_RETURN_IF_ERROR(f.Int("hidden_size", true, 0, 1, 1 << 20, &d));
  EMBER_RETURN_IF_ERROR(f.Int("intermediate_size", true, 0, 1, 1 << 20, &ffn));
  EMBER_RETURN_IF_ERROR(f.Int("num_hidden_layers", true, 0, 1, 4096, &layers));
  EMBER_RETURN_IF_ERROR(f.Int("num_attention_heads", true, 0, 1, 1 << 20, &heads));
  EMBER_RETURN_IF_ERROR(f.Int("num_key_value_heads", false, heads, 1, heads, &kv_heads));
  EMBER_RETURN_IF_ERROR(f.Int("head_dim", false, d / heads, 2, 1 << 20, &head_dim));
  EMBER_RETURN_IF_ERROR(
      f.Int("max_position_embeddings", true, 0, 1, 1 << 24, &positions));
  EMBER_RETURN_IF_ERROR(f.Int("vocab_size", true, 0, 1, 1 << 24, &vocab));
  EMBER_RETURN_IF_ERROR(f.Float("rms_norm_eps", false, 1e-6, 1e-12, 0.1, &eps));
  EMBER_RETURN_IF_ERROR(f.Float("rope_theta", false, 10000.0, 1.0, 1e12, &theta));
  EMBER_RETURN_IF_ERROR(f.String("hidden_act", false, "silu", &act));
  EMBER_RETURN_IF_ERROR(f.Bool("tie_word_embeddings", false, false, &tied));
  EMBER_RETURN_IF_ERROR(f.Bool("attention_bias", false, false, &attention_bias));
  EMBER_RETURN_IF_ERROR(f.Bool("mlp_bias", false, false, &mlp_bias));
  if (f.Has("rope_scaling")) {
    return Unimplemented("config.json: rope_scaling is not supported");
  }
  if (d % heads != 0 || heads % kv_heads != 0 || head_dim % 2 != 0) {
    return InvalidArgument(
        "config.json: hidden_size %lld, %lld heads, %lld key/value "
        "heads and head_dim %lld do not fit together",
        static_cast<long long>(d), static_cast<long long>(heads),
        static_cast<long long>(kv_heads), static_cast<long long>(head_dim));
  }
  snprintf(c.architecture, sizeof(c.architecture), "llama");
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
  c.rope_theta = static_cast<float>(theta);
  c.rope_pairing = RopePairing::kHalf;
  c.mask = AttentionMask::kCausal;
  c.qkv_bias = c.out_bias = attention_bias;
  c.ffn_bias = mlp_bias;
  c.tied_classifier = tied;

  const uint64_t D = d, Q = c.q_dim(), KV = c.kv_dim(), F = ffn, V = vocab;
  Mapper m(w, spec);
  EMBER_RETURN_IF_ERROR(
      m.Copy("model.embed_tokens.weight", names::kTokEmbedding, {V, D}));
  for (uint32_t i = 0; i < layers; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    struct Item {
      const char* hf;
      const char* ember;
      std::vector<uint64_t> shape;
      bool present;
    };
    const Item items[] = {
        {"input_layernorm.weight", names::kAttnNorm, {D}, true},
        {"self_attn.q_proj.weight", names::kAttnQ, {Q, D}, true},
        {"self_attn.k_proj.weight", names::kAttnK, {KV, D}, true},
        {"self_attn.v_proj.weight", names::kAttnV, {KV, D}, true},
        {"self_attn.o_proj.weight", names::kAttnOut, {D, Q}, true},
        {"self_attn.q_proj.bias", names::kAttnQBias, {Q}, attention_bias},
        {"self_attn.k_proj.bias", names::kAttnKBias, {KV}, attention_bias},
        {"self_attn.v_proj.bias", names::kAttnVBias, {KV}, attention_bias},
        {"self_attn.o_proj.bias", names::kAttnOutBias, {D}, attention_bias},
        {"post_attention_layernorm.weight", names::kFfnNorm, {D}, true},
        {"mlp.gate_proj.weight", names::kFfnGate, {F, D}, true},
        {"mlp.up_proj.weight", names::kFfnUp, {F, D}, true},
        {"mlp.down_proj.weight", names::kFfnDown, {D, F}, true},
        {"mlp.gate_proj.bias", names::kFfnGateBias, {F}, mlp_bias},
        {"mlp.up_proj.bias", names::kFfnUpBias, {F}, mlp_bias},
        {"mlp.down_proj.bias", names::kFfnDownBias, {D}, mlp_bias},
    };
    for (const Item& item : items) {
      if (item.present) {
        EMBER_RETURN_IF_ERROR(m.Copy(l + item.hf, Layer(item.ember, i), item.shape));
      }
    }
    w->Ignore(l + "self_attn.rotary_emb.inv_freq");  // a buffer in older checkpoints
  }
  EMBER_RETURN_IF_ERROR(m.Copy("model.norm.weight", names::kOutputNorm, {D}));
  if (tied) {
    w->Ignore("lm_head.weight");
  } else {
    EMBER_RETURN_IF_ERROR(m.Copy("lm_head.weight", names::kOutput, {V, D}));
  }
  return Status::Ok();
}

}  // namespace ember::tools
