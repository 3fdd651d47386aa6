// The forward pass (see forward.h). One layer is AttentionBlock + FeedForwardBlock.
#include "runtime/forward.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/dcheck.h"
#include "kernels/rope.h"

namespace ember {

kernels::RopeParams GlobalRopeParams(const ModelConfig& c) {
  kernels::RopeParams p;
  p.theta = c.rope_theta;
  p.scaling = static_cast<kernels::RopeScalingKind>(c.rope_scaling);
  p.factor = c.rope_scaling_factor;
  p.low_freq_factor = c.rope_low_freq_factor;
  p.high_freq_factor = c.rope_high_freq_factor;
  p.original_context = static_cast<float>(c.rope_original_context);
  p.beta_fast = c.rope_beta_fast;
  p.beta_slow = c.rope_beta_slow;
  p.attention_factor = c.rope_attention_factor;
  p.truncate = c.rope_yarn_truncate;
  if (!c.rope_freq_factors.empty()) p.freq_factors = c.rope_freq_factors.data();
  return p;
}

kernels::RopeParams LayerRopeParams(const ModelConfig& c, size_t layer) {
  if (c.rope_local_theta > 0.0f && c.sliding(layer)) {
    kernels::RopeParams local;
    local.theta = c.rope_local_theta;
    return local;
  }
  return GlobalRopeParams(c);
}

bool RopeShiftable(const ModelConfig& c, size_t context) {
  return c.positions != PositionKind::kRope || c.rope_scaling != RopeScaling::kLongRope ||
         context <= c.rope_original_context;
}

Forward::Forward(const ModelConfig& config, const Weights& weights, const ExecContext& ctx,
                 const Activations& act, const KvCache& kv, const AttentionRecord& record)
    : c_(config),
      w_(weights),
      k_(*ctx.kernels),
      ctx_(ctx),
      act_(act),
      kv_(kv),
      record_(record) {
  const ModelConfig& c = c_;
  rope_global_ = GlobalRopeParams(c);
  rope_local_.theta = c.rope_local_theta;
  local_rope_ = c.rope_local_theta > 0.0f && c.has_sliding_layers();
}

size_t Forward::Run(const int32_t* tokens, size_t batch, size_t pos0, bool all_logits,
                    float* logits, const EmbeddedRows* embedded) {
  ProfileScope pass(ctx_.profile, KernelKind::kPass);
  embedded_ = embedded;
  tokens_ = embedded ? tokens : nullptr;
  Layers(tokens, nullptr, batch, pos0);
  embedded_ = nullptr;
  tokens_ = nullptr;
  return Logits(batch, all_logits, logits);
}

const float* Forward::Hidden(const int32_t* tokens, const uint8_t* types, size_t batch,
                             size_t pos0) {
  ProfileScope pass(ctx_.profile, KernelKind::kPass);
  Layers(tokens, types, batch, pos0);
  if (!c_.final_norm) return act_.x;
  Norm(w_.output_norm, w_.output_norm_bias, act_.x, act_.x_norm, batch);
  return act_.x_norm;
}

const float* Forward::HiddenPacked(const int32_t* tokens, const uint8_t* types,
                                   const size_t* bounds, size_t texts) {
  EMBER_DCHECK(texts >= 1 && bounds[0] == 0);
  bounds_ = bounds;
  texts_ = texts;
  const float* rows = Hidden(tokens, types, bounds[texts], 0);
  bounds_ = nullptr;
  texts_ = 0;
  return rows;
}

const float* Forward::Encode(size_t batch) { return Hidden(nullptr, nullptr, batch, 0); }

size_t Forward::TextOf(size_t row) const {
  // The last text starting at or before row (texts_ is small: a step's texts).
  size_t t = 0;
  while (t + 1 < texts_ && bounds_[t + 1] <= row) ++t;
  return t;
}

size_t Forward::TextStart(size_t row) const {
  return bounds_ == nullptr ? 0 : bounds_[TextOf(row)];
}

size_t Forward::TextEnd(size_t row, size_t batch) const {
  return bounds_ == nullptr ? batch : bounds_[TextOf(row) + 1];
}

bool Forward::BlockOf(size_t row, size_t batch, size_t* begin, size_t* end) const {
  if (embedded_ == nullptr || !embedded_->bidirectional) return false;
  const int32_t marker = embedded_->marker;
  if (tokens_[row] != marker) return false;
  size_t b = row, e = row + 1;
  while (b > 0 && tokens_[b - 1] == marker) --b;
  while (e < batch && tokens_[e] == marker) ++e;
  *begin = b;
  *end = e;
  return true;
}

void Forward::Layers(const int32_t* tokens, const uint8_t* types, size_t batch,
                     size_t pos0) {
  EMBER_DCHECK(batch >= 1 && batch <= act_.max_batch);
  EMBER_DCHECK(pos0 + batch <= kv_.max_context);
  if (ctx_.profile) ++ctx_.profile->passes;
  Embed(tokens, types, batch, pos0);
  if (c_.positions == PositionKind::kRope) RopeTables(batch, pos0);
  for (size_t layer = 0; layer < c_.n_layers; ++layer) {
    AttentionBlock(layer, batch, pos0);
    FeedForwardBlock(layer, batch);
  }
}

// x[i] = token_embd[token_i] (* embedding_scale), or the next embedded row for a marker,
//        or x[i] as the caller wrote it (Encode),
//        (+ position_embd[pos0 + i]) (+ token_types[type_i]), then norm(x[i]) where the
//        model norms its embeddings
void Forward::Embed(const int32_t* tokens, const uint8_t* types, size_t batch,
                    size_t pos0) {
  float* x = act_.x;
  float* row = act_.x_norm;  // scratch, one row
  const size_t d = c_.d_model;
  const float* given = embedded_ ? embedded_->rows : nullptr;
  for (size_t i = 0; i < batch; ++i) {
    if (tokens == nullptr) {
      // Encode: the row is in x already.
    } else if (given != nullptr && tokens[i] == embedded_->marker) {
      memcpy(x + i * d, given, d * sizeof(float));
      given += d;
    } else {
      EmbeddingRow(*w_.tok_embedding, static_cast<uint64_t>(tokens[i]), x + i * d);
      if (c_.embedding_scale != 1.0f) k_.scale(x + i * d, c_.embedding_scale, d);
    }
    if (w_.pos_embedding) {
      EmbeddingRow(*w_.pos_embedding, pos0 + i - TextStart(i), row);
      k_.add(x + i * d, row, d);
    }
    if (w_.tok_types) {
      EmbeddingRow(*w_.tok_types, types ? types[i] : 0, row);
      k_.add(x + i * d, row, d);
    }
  }
  if (w_.embedding_norm) {
    Norm(w_.embedding_norm, w_.embedding_norm_bias, x, act_.x_norm, batch);
    memcpy(x, act_.x_norm, batch * d * sizeof(float));
  }
}

// The cos/sin lanes of the batch's positions over the rotated dimensions (rope_dims()),
// for global layers and, where they have their own base, for sliding ones. LongRoPE
// takes its long factors in a pass that reaches past the original context (as
// transformers picks them per forward call).
void Forward::RopeTables(size_t batch, size_t pos0) {
  ProfileScope scope(ctx_.profile, KernelKind::kRope);
  const size_t hd = c_.head_dim, dims = c_.rope_dims();
  const bool interleaved = c_.rope_pairing == RopePairing::kInterleaved;
  kernels::RopeParams global = rope_global_;
  size_t reach = pos0 + batch;  // a packed step's: its longest text
  if (bounds_ != nullptr) {
    reach = 0;
    for (size_t t = 0; t < texts_; ++t) {
      reach = std::max(reach, bounds_[t + 1] - bounds_[t]);
    }
  }
  if (c_.rope_scaling == RopeScaling::kLongRope && reach > c_.rope_original_context) {
    global.freq_factors = c_.rope_long_freq_factors.data();
  }
  for (size_t i = 0; i < batch; ++i) {
    const size_t position = pos0 + i - TextStart(i);
    kernels::RopeTables(position, global, dims, interleaved, act_.rope_cos + i * hd,
                        act_.rope_sin + i * hd);
    if (local_rope_) {
      kernels::RopeTables(position, rope_local_, dims, interleaved,
                          act_.rope_local_cos + i * hd, act_.rope_local_sin + i * hd);
    }
  }
}

// Pre-LN:  x = x + Wo Attention(RoPE(Wq h), RoPE(Wk h), Wv h),  h = norm(x)
//          (qk_norm: q and k normed per head before RoPE; post_norms: x + norm(Wo ...))
// Post-LN: x = norm(x + Wo Attention(Wq x, Wk x, Wv x))
void Forward::AttentionBlock(size_t layer, size_t batch, size_t pos0) {
  const LayerWeights& w = w_.layers[layer];
  const bool pre = c_.norm_placement == NormPlacement::kPre;
  float* x = act_.x;
  float* h = act_.x_norm;
  float* q = act_.q;
  const size_t kv = c_.kv_dim();
  // New keys and values: computed in place in an f32 cache; else in f32 scratch, then
  // converted into the cache once (KvCache::Store).
  float* k_new = kv_.InPlaceRows(layer, kKeys, pos0, batch);
  float* v_new = kv_.InPlaceRows(layer, kValues, pos0, batch);
  const bool in_place = k_new != nullptr && v_new != nullptr;
  if (!in_place) {
    k_new = act_.kv_new;
    v_new = act_.kv_new + batch * kv;
  }

  const float* in = x;
  if (pre) {
    Norm(w.attn_norm, w.attn_norm_bias, x, h, batch);
    in = h;
  }
  const Tensor* qkv[] = {w.wq, w.wk, w.wv};
  float* qkv_out[] = {q, k_new, v_new};
  LinearGroup(ctx_, act_.quant, qkv, qkv_out, 3, in, batch);
  AddBias(w.bq, q, batch);
  AddBias(w.bk, k_new, batch);
  AddBias(w.bv, v_new, batch);
  if (c_.qk_norm) {
    HeadNorm(w.attn_q_norm, q, c_.n_heads, batch, c_.q_dim());
    HeadNorm(w.attn_k_norm, k_new, c_.n_kv_heads, batch, kv);
  }
  if (c_.positions == PositionKind::kRope) {
    const bool local = local_rope_ && c_.sliding(layer);
    Rope(q, c_.n_heads, batch, c_.q_dim(), local);
    Rope(k_new, c_.n_kv_heads, batch, kv, local);
  }
  if (!in_place) kv_.Store(k_, layer, pos0, batch, k_new, v_new);
  Attention(layer, batch, pos0);
  float* proj = act_.proj;
  Linear(ctx_, act_.quant, *w.wo, act_.attn_out, batch, proj);
  AddBias(w.bo, proj, batch);
  AddResidual(w.attn_post_norm, proj, batch);
  if (!pre) {
    Norm(w.attn_norm, w.attn_norm_bias, x, h, batch);
    memcpy(x, h, batch * c_.d_model * sizeof(float));
  }
}

// Pre-LN:  x = x + W_down act(W_gate h) * (W_up h),  h = norm(x)   (gated; a plain
//          FFN drops the gate: x + W_down act(W_up h); post_norms: x + norm(W_down ..))
// Post-LN: x = norm(x + FFN(x))
void Forward::FeedForwardBlock(size_t layer, size_t batch) {
  const LayerWeights& w = w_.layers[layer];
  const bool pre = c_.norm_placement == NormPlacement::kPre;
  float* x = act_.x;
  float* h = act_.x_norm;
  float* a = act_.ffn_a;

  const float* in = x;
  if (pre) {
    Norm(w.ffn_norm, w.ffn_norm_bias, x, h, batch);
    in = h;
  }
  if (c_.ffn == FfnKind::kGated) {
    float* b = act_.ffn_b;
    const Tensor* gate_up[] = {w.ffn_gate, w.ffn_up};
    float* gate_up_out[] = {a, b};
    LinearGroup(ctx_, act_.quant, gate_up, gate_up_out, 2, in, batch);
    AddBias(w.ffn_gate_bias, a, batch);
    AddBias(w.ffn_up_bias, b, batch);
    Activate(a, b, batch);
  } else {
    Linear(ctx_, act_.quant, *w.ffn_up, in, batch, a);
    AddBias(w.ffn_up_bias, a, batch);
    Activate(a, nullptr, batch);
  }
  float* proj = act_.proj;
  Linear(ctx_, act_.quant, *w.ffn_down, a, batch, proj);
  AddBias(w.ffn_down_bias, proj, batch);
  AddResidual(w.ffn_post_norm, proj, batch);
  if (!pre) {
    Norm(w.ffn_norm, w.ffn_norm_bias, x, h, batch);
    memcpy(x, h, batch * c_.d_model * sizeof(float));
  }
}

void Forward::Rope(float* x, size_t n_heads, size_t batch, size_t stride, bool local) {
  ProfileScope scope(ctx_.profile, KernelKind::kRope);
  const size_t hd = c_.head_dim;
  const auto rope =
      c_.rope_pairing == RopePairing::kInterleaved ? k_.rope_interleaved : k_.rope_half;
  const float* cos = local ? act_.rope_local_cos : act_.rope_cos;
  const float* sin = local ? act_.rope_local_sin : act_.rope_sin;
  const size_t dims = c_.rope_dims();
  ParallelRows(ctx_, batch, n_heads * hd, [&](size_t i0, size_t count) {
    for (size_t i = i0; i < i0 + count; ++i) {
      if (dims == hd) {
        rope(x + i * stride, cos + i * hd, sin + i * hd, n_heads, hd);
        continue;
      }
      // Partial rotation: each head's first `dims` values, the rest as they are.
      for (size_t h = 0; h < n_heads; ++h) {
        rope(x + i * stride + h * hd, cos + i * hd, sin + i * hd, 1, dims);
      }
    }
  });
}

void Forward::Norm(const Tensor* weight, const Tensor* bias, const float* in, float* out,
                   size_t rows) {
  ProfileScope scope(ctx_.profile, KernelKind::kNorm);
  const size_t d = c_.d_model;
  ParallelRows(ctx_, rows, d, [&](size_t i0, size_t count) {
    for (size_t i = i0; i < i0 + count; ++i) {
      if (c_.norm == NormKind::kRmsNorm) {
        k_.rms_norm(in + i * d, weight->f32(), c_.norm_eps, out + i * d, d);
      } else {
        k_.layer_norm(in + i * d, weight->f32(), bias ? bias->f32() : nullptr,
                      c_.norm_eps, out + i * d, d);
      }
    }
  });
}

// In place, each of n_heads heads of each of batch rows (at `stride`): RMSNorm over
// head_dim with one weight for every head (config.qk_norm).
void Forward::HeadNorm(const Tensor* weight, float* x, size_t n_heads, size_t batch,
                       size_t stride) {
  ProfileScope scope(ctx_.profile, KernelKind::kNorm);
  const size_t hd = c_.head_dim;
  ParallelRows(ctx_, batch, n_heads * hd, [&](size_t i0, size_t count) {
    for (size_t i = i0; i < i0 + count; ++i) {
      k_.rms_norm_rows(x + i * stride, weight->f32(), c_.norm_eps, n_heads, hd);
    }
  });
}

// x += out, or x += norm(out) where the sub-block has a post-norm (config.post_norms).
void Forward::AddResidual(const Tensor* post_norm, const float* out, size_t rows) {
  if (post_norm) {
    Norm(post_norm, nullptr, out, act_.x_norm, rows);
    out = act_.x_norm;
  }
  k_.add(act_.x, out, rows * c_.d_model);
}

void Forward::AddBias(const Tensor* bias, float* x, size_t rows) {
  if (bias) k_.add_bias(x, bias->f32(), rows, bias->cols());
}

// x = act(x), times `up` elementwise for a gated FFN (up non-null), over `rows` rows of
// ffn_dim (a prefill's across the pool).
void Forward::Activate(float* x, const float* up, size_t rows) {
  ProfileScope scope(ctx_.profile, KernelKind::kActivation);
  const size_t f = c_.ffn_dim;
  const kernels::ActivationFn act = c_.activation == Activation::kSiLU   ? k_.silu
                                    : c_.activation == Activation::kReLU ? k_.relu
                                    : c_.activation == Activation::kGeluTanh
                                        ? k_.gelu_tanh
                                        : k_.gelu_erf;
  ParallelRows(ctx_, rows, f, [&](size_t r0, size_t count) {
    act(x + r0 * f, count * f);
    if (up) k_.mul(x + r0 * f, up + r0 * f, count * f);
  });
}

// logits = W_out norm(x) (+ b_out), soft-capped where the config says: for the last
// token, or every token with all_logits.
size_t Forward::Logits(size_t batch, bool all_logits, float* logits) {
  const size_t d = c_.d_model;
  const size_t first = all_logits ? 0 : batch - 1;
  const size_t rows = batch - first;
  const float* x = act_.x + first * d;
  float* h = act_.x_norm;
  if (c_.final_norm) {
    Norm(w_.output_norm, w_.output_norm_bias, x, h, rows);
    x = h;
  }
  Linear(ctx_, act_.quant, *w_.output, x, rows, logits);
  AddBias(w_.output_bias, logits, rows);
  if (c_.final_softcap > 0.0f) {
    ProfileScope scope(ctx_.profile, KernelKind::kActivation);
    k_.soft_cap(logits, c_.final_softcap, rows * c_.vocab_size);
  }
  return rows;
}

}  // namespace ember
