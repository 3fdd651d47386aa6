// Names of the config enums, for messages and `ember inspect`.
#include "runtime/model/config.h"

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

}  // namespace ember
