// ModelConfig: the architecture of a model as plain data, mirrored from the file's
// Config table so the public API does not expose FlatBuffers types.
#ifndef EMBER_RUNTIME_CONFIG_H_
#define EMBER_RUNTIME_CONFIG_H_

#include <cstddef>
#include <cstdint>

namespace ember {

// Values equal the schema's (schema/model.fbs); static_asserts in model.cc keep them so.
enum class DType : uint8_t {
  kF32 = 0,
  kF16 = 1,
  kBF16 = 2,
  kQ8 = 3,
  kQ4 = 4,
  kQ4K = 5,  // GGML's K-quants: kernels/kquant_layout.h
  kQ5K = 6,
  kQ6K = 7
};
// kQuantRows (never written) and kQuantPanelsV1 (retired) are rejected; kQuantPanels:
// kernels/quant_layout.h; kKQuantPanels: kernels/kquant_layout.h.
enum class Layout : uint8_t {
  kRowMajor = 0,
  kQuantRows = 1,
  kQuantPanelsV1 = 2,
  kQuantPanels = 3,
  kKQuantPanels = 4
};
enum class NormKind : uint8_t { kRmsNorm = 0, kLayerNorm = 1 };
enum class NormPlacement : uint8_t { kPre = 0, kPost = 1 };
enum class Activation : uint8_t { kSiLU = 0, kReLU = 1, kGeluTanh = 2, kGeluErf = 3 };
enum class FfnKind : uint8_t { kPlain = 0, kGated = 1 };
enum class PositionKind : uint8_t { kNone = 0, kLearned = 1, kRope = 2 };
enum class RopePairing : uint8_t { kInterleaved = 0, kHalf = 1 };
enum class AttentionMask : uint8_t { kCausal = 0, kBidirectional = 1 };

const char* DTypeName(DType dtype);
const char* NormKindName(NormKind kind);
const char* ActivationName(Activation activation);
const char* PositionKindName(PositionKind kind);

struct ModelConfig {
  char architecture[32] = {0};
  uint32_t d_model = 0;
  uint32_t n_layers = 0;
  uint32_t n_heads = 0;
  uint32_t n_kv_heads = 0;
  uint32_t head_dim = 0;
  uint32_t ffn_dim = 0;
  uint32_t vocab_size = 0;
  uint32_t max_context = 0;

  NormKind norm = NormKind::kRmsNorm;
  NormPlacement norm_placement = NormPlacement::kPre;
  float norm_eps = 1e-5f;
  bool final_norm = true;

  FfnKind ffn = FfnKind::kGated;
  Activation activation = Activation::kSiLU;

  PositionKind positions = PositionKind::kRope;
  float rope_theta = 10000.0f;
  RopePairing rope_pairing = RopePairing::kInterleaved;

  AttentionMask mask = AttentionMask::kCausal;

  bool qkv_bias = false;
  bool out_bias = false;
  bool ffn_bias = false;
  bool tied_classifier = true;
  bool output_bias = false;  // a bias on the classifier

  size_t q_dim() const { return size_t{n_heads} * head_dim; }
  size_t kv_dim() const { return size_t{n_kv_heads} * head_dim; }
};

}  // namespace ember

#endif  // EMBER_RUNTIME_CONFIG_H_
