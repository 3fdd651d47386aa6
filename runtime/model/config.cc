// Names of the config enums, for messages and `ember inspect`.
#include "runtime/model/config.h"

#include <cstdio>

namespace ember {

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kQ8:
      return "q8";
    case DType::kQ4:
      return "q4";
    case DType::kQ4K:
      return "q4_k";
    case DType::kQ5K:
      return "q5_k";
    case DType::kQ6K:
      return "q6_k";
  }
  return "unknown";
}

const char* NormKindName(NormKind kind) {
  return kind == NormKind::kRmsNorm ? "rmsnorm" : "layernorm";
}

const char* ActivationName(Activation activation) {
  switch (activation) {
    case Activation::kSiLU:
      return "silu";
    case Activation::kReLU:
      return "relu";
    case Activation::kGeluTanh:
      return "gelu_tanh";
    case Activation::kGeluErf:
      return "gelu_erf";
  }
  return "unknown";
}

const char* PositionKindName(PositionKind kind) {
  switch (kind) {
    case PositionKind::kNone:
      return "none";
    case PositionKind::kLearned:
      return "learned";
    case PositionKind::kRope:
      return "rope";
  }
  return "unknown";
}

const char* RopeScalingName(RopeScaling scaling) {
  switch (scaling) {
    case RopeScaling::kNone:
      return "none";
    case RopeScaling::kLinear:
      return "linear";
    case RopeScaling::kLlama3:
      return "llama3";
    case RopeScaling::kYarn:
      return "yarn";
    case RopeScaling::kLongRope:
      return "longrope";
  }
  return "unknown";
}

const char* PoolingName(Pooling pooling) {
  switch (pooling) {
    case Pooling::kNone:
      return "none";
    case Pooling::kMean:
      return "mean";
    case Pooling::kCls:
      return "cls";
    case Pooling::kLast:
      return "last";
  }
  return "unknown";
}

VisionConfig SiglipVisionConfig(uint32_t d, uint32_t heads, uint32_t ffn, uint32_t layers,
                                uint32_t image, uint32_t patch, ImageConnector connector,
                                uint32_t factor) {
  VisionConfig v;
  ModelConfig& e = v.encoder;
  snprintf(e.architecture, sizeof(e.architecture), "siglip");
  e.d_model = d;
  e.n_layers = layers;
  e.n_heads = e.n_kv_heads = heads;
  e.head_dim = heads ? d / heads : 0;
  e.ffn_dim = ffn;
  e.vocab_size = 0;
  e.norm = NormKind::kLayerNorm;
  e.norm_placement = NormPlacement::kPre;
  e.norm_eps = 1e-6f;
  e.final_norm = true;
  e.ffn = FfnKind::kPlain;
  e.activation = Activation::kGeluTanh;
  e.positions = PositionKind::kLearned;
  e.mask = AttentionMask::kBidirectional;
  e.qkv_bias = e.out_bias = e.ffn_bias = true;
  e.tied_classifier = false;
  v.image_size = image;
  v.patch_size = patch;
  v.processor.height = v.processor.width = static_cast<int>(image);
  e.max_context = patch ? static_cast<uint32_t>(v.patches()) : 0;
  v.connector = connector;
  v.connector_factor = factor;
  v.projector_norm_eps = 1e-6f;
  v.image_blocks_bidirectional = connector == ImageConnector::kAveragePool;
  return v;
}

}  // namespace ember
