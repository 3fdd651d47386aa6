// Forward: one pass of the transformer over a batch of tokens, written as the named steps
// a paper would list. GPT-2, Llama and the post-LN encoder are configs of this one pass.
#ifndef EMBER_RUNTIME_FORWARD_H_
#define EMBER_RUNTIME_FORWARD_H_

#include <cstddef>
#include <cstdint>

#include "runtime/linear.h"
#include "runtime/session.h"

namespace ember {

// The session's arena buffers, in the order PlanArena adds them (id == value).
enum SessionBuffer : size_t {
  kBufKvCache,  // (n_layers, 2, max_context, kv_dim): keys then values per layer
  kBufLogits,   // (batch or 1, vocab)
  kBufSampler,  // Sampler::ScratchBytes(vocab)
  kBufTokens,   // Tokenizer::EncodeCapacity(max_prompt_bytes) int32
  kBufX,        // (batch, d_model): the residual stream
  kBufXNorm,    // (batch, d_model): normalized input of a sub-block
  kBufRopeCos,  // (batch, head_dim)
  kBufRopeSin,  // (batch, head_dim)
  kBufQ,        // (batch, q_dim)
  kBufAttnOut,  // (batch, q_dim): heads concatenated
  kBufProbs,    // (AttentionChunk(max_batch), n_heads, max_context): attention weights
  kBufSpans,    // (AttentionChunk(max_batch), 16 spans, n_heads, head_dim + 2): partials
  kBufProj,     // (batch, d_model): output of the attention or FFN projection
  kBufFfnA,     // (batch, ffn_dim): gate, or up for a plain FFN
  kBufFfnB,     // (batch, ffn_dim): up of a gated FFN
  kBufAttnRec,  // SessionOptions::record_attention's AttentionRecord (empty if off)
  kBufActQ,     // (batch, padded widest q8/q4 input) int8: QuantScratch (empty if none)
  kBufActScales,  // (batch, groups) f32
  kBufActSums,    // (batch, groups) int32
  kNumSessionBuffers,
};

// Tokens whose attention runs as one parallel step; kBufProbs holds their rows.
constexpr size_t kMaxAttentionChunk = 4;
inline size_t AttentionChunk(size_t max_batch) {
  if (max_batch < 1) return 1;
  return max_batch < kMaxAttentionChunk ? max_batch : kMaxAttentionChunk;
}

class Forward {
 public:
  explicit Forward(Session& session);
  // tokens[0, batch) at positions pos0.. (all checked by the caller).
  void Run(const int32_t* tokens, size_t batch, size_t pos0);

 private:
  void Embed(const int32_t* tokens, size_t batch, size_t pos0);
  void RopeTables(size_t batch, size_t pos0);
  void AttentionBlock(size_t layer, size_t batch, size_t pos0);
  void FeedForwardBlock(size_t layer, size_t batch);
  void Attention(size_t layer, size_t batch, size_t pos0);
  void Rope(float* x, size_t n_heads, size_t batch, size_t stride);
  void Norm(const Tensor* weight, const Tensor* bias, const float* in, float* out,
            size_t rows);
  void AddBias(const Tensor* bias, float* x, size_t rows);
  void Activate(float* x, const float* up, size_t rows);
  void Logits(size_t batch);

  float* keys(size_t layer) const;
  float* values(size_t layer) const;

  Session& s_;
  const ModelConfig& c_;
  const Weights& w_;
  const kernels::KernelTable& k_;
  ExecContext ctx_;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_FORWARD_H_
