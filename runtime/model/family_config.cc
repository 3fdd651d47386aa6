// The loader's reading and checking of the Config fields of current families (see
// family_config.h).
#include "runtime/model/family_config.h"

namespace ember {

static_assert(static_cast<int>(fb::RopeScaling::MAX) ==
                  static_cast<int>(RopeScaling::kLongRope),
              "enums");
static_assert(static_cast<int>(fb::Pooling::MAX) == static_cast<int>(Pooling::kLast),
              "enums");
static_assert(static_cast<int>(fb::LayerAttention::MAX) ==
                  static_cast<int>(LayerAttention::kSliding),
              "enums");

namespace {

// The largest context the loader accepts (model.cc's limit for max_context).
constexpr uint32_t kMaxContext = 1u << 24;

template <typename E>
bool EnumInRange(E value, E max) {
  return static_cast<unsigned>(value) <= static_cast<unsigned>(max);
}

// x in [lo, hi], false for NaN.
bool InRange(float x, float lo, float hi) { return x >= lo && x <= hi; }

// A vector of RoPE frequency divisors: absent, or one positive factor per pair.
Status ReadFactors(const flatbuffers::Vector<float>* factors, const char* name,
                   uint32_t pairs, std::vector<float>* out) {
  out->clear();
  if (!factors || factors->size() == 0) return Status::Ok();
  if (factors->size() != pairs) {
    return InvalidModel("config: %u %s for RoPE over %u pairs", factors->size(), name,
                        pairs);
  }
  out->assign(factors->begin(), factors->end());
  for (float f : *out) {
    if (!InRange(f, 1e-6f, 1e6f)) {
      return InvalidModel("config: a factor of %s, %g, is outside [1e-6, 1e6]", name, f);
    }
  }
  return Status::Ok();
}

// The fields of embedding models: segment embeddings, the embeddings' norm, pooling.
Status ReadEmbeddingConfig(const fb::Config& fc, ModelConfig* c) {
  if (!EnumInRange(fc.pooling(), fb::Pooling::MAX)) {
    return InvalidModel("config: pooling %u is not a kind this build knows",
                        static_cast<unsigned>(fc.pooling()));
  }
  c->pooling = static_cast<Pooling>(fc.pooling());
  c->normalize = fc.normalize();
  c->embedding_norm = fc.embedding_norm();
  c->token_types = fc.token_types();
  constexpr uint32_t kMaxTokenTypes = 1u << 16;
  if (c->token_types > kMaxTokenTypes) {
    return InvalidModel("config: %u token types (at most %u)", c->token_types,
                        kMaxTokenTypes);
  }
  c->labels = fc.labels();
  c->label_pooler = fc.label_pooler();
  if (c->labels > (1u << 16) || ((c->labels > 0 || c->label_pooler) && !c->embeds()) ||
      (c->label_pooler && c->labels == 0)) {
    return InvalidModel("config: a head of %u labels%s needs a pooling (at most 65536)",
                        c->labels, c->label_pooler ? " with a pooler" : "");
  }
  if (c->normalize && !c->embeds()) {
    return InvalidModel("config: normalize needs a pooling (the output is logits)");
  }
  const auto* dims = fc.dense_dims();
  const auto* flags = fc.dense_flags();
  const size_t n = dims ? dims->size() : 0;
  constexpr size_t kMaxDense = 8;
  if (n > kMaxDense || (flags ? flags->size() : 0) != n || (n > 0 && !c->embeds()) ||
      (n > 0 && c->labels > 0)) {
    return InvalidModel(
        "config: %zu dense projections with %zu flags (at most %zu, on an embedding "
        "without a classification head)",
        n, flags ? static_cast<size_t>(flags->size()) : size_t{0}, kMaxDense);
  }
  for (size_t i = 0; i < n; ++i) {
    const uint32_t out = dims->Get(static_cast<flatbuffers::uoffset_t>(i));
    const uint8_t f = flags->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (out == 0 || out > (1u << 20) ||
        f > (ModelConfig::kDenseBias | ModelConfig::kDenseTanh)) {
      return InvalidModel("config: dense projection %zu: %u outputs, flags %u", i, out,
                          f);
    }
    c->dense_dims.push_back(out);
    c->dense_flags.push_back(f);
  }
  return Status::Ok();
}

}  // namespace

// The fields appended for current families (schema/model.fbs): RoPE scaling, sliding
// windows, qk-norm, post-norms, scales and soft-caps.
Status ReadFamilyConfig(const fb::Config& fc, ModelConfig* c) {
  if (!EnumInRange(fc.rope_scaling(), fb::RopeScaling::MAX)) {
    return InvalidModel("config: rope_scaling %u is not a kind this build knows",
                        static_cast<unsigned>(fc.rope_scaling()));
  }
  c->rope_scaling = static_cast<RopeScaling>(fc.rope_scaling());
  c->rope_scaling_factor = fc.rope_scaling_factor();
  c->rope_low_freq_factor = fc.rope_low_freq_factor();
  c->rope_high_freq_factor = fc.rope_high_freq_factor();
  c->rope_original_context = fc.rope_original_context();
  c->rope_beta_fast = fc.rope_beta_fast();
  c->rope_beta_slow = fc.rope_beta_slow();
  c->rope_attention_factor = fc.rope_attention_factor();
  c->rope_yarn_truncate = fc.rope_yarn_truncate();
  c->rope_local_theta = fc.rope_local_theta();
  c->qk_norm = fc.qk_norm();
  c->post_norms = fc.post_norms();
  c->embedding_scale = fc.embedding_scale();
  c->attention_scale = fc.attention_scale();
  c->attn_softcap = fc.attn_softcap();
  c->final_softcap = fc.final_softcap();
  c->sliding_window = fc.sliding_window();
  const RopeScaling scaling = c->rope_scaling;
  const bool rope = c->positions == PositionKind::kRope;
  if (scaling != RopeScaling::kNone || c->rope_local_theta != 0.0f) {
    if (!rope) return InvalidModel("config: RoPE scaling without RoPE positions");
  }
  if (scaling != RopeScaling::kNone && !InRange(c->rope_scaling_factor, 1.0f, 1e6f)) {
    return InvalidModel("config: rope_scaling_factor %g outside [1, 1e6]",
                        c->rope_scaling_factor);
  }
  if (scaling == RopeScaling::kLlama3 || scaling == RopeScaling::kYarn ||
      scaling == RopeScaling::kLongRope) {
    if (c->rope_original_context == 0 || c->rope_original_context > kMaxContext) {
      return InvalidModel("config: %s RoPE scaling needs rope_original_context (1 to %u)",
                          RopeScalingName(scaling), kMaxContext);
    }
  }
  if (scaling == RopeScaling::kLlama3 &&
      !(InRange(c->rope_low_freq_factor, 1e-6f, 1e6f) &&
        InRange(c->rope_high_freq_factor, 1e-6f, 1e6f) &&
        c->rope_high_freq_factor > c->rope_low_freq_factor)) {
    return InvalidModel(
        "config: llama3 RoPE scaling needs 0 < rope_low_freq_factor (%g) < "
        "rope_high_freq_factor (%g)",
        c->rope_low_freq_factor, c->rope_high_freq_factor);
  }
  if ((scaling == RopeScaling::kYarn || scaling == RopeScaling::kLongRope) &&
      !(InRange(c->rope_beta_fast, 1e-6f, 1e6f) &&
        InRange(c->rope_beta_slow, 1e-6f, 1e6f) &&
        InRange(c->rope_attention_factor, 1e-6f, 1e6f))) {
    return InvalidModel(
        "config: %s RoPE scaling needs positive rope_beta_fast (%g), rope_beta_slow "
        "(%g) and rope_attention_factor (%g)",
        RopeScalingName(scaling), c->rope_beta_fast, c->rope_beta_slow,
        c->rope_attention_factor);
  }
  if (c->rope_local_theta != 0.0f && !InRange(c->rope_local_theta, 1.0f, 1e12f)) {
    return InvalidModel("config: rope_local_theta %g outside (1, 1e12)",
                        c->rope_local_theta);
  }
  struct Scale {
    const char* name;
    float value;
    bool zero_allowed;
  };
  for (const Scale& s : {Scale{"embedding_scale", c->embedding_scale, false},
                         Scale{"attention_scale", c->attention_scale, true},
                         Scale{"attn_softcap", c->attn_softcap, true},
                         Scale{"final_softcap", c->final_softcap, true}}) {
    if (!(s.zero_allowed && s.value == 0.0f) && !InRange(s.value, 1e-6f, 1e6f)) {
      return InvalidModel("config: %s %g outside [1e-6, 1e6]%s", s.name, s.value,
                          s.zero_allowed ? " (0: none)" : "");
    }
  }
  if (c->qk_norm && c->norm != NormKind::kRmsNorm) {
    return InvalidModel(
        "config: qk_norm is an RMSNorm: the model's norm must be rmsnorm");
  }
  if (c->post_norms && c->norm_placement != NormPlacement::kPre) {
    return InvalidModel("config: post_norms need pre-norm placement");
  }
  if (c->sliding_window > kMaxContext) {
    return InvalidModel("config: sliding_window %u is over %u", c->sliding_window,
                        kMaxContext);
  }
  const auto* layers = fc.layer_attention();
  if (layers && layers->size() != 0) {
    if (layers->size() != c->n_layers) {
      return InvalidModel("config: layer_attention has %u entries for %u layers",
                          layers->size(), c->n_layers);
    }
    c->layer_attention.resize(c->n_layers);
    for (uint32_t i = 0; i < c->n_layers; ++i) {
      const fb::LayerAttention kind = layers->Get(i);
      if (!EnumInRange(kind, fb::LayerAttention::MAX)) {
        return InvalidModel("config: layer %u's attention kind %u is unknown", i,
                            static_cast<unsigned>(kind));
      }
      c->layer_attention[i] = static_cast<LayerAttention>(kind);
    }
  }
  c->rope_dim = fc.rope_dim();
  if (c->rope_dim != 0 && (!rope || c->rope_dim % 2 != 0 || c->rope_dim > c->head_dim)) {
    return InvalidModel("config: rope_dim %u is not an even count of head_dim's %u",
                        c->rope_dim, c->head_dim);
  }
  const uint32_t pairs = rope ? static_cast<uint32_t>(c->rope_dims() / 2) : 0;
  EMBER_RETURN_IF_ERROR(ReadFactors(fc.rope_freq_factors(), "rope_freq_factors", pairs,
                                    &c->rope_freq_factors));
  EMBER_RETURN_IF_ERROR(ReadFactors(fc.rope_long_freq_factors(), "rope_long_freq_factors",
                                    pairs, &c->rope_long_freq_factors));
  const bool long_rope = scaling == RopeScaling::kLongRope;
  if (long_rope != !c->rope_long_freq_factors.empty() ||
      (long_rope && c->rope_freq_factors.empty())) {
    return InvalidModel(
        "config: longrope RoPE scaling goes with both rope_freq_factors and "
        "rope_long_freq_factors, and only it has long factors");
  }
  EMBER_RETURN_IF_ERROR(ReadEmbeddingConfig(fc, c));
  // (A bidirectional model's sliding layers see sliding_window / 2 keys on either side.)
  if (c->has_sliding_layers() && c->sliding_window == 0) {
    return InvalidModel("config: sliding layers need a sliding_window of at least 1");
  }
  return Status::Ok();
}

}  // namespace ember
