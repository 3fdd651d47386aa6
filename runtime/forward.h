// Forward: one pass of the transformer over a batch of tokens, written as the named steps
// a paper would list. GPT-2, Llama and the post-LN encoder are configs of this one pass.
#ifndef EMBER_RUNTIME_FORWARD_H_
#define EMBER_RUNTIME_FORWARD_H_

#include <cstddef>
#include <cstdint>

#include "kernels/rope.h"
#include "runtime/activations.h"
#include "runtime/attention_record.h"
#include "runtime/linear.h"
#include "runtime/model/model.h"

namespace ember {

// The RoPE of global layers (the model's base and scaling; LongRoPE's short factors), and
// of layer `layer`: a sliding layer's own base (no scaling) where the model has one
// (rope_local_theta, Gemma 3), else the global RoPE.
kernels::RopeParams GlobalRopeParams(const ModelConfig& c);
kernels::RopeParams LayerRopeParams(const ModelConfig& c, size_t layer);
// Whether cached keys can be moved to other positions by a rotation (a context shift) in
// a session of `context` positions: not with LongRoPE past its original context, whose
// passes pick short or long factors by how far they reach (keys of one cache then turn
// at different frequencies).
bool RopeShiftable(const ModelConfig& c, size_t context);

// Rows of a step given as embeddings rather than looked up (an image's rows, from a vision
// tower): each token equal to `marker` takes the next of `rows` (d_model floats each) in
// place of its embedding row, scale included, as transformers' masked_scatter replaces
// the scaled embeddings; positions and segment types are added as to any row. A run of
// markers is one block; with `bidirectional` (Gemma 3's image blocks) each row of a block
// also attends to the whole block, past its own position and its sliding window.
struct EmbeddedRows {
  int32_t marker = -1;
  const float* rows = nullptr;
  size_t count = 0;  // rows held (the markers of every step the rows serve)
  bool bidirectional = false;
};

// One forward pass over a batch of tokens. It borrows everything it touches, given
// explicitly: the config and weights (a text model's, or a vision tower's), how to
// compute (kernels, pool, profile), the activations and KV cache it writes, and the
// attention record (weights null when not recording). It keeps no state of its own
// between passes.
class Forward {
 public:
  Forward(const ModelConfig& config, const Weights& weights, const ExecContext& ctx,
          const Activations& act, const KvCache& kv, const AttentionRecord& record);
  Forward(const Model& model, const ExecContext& ctx, const Activations& act,
          const KvCache& kv, const AttentionRecord& record)
      : Forward(model.config(), model.weights(), ctx, act, kv, record) {}

  // Runs tokens[0, batch) at positions pos0.. (the caller checked the tokens, batch <=
  // act.max_batch and pos0 + batch <= the cache's context), writes their keys and values
  // to the cache, and the logits of the last token, or of every token with all_logits,
  // to logits (rows, vocab). Returns the rows written. With `embedded`, the step's
  // markers take their rows from embedded->rows onward (the caller checked it holds
  // them, and that no bidirectional block continues into the next step).
  size_t Run(const int32_t* tokens, size_t batch, size_t pos0, bool all_logits,
             float* logits, const EmbeddedRows* embedded = nullptr);
  // Runs the layers as Run does, with the tokens' segment `types` (null: all 0) where the
  // model has segment embeddings, and returns the batch's final hidden states (batch rows
  // of d_model, after the final norm where the model has one; valid until the next pass)
  // instead of logits: what an embedding model pools.
  const float* Hidden(const int32_t* tokens, const uint8_t* types, size_t batch,
                      size_t pos0);
  // Hidden over several whole texts packed in one step from position 0: text t is rows
  // [bounds[t], bounds[t + 1]) (bounds[0] = 0, increasing, bounds[texts] <= max_batch),
  // at positions 0.. of its own, attending only within itself (causal or not, as the
  // model is) as if it ran alone. No padding: a short text costs its own rows only.
  const float* HiddenPacked(const int32_t* tokens, const uint8_t* types,
                            const size_t* bounds, size_t texts);
  // Hidden over rows the caller already wrote to act.x (a vision tower's patch
  // embeddings) in place of token lookups, at positions 0..batch - 1 (learned positions
  // and the rest of Embed added to them), one step.
  const float* Encode(size_t batch);

 private:
  void Layers(const int32_t* tokens, const uint8_t* types, size_t batch, size_t pos0);
  void Embed(const int32_t* tokens, const uint8_t* types, size_t batch, size_t pos0);
  void RopeTables(size_t batch, size_t pos0);
  void AttentionBlock(size_t layer, size_t batch, size_t pos0);
  void FeedForwardBlock(size_t layer, size_t batch);
  void Attention(size_t layer, size_t batch, size_t pos0);
  // Attention of a whole bidirectional input by blocks of queries (act.blocked); false,
  // having done nothing, where the step is not one (forward_attention.cc).
  bool AttentionBlocked(size_t layer, size_t batch, size_t pos0);
  void Rope(float* x, size_t n_heads, size_t batch, size_t stride, bool local);
  void Norm(const Tensor* weight, const Tensor* bias, const float* in, float* out,
            size_t rows);
  void HeadNorm(const Tensor* weight, float* x, size_t n_heads, size_t batch,
                size_t stride);
  void AddResidual(const Tensor* post_norm, const float* out, size_t rows);
  void AddBias(const Tensor* bias, float* x, size_t rows);
  void Activate(float* x, const float* up, size_t rows);
  size_t Logits(size_t batch, bool all_logits, float* logits);
  // Where row `row` of the step's text starts and ends (rows); the whole step [0, batch)
  // unless the step is packed (HiddenPacked).
  size_t TextOf(size_t row) const;  // a packed step's text holding row
  size_t TextStart(size_t row) const;
  size_t TextEnd(size_t row, size_t batch) const;
  // The bidirectional block holding step row `row`, [*begin, *end) in step rows; false
  // when the row is in none.
  bool BlockOf(size_t row, size_t batch, size_t* begin, size_t* end) const;

  const ModelConfig& c_;
  const Weights& w_;
  const kernels::KernelTable& k_;
  const ExecContext& ctx_;
  const Activations& act_;
  const KvCache& kv_;
  const AttentionRecord& record_;
  // RoPE of global layers, and of sliding ones when they have their own base
  // (local_rope_: rope_local_theta, no scaling).
  kernels::RopeParams rope_global_, rope_local_;
  bool local_rope_ = false;
  // A packed step's text bounds (HiddenPacked), else null.
  const size_t* bounds_ = nullptr;
  size_t texts_ = 0;
  // A step's embedded rows (Run), and its tokens while they are set, else null.
  const EmbeddedRows* embedded_ = nullptr;
  const int32_t* tokens_ = nullptr;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_FORWARD_H_
