// The forward pass (see forward.h). One layer is AttentionBlock + FeedForwardBlock.
#include "runtime/forward.h"

#include <cmath>
#include <cstring>

#include "kernels/rope.h"

namespace ember {

Forward::Forward(Session& session)
    : s_(session),
      c_(session.model().config()),
      w_(session.model().weights()),
      k_(session.kernels_),
      ctx_{&session.kernels_, session.pool_, session.profile_,
           QuantScratch{reinterpret_cast<int8_t*>(session.Buffer(kBufActQ)),
                        session.Buffer(kBufActScales),
                        reinterpret_cast<int32_t*>(session.Buffer(kBufActSums))}} {}

float* Forward::keys(size_t layer) const {
  return s_.Buffer(kBufKvCache) + (2 * layer) * s_.max_context_ * c_.kv_dim();
}
float* Forward::values(size_t layer) const {
  return s_.Buffer(kBufKvCache) + (2 * layer + 1) * s_.max_context_ * c_.kv_dim();
}

void Forward::Run(const int32_t* tokens, size_t batch, size_t pos0) {
  ProfileScope pass(ctx_.profile, KernelKind::kPass);
  if (ctx_.profile) ++ctx_.profile->passes;
  Embed(tokens, batch, pos0);
  if (c_.positions == PositionKind::kRope) RopeTables(batch, pos0);
  for (size_t layer = 0; layer < c_.n_layers; ++layer) {
    AttentionBlock(layer, batch, pos0);
    FeedForwardBlock(layer, batch);
  }
  Logits(batch);
}

// x[i] = token_embd[token_i] (+ position_embd[pos0 + i])
void Forward::Embed(const int32_t* tokens, size_t batch, size_t pos0) {
  float* x = s_.Buffer(kBufX);
  const size_t d = c_.d_model;
  for (size_t i = 0; i < batch; ++i) {
    EmbeddingRow(*w_.tok_embedding, static_cast<uint64_t>(tokens[i]), x + i * d);
    if (w_.pos_embedding) {
      float* pos = s_.Buffer(kBufXNorm);
      EmbeddingRow(*w_.pos_embedding, pos0 + i, pos);
      k_.add(x + i * d, pos, d);
    }
  }
}

void Forward::RopeTables(size_t batch, size_t pos0) {
  ProfileScope scope(ctx_.profile, KernelKind::kRope);
  const size_t hd = c_.head_dim;
  for (size_t i = 0; i < batch; ++i) {
    kernels::RopeTables(pos0 + i, c_.rope_theta, hd,
                        c_.rope_pairing == RopePairing::kInterleaved,
                        s_.Buffer(kBufRopeCos) + i * hd, s_.Buffer(kBufRopeSin) + i * hd);
  }
}

// Pre-LN:  x = x + Wo Attention(RoPE(Wq h), RoPE(Wk h), Wv h),  h = norm(x)
// Post-LN: x = norm(x + Wo Attention(Wq x, Wk x, Wv x))
void Forward::AttentionBlock(size_t layer, size_t batch, size_t pos0) {
  const LayerWeights& w = w_.layers[layer];
  const bool pre = c_.norm_placement == NormPlacement::kPre;
  float* x = s_.Buffer(kBufX);
  float* h = s_.Buffer(kBufXNorm);
  float* q = s_.Buffer(kBufQ);
  const size_t kv = c_.kv_dim();
  float* k_new = keys(layer) + pos0 * kv;
  float* v_new = values(layer) + pos0 * kv;

  const float* in = x;
  if (pre) {
    Norm(w.attn_norm, w.attn_norm_bias, x, h, batch);
    in = h;
  }
  const Tensor* qkv[] = {w.wq, w.wk, w.wv};
  float* qkv_out[] = {q, k_new, v_new};
  LinearGroup(ctx_, qkv, qkv_out, 3, in, batch);
  AddBias(w.bq, q, batch);
  AddBias(w.bk, k_new, batch);
  AddBias(w.bv, v_new, batch);
  if (c_.positions == PositionKind::kRope) {
    Rope(q, c_.n_heads, batch, c_.q_dim());
    Rope(k_new, c_.n_kv_heads, batch, kv);
  }
  Attention(layer, batch, pos0);
  float* proj = s_.Buffer(kBufProj);
  Linear(ctx_, *w.wo, s_.Buffer(kBufAttnOut), batch, proj);
  AddBias(w.bo, proj, batch);
  k_.add(x, proj, batch * c_.d_model);
  if (!pre) {
    Norm(w.attn_norm, w.attn_norm_bias, x, h, batch);
    memcpy(x, h, batch * c_.d_model * sizeof(float));
  }
}

// Pre-LN:  x = x + W_down act(W_gate h) * (W_up h),  h = norm(x)   (gated; plain drops
// the
//          gate: W_down act(W_up h))
// Post-LN: x = norm(x + FFN(x))
void Forward::FeedForwardBlock(size_t layer, size_t batch) {
  const LayerWeights& w = w_.layers[layer];
  const bool pre = c_.norm_placement == NormPlacement::kPre;
  float* x = s_.Buffer(kBufX);
  float* h = s_.Buffer(kBufXNorm);
  float* a = s_.Buffer(kBufFfnA);
  const size_t f = c_.ffn_dim;

  const float* in = x;
  if (pre) {
    Norm(w.ffn_norm, w.ffn_norm_bias, x, h, batch);
    in = h;
  }
  if (c_.ffn == FfnKind::kGated) {
    float* b = s_.Buffer(kBufFfnB);
    const Tensor* gate_up[] = {w.ffn_gate, w.ffn_up};
    float* gate_up_out[] = {a, b};
    LinearGroup(ctx_, gate_up, gate_up_out, 2, in, batch);
    AddBias(w.ffn_gate_bias, a, batch);
    AddBias(w.ffn_up_bias, b, batch);
    Activate(a, b, batch * f);
  } else {
    Linear(ctx_, *w.ffn_up, in, batch, a);
    AddBias(w.ffn_up_bias, a, batch);
    Activate(a, nullptr, batch * f);
  }
  float* proj = s_.Buffer(kBufProj);
  Linear(ctx_, *w.ffn_down, a, batch, proj);
  AddBias(w.ffn_down_bias, proj, batch);
  k_.add(x, proj, batch * c_.d_model);
  if (!pre) {
    Norm(w.ffn_norm, w.ffn_norm_bias, x, h, batch);
    memcpy(x, h, batch * c_.d_model * sizeof(float));
  }
}

namespace {

struct AttentionTask {
  const kernels::KernelTable* k;
  const float* q;     // (batch, q_dim): the step's queries
  const float* keys;  // layer cache
  const float* values;
  float* out;    // (batch, q_dim): heads concatenated
  float* probs;  // (kAttentionChunk, n_heads, max_context): one row per (token, head)
  size_t first;  // token (index in the step) of work item 0
  size_t pos0, batch, n_heads, head_block, blocks, q_dim, max_context, kv_stride,
      head_dim, group;
  bool causal;
  float scale;
};

// Work item j is head block j % blocks (heads [b * head_block, ...)) of token
// first + j / blocks.
void AttendItems(void* context, size_t begin, size_t count) {
  const AttentionTask& t = *static_cast<const AttentionTask*>(context);
  for (size_t j = begin; j < begin + count; ++j) {
    const size_t token = t.first + j / t.blocks, head0 = j % t.blocks * t.head_block;
    const size_t heads =
        t.n_heads - head0 < t.head_block ? t.n_heads - head0 : t.head_block;
    const size_t n_pos = t.causal ? t.pos0 + token + 1 : t.pos0 + t.batch;
    const size_t row = (token - t.first) * t.n_heads + head0;  // first probs row
    t.k->attend_heads(t.q + token * t.q_dim, t.keys, t.values, t.kv_stride, n_pos,
                      t.head_dim, t.group, head0, heads, t.scale,
                      t.probs + row * t.max_context, t.max_context,
                      t.out + token * t.q_dim);
  }
}

}  // namespace

// For each token, each query head attends over the cached positions it may see: up to
// its own (causal) or every position of the input (bidirectional). Heads sharing a KV
// head (GQA/MQA) read the same cache columns. A token's heads are split into one block
// per thread (each block reads the cache as one forward stream; a head's result does
// not depend on its block, so this split does not change any result), and the blocks
// of up to AttentionChunk() tokens are one parallel step: a prefill does not pay a
// thread hand-over per token.
void Forward::Attention(size_t layer, size_t batch, size_t pos0) {
  ProfileScope scope(ctx_.profile, KernelKind::kAttention);
  const size_t hd = c_.head_dim, heads = c_.n_heads;
  const size_t threads = ctx_.pool ? static_cast<size_t>(ctx_.pool->num_threads()) : 1;
  const size_t head_block = (heads + threads - 1) / threads;
  AttentionTask task{&k_,
                     s_.Buffer(kBufQ),
                     keys(layer),
                     values(layer),
                     s_.Buffer(kBufAttnOut),
                     s_.Buffer(kBufProbs),
                     0,
                     pos0,
                     batch,
                     heads,
                     head_block,
                     (heads + head_block - 1) / head_block,
                     c_.q_dim(),
                     s_.max_context_,
                     c_.kv_dim(),
                     hd,
                     heads / c_.n_kv_heads,
                     c_.mask == AttentionMask::kCausal,
                     1.0f / std::sqrt(static_cast<float>(hd))};
  const size_t chunk = AttentionChunk(s_.options_.max_batch);
  for (size_t first = 0; first < batch; first += chunk) {
    const size_t tokens = batch - first < chunk ? batch - first : chunk;
    task.first = first;
    const size_t items = tokens * task.blocks;
    // Below ~16K multiply-adds in all, a thread hand-over costs more than it saves.
    const size_t last_pos = task.causal ? pos0 + first + tokens : pos0 + batch;
    if (ctx_.pool && items > 1 && tokens * heads * last_pos * hd > 16384) {
      ctx_.pool->ParallelTiles(items, 1, &AttendItems, &task);
    } else {
      AttendItems(&task, 0, items);
    }
    if (s_.attention_record_.weights) {
      for (size_t i = 0; i < tokens; ++i) {
        const size_t n_pos = task.causal ? pos0 + first + i + 1 : pos0 + batch;
        RecordAttentionRow(s_.attention_record_, layer, pos0 + first + i,
                           task.probs + i * heads * task.max_context, task.max_context,
                           n_pos);
      }
    }
  }
}

void Forward::Rope(float* x, size_t n_heads, size_t batch, size_t stride) {
  ProfileScope scope(ctx_.profile, KernelKind::kRope);
  const size_t hd = c_.head_dim;
  const auto rope =
      c_.rope_pairing == RopePairing::kInterleaved ? k_.rope_interleaved : k_.rope_half;
  for (size_t i = 0; i < batch; ++i) {
    rope(x + i * stride, s_.Buffer(kBufRopeCos) + i * hd, s_.Buffer(kBufRopeSin) + i * hd,
         n_heads, hd);
  }
}

void Forward::Norm(const Tensor* weight, const Tensor* bias, const float* in, float* out,
                   size_t rows) {
  ProfileScope scope(ctx_.profile, KernelKind::kNorm);
  const size_t d = c_.d_model;
  for (size_t i = 0; i < rows; ++i) {
    if (c_.norm == NormKind::kRmsNorm) {
      k_.rms_norm(in + i * d, weight->f32(), c_.norm_eps, out + i * d, d);
    } else {
      k_.layer_norm(in + i * d, weight->f32(), bias ? bias->f32() : nullptr, c_.norm_eps,
                    out + i * d, d);
    }
  }
}

void Forward::AddBias(const Tensor* bias, float* x, size_t rows) {
  if (bias) k_.add_bias(x, bias->f32(), rows, bias->cols());
}

// x = act(x), times `up` elementwise for a gated FFN (up non-null).
void Forward::Activate(float* x, const float* up, size_t n) {
  ProfileScope scope(ctx_.profile, KernelKind::kActivation);
  switch (c_.activation) {
    case Activation::kSiLU:
      k_.silu(x, n);
      break;
    case Activation::kReLU:
      k_.relu(x, n);
      break;
    case Activation::kGeluTanh:
      k_.gelu_tanh(x, n);
      break;
    case Activation::kGeluErf:
      k_.gelu_erf(x, n);
      break;
  }
  if (up) k_.mul(x, up, n);
}

// logits = W_out norm(x) (+ b_out): for the last token, or every token with all_logits.
void Forward::Logits(size_t batch) {
  const size_t d = c_.d_model;
  const size_t first = s_.options_.all_logits ? 0 : batch - 1;
  const size_t rows = batch - first;
  const float* x = s_.Buffer(kBufX) + first * d;
  float* h = s_.Buffer(kBufXNorm);
  if (c_.final_norm) {
    Norm(w_.output_norm, w_.output_norm_bias, x, h, rows);
    x = h;
  }
  float* logits = s_.Buffer(kBufLogits);
  Linear(ctx_, *w_.output, x, rows, logits);
  AddBias(w_.output_bias, logits, rows);
  s_.num_logits_ = rows;
  s_.logits_last_ = logits + (rows - 1) * c_.vocab_size;
}

}  // namespace ember
