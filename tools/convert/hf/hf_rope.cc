// Hugging Face RoPE and sliding-window config fields (see hf_rope.h).
#include "tools/convert/hf/hf_rope.h"

#include <cmath>
#include <set>

namespace ember::tools {
namespace {

// transformers' get_mscale: the attention factor YaRN's paper suggests.
double YarnMscale(double factor, double mscale) {
  return factor <= 1 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0;
}

// LongRoPE (transformers' _compute_longrope_parameters): frequencies divided by
// short_factor, or by long_factor in a forward call that reaches past the original
// context; that is the config's top-level original_max_position_embeddings (Phi-3),
// where the factor is max_position_embeddings over it, else the rope object's factor
// over max_position_embeddings; cos and sin times attention_factor, by default
// sqrt(1 + ln(factor) / ln(original)) (1 for a factor up to 1).
Status ReadLongRope(const JsonFields& f, const std::string& where, const RopeContext& ctx,
                    ModelConfig* c) {
  const size_t pairs = c->rope_dims() / 2;
  EMBER_RETURN_IF_ERROR(f.NumberList("short_factor", &c->rope_freq_factors));
  EMBER_RETURN_IF_ERROR(f.NumberList("long_factor", &c->rope_long_freq_factors));
  for (const auto* factors : {&c->rope_freq_factors, &c->rope_long_freq_factors}) {
    if (factors->size() != pairs) {
      return InvalidArgument(
          "%s: longrope needs short_factor and long_factor of %zu "
          "numbers (one per rotated pair)",
          where.c_str(), pairs);
    }
  }
  double factor;
  int64_t original = ctx.original_context;
  if (original > 0) {
    factor = static_cast<double>(ctx.max_positions) / original;
  } else {
    EMBER_RETURN_IF_ERROR(f.Float("factor", false, 1.0, 0.0, 1e6, &factor));
    original = ctx.max_positions;
  }
  const double fallback =
      factor <= 1 ? 1.0 : std::sqrt(1 + std::log(factor) / std::log(double(original)));
  double attention;
  EMBER_RETURN_IF_ERROR(
      f.Float("attention_factor", false, fallback, 1e-6, 1e6, &attention));
  c->rope_scaling = RopeScaling::kLongRope;
  c->rope_scaling_factor = static_cast<float>(factor > 1 ? factor : 1.0);
  c->rope_original_context = static_cast<uint32_t>(original);
  c->rope_attention_factor = static_cast<float>(attention);
  return Status::Ok();
}

}  // namespace

Status ReadRopeScaling(const Json& p, const std::string& where, const RopeContext& ctx,
                       ModelConfig* c, double* theta) {
  if (!p.is_object()) return InvalidArgument("%s must be an object", where.c_str());
  static const std::set<std::string> kKnown = {"rope_type",
                                               "type",
                                               "rope_theta",
                                               "factor",
                                               "low_freq_factor",
                                               "high_freq_factor",
                                               "original_max_position_embeddings",
                                               "beta_fast",
                                               "beta_slow",
                                               "attention_factor",
                                               "mscale",
                                               "mscale_all_dim",
                                               "truncate",
                                               "short_factor",
                                               "long_factor"};
  for (auto it = p.begin(); it != p.end(); ++it) {
    if (!kKnown.count(it.key())) {
      return Unimplemented("%s: '%.40s' is not supported (it would change the RoPE)",
                           where.c_str(), it.key().c_str());
    }
  }
  const JsonFields f(p, where);
  std::string type;
  EMBER_RETURN_IF_ERROR(
      f.String(f.Has("rope_type") ? "rope_type" : "type", false, "default", &type));
  if (f.Has("rope_theta")) {
    EMBER_RETURN_IF_ERROR(f.Float("rope_theta", true, 0, 1.0, 1e12, theta));
  }
  c->rope_scaling = RopeScaling::kNone;
  if (type == "default") return Status::Ok();
  // Phi3Config reads its older names of LongRoPE ("type" su or yarn) as longrope.
  if (ctx.phi3 && !f.Has("rope_type") && (type == "su" || type == "yarn"))
    type = "longrope";
  if (type == "longrope") return ReadLongRope(f, where, ctx, c);
  double factor, value;
  int64_t original;
  EMBER_RETURN_IF_ERROR(f.Float("factor", true, 1.0, 1.0, 1e6, &factor));
  c->rope_scaling_factor = static_cast<float>(factor);
  if (type == "linear") {
    c->rope_scaling = RopeScaling::kLinear;
  } else if (type == "llama3") {
    c->rope_scaling = RopeScaling::kLlama3;
    double low, high;
    EMBER_RETURN_IF_ERROR(f.Float("low_freq_factor", true, 1.0, 1e-6, 1e6, &low));
    EMBER_RETURN_IF_ERROR(f.Float("high_freq_factor", true, 4.0, 1e-6, 1e6, &high));
    EMBER_RETURN_IF_ERROR(
        f.Int("original_max_position_embeddings", true, 0, 1, 1 << 24, &original));
    if (!(high > low)) {
      return InvalidArgument("%s: high_freq_factor %g must exceed low_freq_factor %g",
                             where.c_str(), high, low);
    }
    c->rope_low_freq_factor = static_cast<float>(low);
    c->rope_high_freq_factor = static_cast<float>(high);
    c->rope_original_context = static_cast<uint32_t>(original);
  } else if (type == "yarn") {
    c->rope_scaling = RopeScaling::kYarn;
    EMBER_RETURN_IF_ERROR(f.Int("original_max_position_embeddings", false,
                                ctx.max_positions, 1, 1 << 24, &original));
    c->rope_original_context = static_cast<uint32_t>(original);
    // beta_fast/beta_slow: `or 32` / `or 1` in transformers (0 means the default too).
    EMBER_RETURN_IF_ERROR(f.Float("beta_fast", false, 32.0, 0.0, 1e6, &value));
    c->rope_beta_fast = static_cast<float>(value > 0 ? value : 32.0);
    EMBER_RETURN_IF_ERROR(f.Float("beta_slow", false, 1.0, 0.0, 1e6, &value));
    c->rope_beta_slow = static_cast<float>(value > 0 ? value : 1.0);
    EMBER_RETURN_IF_ERROR(f.Bool("truncate", false, true, &c->rope_yarn_truncate));
    double mscale, mscale_all_dim;
    EMBER_RETURN_IF_ERROR(f.Float("mscale", false, 0.0, 0.0, 1e6, &mscale));
    EMBER_RETURN_IF_ERROR(
        f.Float("mscale_all_dim", false, 0.0, 0.0, 1e6, &mscale_all_dim));
    const double fallback =
        mscale > 0 && mscale_all_dim > 0
            ? YarnMscale(factor, mscale) / YarnMscale(factor, mscale_all_dim)
            : YarnMscale(factor, 1.0);
    EMBER_RETURN_IF_ERROR(
        f.Float("attention_factor", false, fallback, 1e-6, 1e6, &value));
    c->rope_attention_factor = static_cast<float>(value);
  } else {
    return Unimplemented(
        "%s: rope_type '%.40s' is not supported (ember reads default, linear, llama3, "
        "yarn and longrope)",
        where.c_str(), type.c_str());
  }
  return Status::Ok();
}

Status ReadHfRope(const Json& config, double default_theta, int64_t max_positions,
                  bool phi3, ModelConfig* c) {
  const JsonFields f(config, "config.json");
  RopeContext ctx;
  ctx.max_positions = max_positions;
  ctx.phi3 = phi3;
  EMBER_RETURN_IF_ERROR(f.Int("original_max_position_embeddings", false, 0, 1, 1 << 24,
                              &ctx.original_context));
  double theta;
  EMBER_RETURN_IF_ERROR(f.Float("rope_theta", false, default_theta, 1.0, 1e12, &theta));
  if (f.Has("rope_parameters")) {  // transformers 5
    if (f.Has("rope_scaling")) {
      return InvalidArgument(
          "config.json: both rope_parameters and rope_scaling are set");
    }
    const Json& p = config["rope_parameters"];
    if (p.is_object() &&
        (p.contains("full_attention") || p.contains("sliding_attention"))) {
      for (auto it = p.begin(); it != p.end(); ++it) {
        const std::string where = "config.json rope_parameters." + it.key();
        if (it.key() == "full_attention") {
          EMBER_RETURN_IF_ERROR(ReadRopeScaling(*it, where, ctx, c, &theta));
        } else if (it.key() == "sliding_attention") {
          ModelConfig local;
          double local_theta = theta;
          EMBER_RETURN_IF_ERROR(ReadRopeScaling(*it, where, ctx, &local, &local_theta));
          if (local.rope_scaling != RopeScaling::kNone) {
            return Unimplemented("%s: sliding layers with scaled RoPE are not supported",
                                 where.c_str());
          }
          c->rope_local_theta = static_cast<float>(local_theta);
        } else {
          return Unimplemented("config.json: rope_parameters for layer type '%.40s'",
                               it.key().c_str());
        }
      }
    } else {
      EMBER_RETURN_IF_ERROR(
          ReadRopeScaling(p, "config.json rope_parameters", ctx, c, &theta));
    }
  } else if (f.Has("rope_scaling")) {
    EMBER_RETURN_IF_ERROR(ReadRopeScaling(config["rope_scaling"],
                                          "config.json rope_scaling", ctx, c, &theta));
  }
  c->rope_theta = static_cast<float>(theta);
  return Status::Ok();
}

Status ReadSlidingLayers(const Json& config, const SlidingLayout& layout,
                         ModelConfig* c) {
  const JsonFields f(config, "config.json");
  int64_t window = layout.default_window;  // the class default when the key is absent
  if (config.contains("sliding_window")) {
    EMBER_RETURN_IF_ERROR(f.Int("sliding_window", false, 0, 0, 1 << 30, &window));
  }
  if (layout.qwen) {  // Qwen's window exists only with use_sliding_window
    bool enabled;
    EMBER_RETURN_IF_ERROR(f.Bool("use_sliding_window", false, false, &enabled));
    if (!enabled) window = 0;
  }
  std::vector<LayerAttention> kinds(c->n_layers, LayerAttention::kGlobal);
  if (f.Has("layer_types")) {
    const Json& types = config["layer_types"];
    if (!types.is_array() || types.size() != c->n_layers) {
      return InvalidArgument("config.json: layer_types must list %u layer types",
                             c->n_layers);
    }
    for (size_t i = 0; i < types.size(); ++i) {
      if (!types[i].is_string()) {
        return InvalidArgument("config.json: layer_types[%zu] is %s, not a string", i,
                               types[i].type_name());
      }
      const std::string type = types[i].get<std::string>();
      if (type == "sliding_attention") {
        kinds[i] = LayerAttention::kSliding;
      } else if (type != "full_attention") {
        return Unimplemented(
            "config.json: layer type '%.40s' (layer %zu) is not supported", type.c_str(),
            i);
      }
    }
    // Qwen: a sliding layer without a window attends to everything (transformers).
    if (layout.qwen && window == 0) kinds.assign(c->n_layers, LayerAttention::kGlobal);
  } else if (layout.default_pattern > 0) {
    int64_t pattern;
    EMBER_RETURN_IF_ERROR(f.Int(f.Has("sliding_window_pattern")
                                    ? "sliding_window_pattern"
                                    : "_sliding_window_pattern",
                                false, layout.default_pattern, 1, 1 << 20, &pattern));
    // transformers: layer i slides unless (i + 1) % pattern == 0.
    for (uint32_t i = 0; i < c->n_layers; ++i) {
      if ((i + 1) % pattern != 0) kinds[i] = LayerAttention::kSliding;
    }
  } else if (layout.qwen && window > 0) {
    int64_t first;
    EMBER_RETURN_IF_ERROR(f.Int("max_window_layers", false, 28, 0, 1 << 20, &first));
    for (uint32_t i = 0; i < c->n_layers; ++i) {
      if (i >= first) kinds[i] = LayerAttention::kSliding;
    }
  } else if (layout.all_layers && window > 0) {
    kinds.assign(c->n_layers, LayerAttention::kSliding);
  }
  bool any = false;
  for (LayerAttention k : kinds) any = any || k == LayerAttention::kSliding;
  if (any && window <= 0) {
    return InvalidArgument("config.json: sliding layers but no sliding_window");
  }
  // A window that holds the whole context hides nothing: those layers are global.
  if (!any || window >= int64_t{c->max_context}) {
    c->sliding_window = 0;
    c->layer_attention.clear();
    return Status::Ok();
  }
  c->sliding_window = static_cast<uint32_t>(window);
  c->layer_attention = kinds;
  return Status::Ok();
}

}  // namespace ember::tools
