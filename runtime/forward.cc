// The forward pass (see forward.h). One layer is AttentionBlock + FeedForwardBlock.
#include "runtime/forward.h"

#include <cmath>
#include <cstring>

#include "kernels/dcheck.h"
#include "kernels/rope.h"

namespace ember {

Forward::Forward(const Model& model, const ExecContext& ctx, const Activations& act,
                 const KvCache& kv, const AttentionRecord& record)
    : c_(model.config()),
      w_(model.weights()),
      k_(*ctx.kernels),
      ctx_(ctx),
      act_(act),
      kv_(kv),
      record_(record) {
  const ModelConfig& c = c_;
  rope_global_.theta = c.rope_theta;
  rope_global_.scaling = static_cast<kernels::RopeScalingKind>(c.rope_scaling);
  rope_global_.factor = c.rope_scaling_factor;
  rope_global_.low_freq_factor = c.rope_low_freq_factor;
  rope_global_.high_freq_factor = c.rope_high_freq_factor;
  rope_global_.original_context = static_cast<float>(c.rope_original_context);
  rope_global_.beta_fast = c.rope_beta_fast;
  rope_global_.beta_slow = c.rope_beta_slow;
  rope_global_.attention_factor = c.rope_attention_factor;
  rope_global_.truncate = c.rope_yarn_truncate;
  if (!c.rope_freq_factors.empty())
    rope_global_.freq_factors = c.rope_freq_factors.data();
  rope_local_.theta = c.rope_local_theta;
  local_rope_ = c.rope_local_theta > 0.0f && c.has_sliding_layers();
}

size_t Forward::Run(const int32_t* tokens, size_t batch, size_t pos0, bool all_logits,
                    float* logits) {
  EMBER_DCHECK(batch >= 1 && batch <= act_.max_batch);
  EMBER_DCHECK(pos0 + batch <= kv_.max_context);
  ProfileScope pass(ctx_.profile, KernelKind::kPass);
  if (ctx_.profile) ++ctx_.profile->passes;
  Embed(tokens, batch, pos0);
  if (c_.positions == PositionKind::kRope) RopeTables(batch, pos0);
  for (size_t layer = 0; layer < c_.n_layers; ++layer) {
    AttentionBlock(layer, batch, pos0);
    FeedForwardBlock(layer, batch);
  }
  return Logits(batch, all_logits, logits);
}

// x[i] = token_embd[token_i] (* embedding_scale) (+ position_embd[pos0 + i])
void Forward::Embed(const int32_t* tokens, size_t batch, size_t pos0) {
  float* x = act_.x;
  const size_t d = c_.d_model;
  for (size_t i = 0; i < batch; ++i) {
    EmbeddingRow(*w_.tok_embedding, static_cast<uint64_t>(tokens[i]), x + i * d);
    if (c_.embedding_scale != 1.0f) k_.scale(x + i * d, c_.embedding_scale, d);
    if (w_.pos_embedding) {
      float* pos = act_.x_norm;
      EmbeddingRow(*w_.pos_embedding, pos0 + i, pos);
      k_.add(x + i * d, pos, d);
    }
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
  if (c_.rope_scaling == RopeScaling::kLongRope &&
      pos0 + batch > c_.rope_original_context) {
    global.freq_factors = c_.rope_long_freq_factors.data();
  }
  for (size_t i = 0; i < batch; ++i) {
    kernels::RopeTables(pos0 + i, global, dims, interleaved, act_.rope_cos + i * hd,
                        act_.rope_sin + i * hd);
    if (local_rope_) {
      kernels::RopeTables(pos0 + i, rope_local_, dims, interleaved,
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
  float* k_new = kv_.keys(layer) + pos0 * kv;
  float* v_new = kv_.values(layer) + pos0 * kv;

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

namespace {

struct AttentionTask {
  const kernels::KernelTable* k;
  const float* q;     // (batch, q_dim): the step's queries
  const float* keys;  // layer cache
  const float* values;
  float* out;      // (batch, q_dim): heads concatenated
  float* probs;    // (AttentionChunk, n_heads, max_context): one row per (token, head)
  float* partial;  // (AttentionChunk, kMaxAttentionSpans, n_heads, partial floats)
  size_t first;    // token (index in the step) of the chunk's token 0
  size_t tokens;   // in the chunk (at most AttentionChunk)
  // Token i attends to cache positions [start[i], start[i] + n_pos[i]): from 0, or
  // from the first its layer's sliding window holds.
  size_t start[kMaxAttentionChunk], n_pos[kMaxAttentionChunk], span[kMaxAttentionChunk];
  size_t first_item[kMaxAttentionChunk + 1];  // work items where each token's spans start
  size_t n_heads, q_dim, max_context, kv_stride, head_dim, group;
  float scale, softcap;
  bool record;  // the merge turns probs into the softmax only for an attention record
  bool decode;  // one token: its cache rows come from DRAM (a prefill's are in cache)

  float* token_probs(size_t i) const { return probs + i * n_heads * max_context; }
  float* token_partial(size_t i) const {
    return partial + i * kernels::kMaxAttentionSpans * n_heads *
                         kernels::AttentionPartialFloats(head_dim);
  }
};

// Work item j is one span of positions of one token of the chunk; a call takes a run
// of them, each token's part as one kernel call (keys, then values, read as one stream).
void AttendSpans(void* context, size_t begin, size_t count) {
  const AttentionTask& t = *static_cast<const AttentionTask*>(context);
  for (size_t i = 0; i < t.tokens; ++i) {
    const size_t first = begin > t.first_item[i] ? begin : t.first_item[i];
    const size_t end =
        begin + count < t.first_item[i + 1] ? begin + count : t.first_item[i + 1];
    if (first >= end) continue;
    const size_t rows = t.start[i] * t.kv_stride;
    t.k->attend_spans(t.q + (t.first + i) * t.q_dim, t.keys + rows, t.values + rows,
                      t.kv_stride, t.n_pos[i], t.span[i], first - t.first_item[i],
                      end - first, t.head_dim, t.n_heads, t.group, t.scale, t.softcap,
                      t.token_probs(i) + t.start[i], t.max_context, t.token_partial(i),
                      t.decode);
  }
}

// Work item i merges token i's spans.
void MergeSpans(void* context, size_t begin, size_t count) {
  const AttentionTask& t = *static_cast<const AttentionTask*>(context);
  for (size_t i = begin; i < begin + count; ++i) {
    t.k->attend_merge(t.token_partial(i), t.first_item[i + 1] - t.first_item[i],
                      t.span[i], t.n_pos[i], t.head_dim, t.n_heads,
                      t.record ? t.token_probs(i) + t.start[i] : nullptr, t.max_context,
                      t.out + (t.first + i) * t.q_dim);
  }
}

}  // namespace

// For each token, each query head attends over the cached positions it may see: up to its
// own (causal) or every position of the input (bidirectional), and in a sliding layer
// only the last `sliding_window` of those (its span loop starts there). Heads sharing a
// KV head (GQA/MQA) read the same cache columns. A token's positions are split into spans
// (kernels::AttentionSpan: by the position count alone, so no result depends on the
// thread count or on prefill against decode); each thread takes one run of consecutive
// spans and reads their whole cache rows, keys then values, as forward streams; then a
// merge per token combines the spans' partial softmaxes. (Splitting the heads instead
// made each thread read part of every row: two threads were slower than one.) The spans
// of up to AttentionChunk() tokens are one parallel step: a prefill does not pay a thread
// hand-over per token.
void Forward::Attention(size_t layer, size_t batch, size_t pos0) {
  ProfileScope scope(ctx_.profile, KernelKind::kAttention);
  const size_t hd = c_.head_dim, heads = c_.n_heads;
  const bool causal = c_.mask == AttentionMask::kCausal;
  AttentionTask task{};
  task.k = &k_;
  task.q = act_.q;
  task.keys = kv_.keys(layer);
  task.values = kv_.values(layer);
  task.out = act_.attn_out;
  task.probs = act_.probs;
  task.partial = act_.spans;
  task.n_heads = heads;
  task.q_dim = c_.q_dim();
  task.max_context = kv_.max_context;
  task.kv_stride = c_.kv_dim();
  task.head_dim = hd;
  task.group = heads / c_.n_kv_heads;
  task.scale = c_.attention_scale > 0.0f ? c_.attention_scale
                                         : 1.0f / std::sqrt(static_cast<float>(hd));
  task.softcap = c_.attn_softcap;
  const size_t window = c_.window(layer);
  task.record = record_.weights != nullptr;
  task.decode = batch == 1;
  const size_t chunk = AttentionChunk(act_.max_batch);
  for (size_t first = 0; first < batch; first += chunk) {
    task.first = first;
    task.tokens = batch - first < chunk ? batch - first : chunk;
    size_t work = 0;  // multiply-adds
    for (size_t i = 0; i < task.tokens; ++i) {
      const size_t end = causal ? pos0 + first + i + 1 : pos0 + batch;
      task.start[i] = window > 0 && end > window ? end - window : 0;
      task.n_pos[i] = end - task.start[i];
      task.span[i] = kernels::AttentionSpan(task.n_pos[i]);
      task.first_item[i + 1] =
          task.first_item[i] + (task.n_pos[i] + task.span[i] - 1) / task.span[i];
      work += 2 * heads * task.n_pos[i] * hd;
    }
    const size_t items = task.first_item[task.tokens];
    // Below ~32K multiply-adds in all, a thread hand-over costs more than it saves.
    const bool parallel = ctx_.pool && work > 32768;
    if (parallel && items > 1) {
      // Span by span: each thread starts on a run of consecutive spans and takes over
      // the rest of a slower one's (a span's result does not depend on who runs it).
      ctx_.pool->ParallelTiles(items, 1, &AttendSpans, &task, ctx_.profile);
    } else {
      AttendSpans(&task, 0, items);
    }
    if (parallel && task.tokens > 1) {
      ctx_.pool->ParallelTiles(task.tokens, 1, &MergeSpans, &task, ctx_.profile);
    } else {
      MergeSpans(&task, 0, task.tokens);
    }
    if (task.record) {
      for (size_t i = 0; i < task.tokens; ++i) {
        RecordAttentionRow(record_, layer, pos0 + first + i, task.token_probs(i),
                           task.max_context, task.start[i],
                           task.start[i] + task.n_pos[i]);
      }
    }
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
