// Weights: the model's tensors bound to their roles, checked against the config.
#ifndef EMBER_RUNTIME_MODEL_WEIGHTS_H_
#define EMBER_RUNTIME_MODEL_WEIGHTS_H_

#include <cstddef>
#include <vector>

#include "runtime/model/config.h"
#include "runtime/model/tensor.h"
#include "runtime/status.h"

namespace ember {

// Pointers into the model's tensor list; null where the config has no such tensor
// (biases, LayerNorm shifts, the gate of a plain FFN).
struct LayerWeights {
  const Tensor* attn_norm = nullptr;       // (d_model)
  const Tensor* attn_norm_bias = nullptr;  // (d_model), LayerNorm only
  const Tensor* wq = nullptr;              // (q_dim, d_model)
  const Tensor* wk = nullptr;              // (kv_dim, d_model)
  const Tensor* wv = nullptr;              // (kv_dim, d_model)
  const Tensor* wo = nullptr;              // (d_model, q_dim)
  const Tensor* bq = nullptr;              // (q_dim)
  const Tensor* bk = nullptr;              // (kv_dim)
  const Tensor* bv = nullptr;              // (kv_dim)
  const Tensor* bo = nullptr;              // (d_model)
  const Tensor* ffn_norm = nullptr;        // (d_model)
  const Tensor* ffn_norm_bias = nullptr;   // (d_model), LayerNorm only
  const Tensor* ffn_gate = nullptr;        // (ffn_dim, d_model), gated FFN only
  const Tensor* ffn_up = nullptr;          // (ffn_dim, d_model)
  const Tensor* ffn_down = nullptr;        // (d_model, ffn_dim)
  const Tensor* ffn_gate_bias = nullptr;   // (ffn_dim)
  const Tensor* ffn_up_bias = nullptr;     // (ffn_dim)
  const Tensor* ffn_down_bias = nullptr;   // (d_model)
  const Tensor* attn_q_norm = nullptr;     // (head_dim), config.qk_norm
  const Tensor* attn_k_norm = nullptr;     // (head_dim), config.qk_norm
  const Tensor* attn_post_norm = nullptr;  // (d_model), config.post_norms
  const Tensor* ffn_post_norm = nullptr;   // (d_model), config.post_norms
};

struct Weights {
  const Tensor* tok_embedding = nullptr;     // (vocab, d_model)
  const Tensor* pos_embedding = nullptr;     // (max_context, d_model), learned positions
  const Tensor* tok_types = nullptr;         // (token_types, d_model), config.token_types
  const Tensor* embedding_norm = nullptr;    // (d_model), config.embedding_norm
  const Tensor* embedding_norm_bias = nullptr;  // (d_model), LayerNorm only
  // The classification head (config.labels), f32: pooler (with label_pooler) and output.
  const Tensor* cls_pool = nullptr;
  const Tensor* cls_pool_bias = nullptr;
  const Tensor* cls_out = nullptr;
  const Tensor* cls_out_bias = nullptr;
  // The embedding's dense projections (config.dense_dims), f32; their biases or null.
  std::vector<const Tensor*> dense, dense_bias;
  const Tensor* output_norm = nullptr;       // (d_model), when config.final_norm
  const Tensor* output_norm_bias = nullptr;  // (d_model), LayerNorm only
  const Tensor* output = nullptr;            // (vocab, d_model); tok_embedding when tied
  const Tensor* output_bias = nullptr;       // (vocab), when config.output_bias
  std::vector<LayerWeights> layers;
};

// Calls f(const Tensor&) for every matrix a forward pass multiplies with (Linear): each
// layer's projections, then the classifier (the embedding table when tied).
template <class F>
void ForEachMatrix(const Weights& w, const F& f) {
  for (const LayerWeights& l : w.layers) {
    for (const Tensor* t : {l.wq, l.wk, l.wv, l.wo, l.ffn_gate, l.ffn_up, l.ffn_down}) {
      if (t) f(*t);
    }
  }
  if (w.output) f(*w.output);
}

// A vision tower's weights (names: schema/model.fbs VisionConfig).
struct VisionWeights {
  Weights encoder;                     // "v." + the text names; no token table or output
  const Tensor* patch = nullptr;       // (d, 3 * patch^2)  "v.patch_embd.weight"
  const Tensor* patch_bias = nullptr;  // (d)               "v.patch_embd.bias"
  const Tensor* projector_norm = nullptr;  // (d), kAveragePool "mm.soft_emb_norm.weight"
  const Tensor* projector = nullptr;       // (text d_model, projector_inputs())
};

// Finds every tensor the config needs in `tensors`, checks its shape and dtype, and
// rejects missing, misshapen or unexpected tensors with a message naming them. With
// `vision`, the tensors whose names start "v." or "mm." are the tower's: left to
// BindVisionWeights (without, they are unexpected).
Status BindWeights(const ModelConfig& config, const std::vector<Tensor>& tensors,
                   Weights* weights, bool vision = false);
// The same for a vision tower over a text model of `text_dim`: every "v." and "mm."
// tensor, and no other.
Status BindVisionWeights(const VisionConfig& config, size_t text_dim,
                         const std::vector<Tensor>& tensors, VisionWeights* weights);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_WEIGHTS_H_
