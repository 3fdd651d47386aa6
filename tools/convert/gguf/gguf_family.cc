// The GGUF families built on Llama's blocks (see gguf_family.h).
#include "tools/convert/gguf/gguf_family.h"

#include <cmath>
#include <cstring>
#include <string>

namespace ember::tools {
namespace {

// Gemma 3 in llama.cpp: every 6th layer global, the others sliding with their own RoPE
// base (neither is a GGUF key).
constexpr uint32_t kGemma3Pattern = 6;
constexpr float kGemma3LocalTheta = 10000.0f;
constexpr uint32_t kGemma3_27bLayers = 62;

constexpr char kRopeFreqs[] = "rope_freqs.weight";
constexpr char kRopeShort[] = "rope_factors_short.weight";
constexpr char kRopeLong[] = "rope_factors_long.weight";

// Factors and the attention factor: the range the loader accepts (family_config.cc).
bool FactorInRange(float v) { return v >= 1e-6f && v <= 1e6f; }

// One f32 vector of `n` factors, each in [1e-6, 1e6].
Status ReadFactors(const GgufFile& f, const char* name, size_t n,
                   std::vector<float>* out) {
  const GgufTensorInfo* t = f.FindTensor(name);
  if (!t) return InvalidModel("GGUF: no tensor %s", name);
  if (t->type != static_cast<uint32_t>(GgmlType::kF32) || t->n_dims != 1 ||
      t->ne[0] != n) {
    return InvalidModel(
        "GGUF: tensor %s must be %zu f32 values (one per rotated pair of a head)", name,
        n);
  }
  out->resize(n);
  memcpy(out->data(), t->data, n * sizeof(float));
  for (float v : *out) {
    if (!FactorInRange(v)) {
      return InvalidModel("GGUF: tensor %s holds %g (factors are in [1e-6, 1e6])", name,
                          v);
    }
  }
  return Status::Ok();
}

}  // namespace

const GgufFamily* FindGgufFamily(std::string_view arch) {
  static const GgufFamily kFamilies[] = {
      {"llama", RopePairing::kInterleaved, false, false, false, {}},
      {"qwen2", RopePairing::kHalf, false, false, false, {}},
      {"qwen3", RopePairing::kHalf, true, false, false, {}},
      {"gemma3", RopePairing::kHalf, true, true, false, {}},
      {"phi3", RopePairing::kHalf, false, false, true, {"rope.scaling.attn_factor"}},
  };
  for (const GgufFamily& family : kFamilies) {
    if (arch == family.arch) return &family;
  }
  return nullptr;
}

Status ApplyGgufFamily(const GgufFamily& family, uint32_t window, uint32_t rope_dims,
                       ModelConfig* c) {
  c->qk_norm = family.qk_norm;
  if (rope_dims != c->head_dim) {
    if (!family.phi3 || rope_dims == 0 || rope_dims > c->head_dim || rope_dims % 2 != 0) {
      return Unimplemented(
          "GGUF: RoPE on %u of the %u dimensions of a head (%s.rope.dimension_count) is "
          "not supported for %s",
          rope_dims, c->head_dim, family.arch, family.arch);
    }
    c->rope_dim = rope_dims;
  }
  const bool slides = window > 0 && window < c->max_context;
  if (family.gemma) {
    c->activation = Activation::kGeluTanh;
    c->post_norms = true;
    c->embedding_scale = std::sqrt(static_cast<float>(c->d_model));
    const float scalar = c->n_layers == kGemma3_27bLayers
                             ? static_cast<float>(c->d_model / c->n_heads)
                             : static_cast<float>(c->head_dim);
    c->attention_scale = 1.0f / std::sqrt(scalar);
    if (slides) {
      c->sliding_window = window;
      c->rope_local_theta = kGemma3LocalTheta;
      c->layer_attention.resize(c->n_layers);
      for (uint32_t i = 0; i < c->n_layers; ++i) {
        c->layer_attention[i] = (i + 1) % kGemma3Pattern == 0 ? LayerAttention::kGlobal
                                                              : LayerAttention::kSliding;
      }
    }
  } else if (family.phi3) {
    if (slides) {
      c->sliding_window = window;
      c->layer_attention.assign(c->n_layers, LayerAttention::kSliding);
    }
  } else if (slides) {
    return Unimplemented(
        "GGUF: sliding-window attention (%s.attention.sliding_window %u, shorter than "
        "the context of %u) is not supported for %s",
        family.arch, window, c->max_context, family.arch);
  }
  return Status::Ok();
}

bool IsGgufRopeFactorTensor(std::string_view name) {
  return name == kRopeFreqs || name == kRopeShort || name == kRopeLong;
}

Status ReadGgufRopeFactors(const GgufFile& f, const GgufFamily& family, ModelConfig* c) {
  const size_t pairs = c->rope_dims() / 2;
  const bool has_short = f.FindTensor(kRopeShort) != nullptr;
  const bool has_long = f.FindTensor(kRopeLong) != nullptr;
  if (f.FindTensor(kRopeFreqs)) {
    if (has_short || has_long) {
      return InvalidModel("GGUF: both %s and LongRoPE factors", kRopeFreqs);
    }
    return ReadFactors(f, kRopeFreqs, pairs, &c->rope_freq_factors);
  }
  const std::string arch = family.arch;
  if (!has_short && !has_long) {
    double attention;  // llama.cpp would scale cos and sin by it
    EMBER_RETURN_IF_ERROR(
        f.GetFloat(arch + ".rope.scaling.attn_factor", false, 1.0, &attention));
    if (attention != 1.0) {
      return Unimplemented(
          "GGUF: %s.rope.scaling.attn_factor %g without LongRoPE factors", arch.c_str(),
          attention);
    }
    return Status::Ok();
  }
  if (!family.phi3) {
    return Unimplemented("GGUF: LongRoPE factors (%s, %s) are not supported for %s",
                         kRopeShort, kRopeLong, family.arch);
  }
  if (c->rope_scaling != RopeScaling::kNone) {
    return InvalidModel("GGUF: LongRoPE factors beside %s RoPE scaling",
                        RopeScalingName(c->rope_scaling));
  }
  EMBER_RETURN_IF_ERROR(ReadFactors(f, kRopeShort, pairs, &c->rope_freq_factors));
  EMBER_RETURN_IF_ERROR(ReadFactors(f, kRopeLong, pairs, &c->rope_long_freq_factors));
  int64_t original;
  EMBER_RETURN_IF_ERROR(f.GetInt(arch + ".rope.scaling.original_context_length", true, 0,
                                 1, c->max_context, &original));
  const double factor = static_cast<double>(c->max_context) / original;
  const double fallback =
      factor > 1
          ? std::sqrt(1 + std::log(factor) / std::log(static_cast<double>(original)))
          : 1.0;
  double attention;
  EMBER_RETURN_IF_ERROR(
      f.GetFloat(arch + ".rope.scaling.attn_factor", false, fallback, &attention));
  if (!FactorInRange(static_cast<float>(attention))) {
    return InvalidModel("GGUF: %s.rope.scaling.attn_factor is %g", arch.c_str(),
                        attention);
  }
  c->rope_scaling = RopeScaling::kLongRope;
  c->rope_scaling_factor = static_cast<float>(factor > 1 ? factor : 1.0);
  c->rope_original_context = static_cast<uint32_t>(original);
  c->rope_attention_factor = static_cast<float>(attention);
  return Status::Ok();
}

}  // namespace ember::tools
