// ModelConfig: the architecture of a model as plain data, mirrored from the file's
// Config table so the public API does not expose FlatBuffers types.
#ifndef EMBER_RUNTIME_MODEL_CONFIG_H_
#define EMBER_RUNTIME_MODEL_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/model/image_processor_config.h"

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
enum class RopeScaling : uint8_t {
  kNone = 0,
  kLinear = 1,
  kLlama3 = 2,
  kYarn = 3,
  kLongRope = 4
};
enum class LayerAttention : uint8_t { kGlobal = 0, kSliding = 1 };
enum class Pooling : uint8_t { kNone = 0, kMean = 1, kCls = 2, kLast = 3 };

const char* DTypeName(DType dtype);
const char* NormKindName(NormKind kind);
const char* ActivationName(Activation activation);
const char* PositionKindName(PositionKind kind);
// "none", "linear", "llama3", "yarn", "longrope"
const char* RopeScalingName(RopeScaling scaling);
// "none", "mean", "cls", "last"
const char* PoolingName(Pooling pooling);

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

  // Current families (schema/model.fbs has the semantics of each; the defaults leave the
  // pass as it was).
  RopeScaling rope_scaling = RopeScaling::kNone;
  float rope_scaling_factor = 1.0f;
  float rope_low_freq_factor = 1.0f;
  float rope_high_freq_factor = 4.0f;
  uint32_t rope_original_context = 0;
  float rope_beta_fast = 32.0f;
  float rope_beta_slow = 1.0f;
  float rope_attention_factor = 1.0f;
  bool rope_yarn_truncate = true;
  float rope_local_theta = 0.0f;  // 0: sliding layers rotate as global ones
  bool qk_norm = false;
  bool post_norms = false;
  float embedding_scale = 1.0f;
  float attention_scale = 0.0f;  // 0: 1 / sqrt(head_dim)
  float attn_softcap = 0.0f;     // 0: none
  float final_softcap = 0.0f;    // 0: none
  uint32_t sliding_window = 0;
  std::vector<LayerAttention> layer_attention;  // empty or n_layers; empty: all global
  std::vector<float> rope_freq_factors;         // empty or rope_dims() / 2
  std::vector<float> rope_long_freq_factors;    // LongRope: rope_dims() / 2
  uint32_t rope_dim = 0;                        // 0: head_dim
  // Embedding models (schema/model.fbs): segment embeddings, a norm of the embeddings,
  // the pooling of the final hidden states into one vector, and its L2 normalization.
  uint32_t token_types = 0;
  bool embedding_norm = false;
  Pooling pooling = Pooling::kNone;
  bool normalize = false;
  uint32_t labels = 0;        // a classification head's outputs (0: none)
  bool label_pooler = false;  // BERT's pooler (dense, tanh) before the head
  // Dense projections of the pooled vector (schema/model.fbs): each one's outputs, and
  // its flags (kDenseBias, kDenseTanh).
  std::vector<uint32_t> dense_dims;
  std::vector<uint8_t> dense_flags;
  static constexpr uint8_t kDenseBias = 1, kDenseTanh = 2;
  // The values of the embedding before truncation: the last projection's, or d_model.
  size_t embedding_values() const {
    return dense_dims.empty() ? d_model : dense_dims.back();
  }
  // The widest vector between pooling and the embedding (d_model or a projection's).
  size_t pooled_width() const {
    size_t w = d_model;
    for (const uint32_t n : dense_dims) w = n > w ? n : w;
    return w;
  }

  size_t q_dim() const { return size_t{n_heads} * head_dim; }
  size_t kv_dim() const { return size_t{n_kv_heads} * head_dim; }
  // The dimensions of each head RoPE rotates.
  size_t rope_dims() const { return rope_dim ? rope_dim : head_dim; }
  bool sliding(size_t layer) const {
    return layer < layer_attention.size() &&
           layer_attention[layer] == LayerAttention::kSliding;
  }
  // Positions layer `layer` attends to: sliding_window for a Sliding layer, 0 (all) else.
  size_t window(size_t layer) const { return sliding(layer) ? sliding_window : 0; }
  // An embedding model: its output is a pooled vector of d_model values, not logits.
  bool embeds() const { return pooling != Pooling::kNone; }
  bool has_sliding_layers() const {
    for (LayerAttention a : layer_attention) {
      if (a == LayerAttention::kSliding) return true;
    }
    return false;
  }
};

// How a vision tower's rows become the text model's (schema/model.fbs ImageConnector).
enum class ImageConnector : uint8_t { kPixelShuffle = 0, kAveragePool = 1 };

// A vision tower and its connector (schema/model.fbs VisionConfig): a tile of
// image_size^2 pixels becomes patches() rows of the encoder, then tokens_per_image()
// rows of the text model's d_model.
struct VisionConfig {
  ModelConfig encoder;  // vocab_size 0, learned positions, bidirectional
  uint32_t image_size = 0;
  uint32_t patch_size = 0;
  ImageConnector connector = ImageConnector::kPixelShuffle;
  uint32_t connector_factor = 1;
  float projector_norm_eps = 1e-6f;  // kAveragePool's RMSNorm
  int32_t image_token_id = -1;
  bool image_blocks_bidirectional = false;
  ImageProcessorConfig processor;
  ImagePrompt prompt;  // marker empty: none

  size_t patches_per_side() const { return image_size / patch_size; }
  size_t patches() const { return patches_per_side() * patches_per_side(); }
  size_t patch_values() const { return size_t{3} * patch_size * patch_size; }
  size_t tokens_per_image() const {
    const size_t side = patches_per_side() / connector_factor;
    return side * side;
  }
  // Columns of the projection: a pixel shuffle's rows are factor^2 encoder rows wide.
  size_t projector_inputs() const {
    return connector == ImageConnector::kPixelShuffle
               ? size_t{encoder.d_model} * connector_factor * connector_factor
               : encoder.d_model;
  }
};

// A SigLIP ViT (transformers' SiglipVisionModel) as ember's encoder: pre-LN LayerNorm
// (eps 1e-6 unless the importer reads another), tanh GELU, biases everywhere, learned
// positions over (image / patch)^2 patches, post_layernorm, bidirectional attention; with
// its connector, SigLIP's processor (image x image, bilinear, 0.5 mean and std) and
// Gemma 3's bidirectional image blocks with the average pool. The image token is unset.
VisionConfig SiglipVisionConfig(uint32_t d, uint32_t heads, uint32_t ffn, uint32_t layers,
                                uint32_t image, uint32_t patch, ImageConnector connector,
                                uint32_t factor);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_CONFIG_H_
