// Forward::Attention (see forward.h): each token's query heads over the cached positions
// it may see, in spans of positions across the pool, read from the cache in its type.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/forward.h"

namespace ember {

namespace {

struct AttentionTask {
  const kernels::KernelTable* k;
  kernels::KvRows rows;  // the layer's cache
  const float* q;        // (batch, q_dim): the step's queries
  // A q8 cache's queries in its encoding, (batch, q8_stride), and their scales (batch,
  // q8_stride / kKvGroup); else null.
  const int8_t* q8;
  const float* q8_scales;
  size_t q8_stride;
  float* out;      // (batch, q_dim): heads concatenated
  float* probs;    // (AttentionChunk, n_heads, max_context): one row per (token, head)
  float* partial;  // (AttentionChunk, kMaxAttentionSpans, n_heads, partial floats)
  size_t first;    // token (index in the step) of the chunk's token 0
  size_t tokens;   // in the chunk (at most AttentionChunk)
  // Token i attends to cache positions [start[i], start[i] + n_pos[i]): from 0, or
  // from the first its layer's sliding window holds.
  // first_row[i]: the row of start[i] (a ring layer's slot; else start[i] itself).
  size_t start[kMaxAttentionChunk], n_pos[kMaxAttentionChunk], span[kMaxAttentionChunk];
  size_t first_row[kMaxAttentionChunk];
  size_t first_item[kMaxAttentionChunk + 1];  // work items where each token's spans start
  size_t q_dim, max_context;
  kernels::AttendSpansArgs shape;  // heads, scale and the prefetch hint
  bool record;  // the merge turns probs into the softmax only for an attention record

  kernels::AttendQuery query(size_t token) const {
    kernels::AttendQuery query{q + token * q_dim, nullptr, nullptr};
    if (q8 != nullptr) {
      query.q8 = q8 + token * q8_stride;
      query.q8_scales = q8_scales + token * q8_stride / kernels::kKvGroup;
    }
    return query;
  }
  float* token_probs(size_t i) const { return probs + i * shape.n_heads * max_context; }
  float* token_partial(size_t i) const {
    return partial + i * kernels::kMaxAttentionSpans * shape.n_heads *
                         kernels::AttentionPartialFloats(shape.head_dim);
  }
};

// Work item j is one span of positions of one token of the chunk; a call takes a run
// of them, each token's part as one kernel call over the layer's rows in their type
// (keys, then values, read as one stream).
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
    // The kernels count positions from the first the token sees (its row: first_row).
    a.first_row = t.first_row[i];
    t.k->attend_spans(t.rows, t.query(t.first + i), a, t.token_probs(i) + t.start[i],
                      t.token_partial(i));
  }
}

// Work item i merges token i's spans.
void MergeSpans(void* context, size_t begin, size_t count) {
  const AttentionTask& t = *static_cast<const AttentionTask*>(context);
  for (size_t i = begin; i < begin + count; ++i) {
    t.k->attend_merge(t.token_partial(i), t.first_item[i + 1] - t.first_item[i],
                      t.span[i], t.n_pos[i], t.shape.head_dim, t.shape.n_heads,
                      t.record ? t.token_probs(i) + t.start[i] : nullptr, t.max_context,
                      t.out + (t.first + i) * t.q_dim);
  }
}

struct BlockedTask {
  const kernels::KernelTable* k;
  const float* keys;  // the layer's f32 rows, (n, row_stride) each
  const float* values;
  size_t row_stride;
  const float* q;  // (n, q_dim)
  float* out;      // (n, q_dim)
  float* blocked;  // (n_heads, slot)
  size_t slot, n, head_dim, q_dim, group;
  float scale;
};

// Work item h: query head h over the whole input. Its keys (transposed) and values are
// gathered once; then per block of queries, scores = queries . keys^T, a softmax per row,
// and out = scores . values: two products with vectors along their output rows
// (gemm_nn_f32), from cache.
void AttendHeadBlocked(void* context, size_t begin, size_t count) {
  const BlockedTask& t = *static_cast<const BlockedTask*>(context);
  const size_t n = t.n, hd = t.head_dim, ld = BlockedStride(n);
  for (size_t h = begin; h < begin + count; ++h) {
    float* keys_t = t.blocked + h * t.slot;          // (hd, ld)
    float* values = keys_t + hd * ld;                // (n, hd)
    float* scores = values + n * hd;                 // (kAttentionBlock, ld)
    float* queries = scores + kAttentionBlock * ld;  // (kAttentionBlock, hd)
    const size_t column = (h / t.group) * hd;        // its KV head's
    for (size_t p = 0; p < n; ++p) {
      const float* key = t.keys + p * t.row_stride + column;
      for (size_t j = 0; j < hd; ++j) keys_t[j * ld + p] = key[j];
      memcpy(values + p * hd, t.values + p * t.row_stride + column, hd * sizeof(float));
    }
    for (size_t first = 0; first < n; first += kAttentionBlock) {
      const size_t block = std::min(kAttentionBlock, n - first);
      for (size_t i = 0; i < block; ++i) {
        const float* q = t.q + (first + i) * t.q_dim + h * hd;
        for (size_t j = 0; j < hd; ++j) queries[i * hd + j] = q[j] * t.scale;
      }
      t.k->gemm_nn_f32(queries, hd, keys_t, ld, scores, ld, block, n, hd);
      for (size_t i = 0; i < block; ++i) t.k->softmax(scores + i * ld, n);
      t.k->gemm_nn_f32(scores, ld, values, hd, t.out + first * t.q_dim + h * hd, t.q_dim,
                       block, hd, n);
    }
  }
}

}  // namespace

// A vision tower's attention: every patch attends to every patch of its tile (4096 at
// Gemma 3's 896 px). Token by token, each query would stream the layer's whole keys and
// values (37.7 MB a query at Gemma 3's tower); head by head, a block of queries reuses
// the head's keys and values from cache, as two matrix products. Only for a step of one
// whole bidirectional input from position 0 in an f32 cache with no window, soft-cap or
// record, where the plan gave the scratch.
bool Forward::AttentionBlocked(size_t layer, size_t batch, size_t pos0) {
  if (act_.blocked == nullptr || pos0 != 0 || batch > act_.max_batch ||
      c_.mask == AttentionMask::kCausal || c_.window(layer) != 0 ||
      c_.attn_softcap != 0.0f || kv_.type != KvType::kF32 || bounds_ != nullptr ||
      embedded_ != nullptr || record_.weights != nullptr) {
    return false;
  }
  const kernels::KvRows rows = kv_.AttentionRows(layer);
  if (rows.ring_rows != 0) return false;
  BlockedTask task{};
  task.k = &k_;
  task.keys = static_cast<const float*>(rows.keys);
  task.values = static_cast<const float*>(rows.values);
  task.row_stride = rows.kv_stride;
  task.q = act_.q;
  task.out = act_.attn_out;
  task.blocked = act_.blocked;
  task.slot = BlockedAttentionSlot(act_.max_batch, c_.head_dim);
  task.n = batch;
  task.head_dim = c_.head_dim;
  task.q_dim = c_.q_dim();
  task.group = c_.n_heads / c_.n_kv_heads;
  task.scale = c_.attention_scale > 0.0f
                   ? c_.attention_scale
                   : 1.0f / std::sqrt(static_cast<float>(c_.head_dim));
  if (ctx_.pool != nullptr && c_.n_heads > 1) {
    ctx_.pool->ParallelTiles(c_.n_heads, 1, &AttendHeadBlocked, &task, ctx_.profile);
  } else {
    AttendHeadBlocked(&task, 0, c_.n_heads);
  }
  return true;
}

// For each token, each query head attends over the cached positions it may see: up to its
// own (causal) or every position of the input (bidirectional), and in a sliding layer
// only the last `sliding_window` of those (its span loop starts there) or, bidirectional,
// those within sliding_window / 2 on either side (EmbeddingGemma: 256 of its 512); in a
// packed step (HiddenPacked) only positions of the token's own text; a row of a
// bidirectional block of embedded rows (Gemma 3's image) sees its whole block too. Heads
// sharing a KV head (GQA/MQA) read the same cache columns. A token's positions are split
// into spans (kernels::AttentionSpan: by the position count alone, so no result depends
// on the thread count or on prefill against decode); each thread takes one run of
// consecutive spans and reads their whole cache rows, keys then values, as forward
// streams; then a merge per token combines the spans' partial softmaxes. (Splitting the
// heads instead made each thread read part of every row: two threads were slower than
// one.) The spans of up to AttentionChunk() tokens are one parallel step: a prefill does
// not pay a thread hand-over per token.
void Forward::Attention(size_t layer, size_t batch, size_t pos0) {
  ProfileScope scope(ctx_.profile, KernelKind::kAttention);
  if (AttentionBlocked(layer, batch, pos0)) return;
  const size_t hd = c_.head_dim, heads = c_.n_heads;
  const bool causal = c_.mask == AttentionMask::kCausal;
  AttentionTask task{};
  task.k = &k_;
  task.rows = kv_.AttentionRows(layer);
  task.q = act_.q;
  if (kv_.type == KvType::kQ8) {
    // The queries in the cache's encoding, once per step: scores are then integer dots.
    const size_t padded = kernels::KvGroups(hd) * kernels::kKvGroup;
    task.q8 = act_.q8;
    task.q8_scales = act_.q8_scales;
    task.q8_stride = heads * padded;
    for (size_t i = 0; i < batch; ++i) {
      k_.quantize_kv(act_.q + i * c_.q_dim(), heads, hd, padded,
                     act_.q8 + i * task.q8_stride,
                     act_.q8_scales + i * task.q8_stride / kernels::kKvGroup);
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
  task.shape.scale = c_.attention_scale > 0.0f ? c_.attention_scale
                                               : 1.0f / std::sqrt(static_cast<float>(hd));
  task.shape.softcap = c_.attn_softcap;
  task.shape.probs_stride = kv_.max_context;
  task.shape.prefetch_values = batch == 1;  // a decode step's rows come from DRAM
  const size_t window = c_.window(layer);
  task.record = record_.weights != nullptr;
  const size_t chunk = AttentionChunk(act_.max_batch);
  for (size_t first = 0; first < batch; first += chunk) {
    task.first = first;
    task.tokens = batch - first < chunk ? batch - first : chunk;
    size_t work = 0;  // multiply-adds
    for (size_t i = 0; i < task.tokens; ++i) {
      const size_t q = pos0 + first + i;
      // The token's text: the whole input, or its own in a packed step (pos0 0).
      const size_t lo = TextStart(first + i), hi = pos0 + TextEnd(first + i, batch);
      size_t end = causal ? q + 1 : hi;
      if (window > 0 && causal) {
        task.start[i] = std::max(lo, end > window ? end - window : 0);
      } else if (window > 0) {
        const size_t half = window / 2;
        task.start[i] = std::max(lo, q > half ? q - half : 0);
        end = std::min(end, q + half + 1);
      } else {
        task.start[i] = lo;
      }
      size_t block_begin = 0, block_end = 0;  // a bidirectional block's rows see it all
      if (causal && BlockOf(first + i, batch, &block_begin, &block_end)) {
        task.start[i] = std::min(task.start[i], pos0 + block_begin);
        end = std::max(end, pos0 + block_end);
      }
      task.n_pos[i] = end - task.start[i];
      task.first_row[i] = kv_.Slot(layer, task.start[i]);
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

}  // namespace ember
