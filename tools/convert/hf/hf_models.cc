// GPT2LMHeadModel (see hf_models.h): config fields and tensors mapped to ember's config
// and tensor names; Hugging Face's activation names.
#include "tools/convert/hf/hf_models.h"

#include "runtime/model/tensor_names.h"
#include "tools/convert/hf/hf_mapper.h"

namespace ember::tools {
namespace {

std::string Layer(const char* format, uint32_t i) { return names::LayerName(format, i); }

}  // namespace

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
    EMBER_RETURN_IF_ERROR(m.SplitRows(h + "attn.c_attn.bias", 0,
                                      {{Layer(names::kAttnQBias, i), D},
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

}  // namespace ember::tools
