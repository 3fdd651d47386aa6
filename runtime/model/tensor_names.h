// The names of the tensors a model file holds (GGUF-style, so llama.cpp users recognize
// them). The converters write these names and the loader binds them.
#ifndef EMBER_RUNTIME_MODEL_TENSOR_NAMES_H_
#define EMBER_RUNTIME_MODEL_TENSOR_NAMES_H_

#include <cstring>
#include <string>

#include "runtime/status.h"

namespace ember::names {

inline constexpr char kTokEmbedding[] = "token_embd.weight";     // (vocab, d_model)
inline constexpr char kPosEmbedding[] = "position_embd.weight";  // (max_context, d_model)
inline constexpr char kTokTypes[] = "token_types.weight";        // (token_types, d_model)
inline constexpr char kEmbeddingNorm[] = "token_embd_norm.weight";  // (d_model)
inline constexpr char kEmbeddingNormBias[] = "token_embd_norm.bias";
// A classification head (config.labels): BERT's pooler and the output layer, f32.
inline constexpr char kClsPool[] = "cls.weight";             // (d_model, d_model)
inline constexpr char kClsPoolBias[] = "cls.bias";           // (d_model)
inline constexpr char kClsOut[] = "cls.output.weight";       // (labels, d_model)
inline constexpr char kClsOutBias[] = "cls.output.bias";     // (labels)
// Dense projections of a pooled embedding (config.dense_dims), f32: (out, in) and (out).
inline constexpr char kDense[] = "dense.%u.weight";
inline constexpr char kDenseBias[] = "dense.%u.bias";
inline constexpr char kOutputNorm[] = "output_norm.weight";      // (d_model)
inline constexpr char kOutputNormBias[] = "output_norm.bias";    // (d_model)
inline constexpr char kOutput[] = "output.weight";               // (vocab, d_model)
inline constexpr char kOutputBias[] = "output.bias";             // (vocab)

// A vision tower (schema/model.fbs VisionConfig): its encoder's tensors are the names
// here with the prefix "v.", plus the patch embedding (with that prefix too) and the
// connector's projection (and norm), named as llama.cpp's mmproj files name them.
inline constexpr char kPatchEmbedding[] = "patch_embd.weight";     // (d, 3 * patch^2)
inline constexpr char kPatchEmbeddingBias[] = "patch_embd.bias";   // (d)
inline constexpr char kShuffleProjector[] = "mm.model.fc.weight";  // (text d, d * f^2)
inline constexpr char kPoolProjector[] = "mm.input_projection.weight";  // (text d, d)
inline constexpr char kProjectorNorm[] = "mm.soft_emb_norm.weight";     // (d), 1 + w
// Whether a tensor is a vision tower's: its name starts "v." or "mm.".
inline bool IsVisionTensor(const char* name) {
  return strncmp(name, "v.", 2) == 0 || strncmp(name, "mm.", 3) == 0;
}

// Per-layer names: printf formats taking the layer index.
inline constexpr char kAttnNorm[] = "blk.%u.attn_norm.weight";  // (d_model)
inline constexpr char kAttnNormBias[] = "blk.%u.attn_norm.bias";
inline constexpr char kAttnQ[] = "blk.%u.attn_q.weight";  // (q_dim, d_model)
inline constexpr char kAttnQBias[] = "blk.%u.attn_q.bias";
inline constexpr char kAttnK[] = "blk.%u.attn_k.weight";  // (kv_dim, d_model)
inline constexpr char kAttnKBias[] = "blk.%u.attn_k.bias";
inline constexpr char kAttnV[] = "blk.%u.attn_v.weight";  // (kv_dim, d_model)
inline constexpr char kAttnVBias[] = "blk.%u.attn_v.bias";
inline constexpr char kAttnOut[] = "blk.%u.attn_output.weight";  // (d_model, q_dim)
inline constexpr char kAttnOutBias[] = "blk.%u.attn_output.bias";
inline constexpr char kFfnNorm[] = "blk.%u.ffn_norm.weight";  // (d_model)
inline constexpr char kFfnNormBias[] = "blk.%u.ffn_norm.bias";
inline constexpr char kFfnGate[] = "blk.%u.ffn_gate.weight";  // (ffn_dim, d_model), gated
inline constexpr char kFfnGateBias[] = "blk.%u.ffn_gate.bias";
inline constexpr char kFfnUp[] = "blk.%u.ffn_up.weight";  // (ffn_dim, d_model)
inline constexpr char kFfnUpBias[] = "blk.%u.ffn_up.bias";
inline constexpr char kFfnDown[] = "blk.%u.ffn_down.weight";  // (d_model, ffn_dim)
inline constexpr char kFfnDownBias[] = "blk.%u.ffn_down.bias";
// config.qk_norm: per-head RMSNorm weights of q and k, (head_dim) each.
inline constexpr char kAttnQNorm[] = "blk.%u.attn_q_norm.weight";
inline constexpr char kAttnKNorm[] = "blk.%u.attn_k_norm.weight";
// config.post_norms: norms of the attention and FFN outputs, (d_model) each.
inline constexpr char kAttnPostNorm[] = "blk.%u.post_attention_norm.weight";
inline constexpr char kFfnPostNorm[] = "blk.%u.post_ffw_norm.weight";

// Formats a per-layer name into `out` (64 bytes is always enough).
inline void LayerName(const char* format, unsigned layer, char (&out)[64]) {
  Format(out, sizeof(out), format, layer);
}

inline std::string LayerName(const char* format, unsigned layer) {
  char buf[64];
  LayerName(format, layer, buf);
  return buf;
}

}  // namespace ember::names

#endif  // EMBER_RUNTIME_MODEL_TENSOR_NAMES_H_
