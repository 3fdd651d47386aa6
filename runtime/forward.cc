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
      record_(record) {}

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

// x[i] = token_embd[token_i] (+ position_embd[pos0 + i])
void Forward::Embed(const int32_t* tokens, size_t batch, size_t pos0) {
  float* x = act_.x;
  const size_t d = c_.d_model;
  for (size_t i = 0; i < batch; ++i) {
    EmbeddingRow(*w_.tok_embedding, static_cast<uint64_t>(tokens[i]), x + i * d);
    if (w_.pos_embedding) {
      float* pos = act_.x_norm;
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
                        act_.rope_cos + i * hd, act_.rope_sin + i * hd);
  }
}

// Pre-LN:  x = x + Wo Attention(RoPE(Wq h), RoPE(Wk h), Wv h),  h = norm(x)
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
  if (c_.positions == PositionKind::kRope) {
    Rope(q, c_.n_heads, batch, c_.q_dim());
    Rope(k_new, c_.n_kv_heads, batch, kv);
  }
  if (!in_place) kv_.Store(k_, layer, pos0, batch, k_new, v_new);
  Attention(layer, batch, pos0);
  float* proj = act_.proj;
  Linear(ctx_, act_.quant, *w.wo, act_.attn_out, batch, proj);
  AddBias(w.bo, proj, batch);
  k_.add(x, proj, batch * c_.d_model);
  if (!pre) {
    Norm(w.attn_norm, w.attn_norm_bias, x, h, batch);
    memcpy(x, h, batch * c_.d_model * sizeof(float));
  }
}

// Pre-LN:  x = x + W_down act(W_gate h) * (W_up h),  h = norm(x)   (gated; a plain
//          FFN drops the gate: x + W_down act(W_up h))
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
  k_.add(x, proj, batch * c_.d_model);
  if (!pre) {
    Norm(w.ffn_norm, w.ffn_norm_bias, x, h, batch);
    memcpy(x, h, batch * c_.d_model * sizeof(float));
  }
}

namespace {

struct AttentionTask {
  const kernels::KernelTable* k;
  KvType type;
  const float* q;  // (batch, q_dim): the step's queries
  // The layer's cache from position 0, in the array of its type.
  const float* keys;
  const float* values;
  const uint16_t* keys16;
  const uint16_t* values16;
  KvQ8Rows keys8, values8;
  const int8_t* q8;  // a q8 cache's queries: (batch, q8_stride) and their scales
  const float* q8_scales;
  size_t q8_stride, q8_scale_stride;
  float* out;      // (batch, q_dim): heads concatenated
  float* probs;    // (AttentionChunk, n_heads, max_context): one row per (token, head)
  float* partial;  // (AttentionChunk, kMaxAttentionSpans, n_heads, partial floats)
  size_t first;    // token (index in the step) of the chunk's token 0
  size_t tokens;   // in the chunk (at most AttentionChunk)
  size_t n_pos[kMaxAttentionChunk], span[kMaxAttentionChunk];
  size_t first_item[kMaxAttentionChunk + 1];  // work items where each token's spans start
  size_t q_dim, max_context;
  kernels::AttendSpansArgs shape;  // heads, strides, scale and the prefetch hint
  bool record;  // the merge turns probs into the softmax only for an attention record

  float* token_probs(size_t i) const { return probs + i * shape.n_heads * max_context; }
  float* token_partial(size_t i) const {
    return partial + i * kernels::kMaxAttentionSpans * shape.n_heads *
                         kernels::AttentionPartialFloats(shape.head_dim);
  }
};

// Work item j is one span of positions of one token of the chunk; a call takes a run
// of them, each token's part as one kernel call (keys, then values, read as one stream)
// of the kernel for the cache's type.
void AttendSpans(void* context, size_t begin, size_t count) {
  const AttentionTask& t = *static_cast<const AttentionTask*>(context);
  for (size_t i = 0; i < t.tokens; ++i) {
    const size_t first = begin > t.first_item[i] ? begin : t.first_item[i];
    const size_t end =
        begin + count < t.first_item[i + 1] ? begin + count : t.first_item[i + 1];
    if (first >= end) continue;
    kernels::AttendSpansArgs a = t.shape;
    a.n_pos = t.n_pos[i];
    a.span = t.span[i];
    a.first_span = first - t.first_item[i];
    a.num_spans = end - first;
    const size_t token = t.first + i;
    switch (t.type) {
      case KvType::kF32:
        t.k->attend_spans(t.q + token * t.q_dim, t.keys, t.values, a, t.token_probs(i),
                          t.token_partial(i));
        break;
      case KvType::kF16:
        t.k->attend_spans_f16(t.q + token * t.q_dim, t.keys16, t.values16, a,
                              t.token_probs(i), t.token_partial(i));
        break;
      case KvType::kQ8:
        t.k->attend_spans_q8(t.q8 + token * t.q8_stride,
                             t.q8_scales + token * t.q8_scale_stride, t.keys8.values,
                             t.keys8.scales, t.values8.values, t.values8.scales, a,
                             t.token_probs(i), t.token_partial(i));
        break;
    }
  }
}

// Work item i merges token i's spans.
void MergeSpans(void* context, size_t begin, size_t count) {
  const AttentionTask& t = *static_cast<const AttentionTask*>(context);
  for (size_t i = begin; i < begin + count; ++i) {
    t.k->attend_merge(t.token_partial(i), t.first_item[i + 1] - t.first_item[i],
                      t.span[i], t.n_pos[i], t.shape.head_dim, t.shape.n_heads,
                      t.record ? t.token_probs(i) : nullptr, t.max_context,
                      t.out + (t.first + i) * t.q_dim);
  }
}

}  // namespace

// For each token, each query head attends over the cached positions it may see: up to
// its own (causal) or every position of the input (bidirectional). Heads sharing a KV
// head (GQA/MQA) read the same cache columns. A token's positions are split into spans
// (kernels::AttentionSpan: by the position count alone, so no result depends on the
// thread count or on prefill against decode); each thread takes one run of consecutive
// spans and reads their whole cache rows, keys then values, as forward streams; then a
// merge per token combines the spans' partial softmaxes. (Splitting the heads instead
// made each thread read part of every row: two threads were slower than one.) The
// spans of up to AttentionChunk() tokens are one parallel step: a prefill does not pay
// a thread hand-over per token.
void Forward::Attention(size_t layer, size_t batch, size_t pos0) {
  ProfileScope scope(ctx_.profile, KernelKind::kAttention);
  const size_t hd = c_.head_dim, heads = c_.n_heads;
  const bool causal = c_.mask == AttentionMask::kCausal;
  AttentionTask task{};
  task.k = &k_;
  task.type = kv_.type;
  task.q = act_.q;
  switch (kv_.type) {
    case KvType::kF32:
      task.keys = kv_.f32_row(layer, kKeys, 0);
      task.values = kv_.f32_row(layer, kValues, 0);
      break;
    case KvType::kF16:
      task.keys16 = kv_.f16_row(layer, kKeys, 0);
      task.values16 = kv_.f16_row(layer, kValues, 0);
      break;
    case KvType::kQ8: {
      // The queries in the cache's encoding, once per step: scores are then integer dots.
      const size_t groups = kernels::KvGroups(hd);
      task.keys8 = kv_.q8_row(layer, kKeys, 0);
      task.values8 = kv_.q8_row(layer, kValues, 0);
      task.q8 = act_.q8;
      task.q8_scales = act_.q8_scales;
      task.q8_stride = heads * groups * kernels::kKvGroup;
      task.q8_scale_stride = heads * groups;
      for (size_t i = 0; i < batch; ++i) {
        k_.quantize_kv(act_.q + i * c_.q_dim(), heads, hd, groups * kernels::kKvGroup,
                       act_.q8 + i * task.q8_stride,
                       act_.q8_scales + i * task.q8_scale_stride);
      }
      break;
    }
  }
  task.out = act_.attn_out;
  task.probs = act_.probs;
  task.partial = act_.spans;
  task.q_dim = c_.q_dim();
  task.max_context = kv_.max_context;
  task.shape.head_dim = hd;
  task.shape.n_heads = heads;
  task.shape.group = heads / c_.n_kv_heads;
  task.shape.kv_stride = c_.kv_dim();
  task.shape.scale_stride = kv_.scale_stride;
  task.shape.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  task.shape.probs_stride = kv_.max_context;
  task.shape.prefetch_values = batch == 1;  // a decode step's rows come from DRAM
  task.record = record_.weights != nullptr;
  const size_t chunk = AttentionChunk(act_.max_batch);
  for (size_t first = 0; first < batch; first += chunk) {
    task.first = first;
    task.tokens = batch - first < chunk ? batch - first : chunk;
    size_t work = 0;  // multiply-adds
    for (size_t i = 0; i < task.tokens; ++i) {
      task.n_pos[i] = causal ? pos0 + first + i + 1 : pos0 + batch;
      task.span[i] = kernels::AttentionSpan(task.n_pos[i]);
      task.first_item[i + 1] =
          task.first_item[i] + (task.n_pos[i] + task.span[i] - 1) / task.span[i];
      work += 2 * heads * task.n_pos[i] * hd;
    }
    const size_t items = task.first_item[task.tokens];
    // Below ~32K multiply-adds in all, a thread hand-over costs more than it saves.
    const bool parallel = ctx_.pool && work > 32768;
    if (parallel && items > 1) {
      // One run of spans per thread: a span's result does not depend on its run.
      const size_t threads = static_cast<size_t>(ctx_.pool->num_threads());
      ctx_.pool->ParallelTiles(items, (items + threads - 1) / threads, &AttendSpans,
                               &task, ctx_.profile);
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
                           task.max_context, task.n_pos[i]);
      }
    }
  }
}

void Forward::Rope(float* x, size_t n_heads, size_t batch, size_t stride) {
  ProfileScope scope(ctx_.profile, KernelKind::kRope);
  const size_t hd = c_.head_dim;
  const auto rope =
      c_.rope_pairing == RopePairing::kInterleaved ? k_.rope_interleaved : k_.rope_half;
  const float* cos = act_.rope_cos;
  const float* sin = act_.rope_sin;
  ParallelRows(ctx_, batch, n_heads * hd, [&](size_t i0, size_t count) {
    for (size_t i = i0; i < i0 + count; ++i) {
      rope(x + i * stride, cos + i * hd, sin + i * hd, n_heads, hd);
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

// logits = W_out norm(x) (+ b_out): for the last token, or every token with all_logits.
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
  return rows;
}

}  // namespace ember
