// Session: arena planning, creation, and the prefill/decode entry points.
#include "runtime/session.h"

#include <cstring>

#include "runtime/forward.h"
#include "runtime/sampler.h"
#include "runtime/tokenizer.h"

namespace ember {
namespace {

// Lifetimes, in steps of one forward pass. Persistent buffers span all of them. The
// attention and feed-forward steps repeat once per layer, so a buffer read by every
// layer's attention (the rope tables) must live through the feed-forward step too.
enum Step : int {
  kStepSession = 0,  // between forward passes: KV cache, logits, sampler, tokens
  kStepEmbed = 1,
  kStepAttention = 2,
  kStepFeedForward = 3,
  kStepLogits = 4,
};

struct Dims {
  size_t context = 0, batch = 0, prompt_bytes = 0;
};

Status ResolveDims(const ModelConfig& c, const SessionOptions& o, Dims* dims) {
  dims->context = o.max_context ? o.max_context : c.max_context;
  if (dims->context > c.max_context) {
    return InvalidArgument("context %u exceeds the model's %u positions", o.max_context,
                           c.max_context);
  }
  if (o.max_batch == 0) return InvalidArgument("max_batch must be at least 1");
  dims->batch = o.max_batch < dims->context ? o.max_batch : dims->context;
  // A bidirectional model sees its whole input at once: one prefill step holds it all.
  if (c.mask == AttentionMask::kBidirectional) dims->batch = dims->context;
  dims->prompt_bytes = o.max_prompt_bytes ? o.max_prompt_bytes : 8 * dims->context;
  return Status::Ok();
}

// The widest input of any q8/q4 matrix (0 when none is quantized): the size of the
// int8 copy of the activations the quantized products read.
size_t MaxQuantizedInput(const Weights& w) {
  size_t widest = 0;
  auto consider = [&](const Tensor* t) {
    if (t && (t->dtype == DType::kQ8 || t->dtype == DType::kQ4) && t->cols() > widest) {
      widest = t->cols();
    }
  };
  consider(w.output);
  for (const LayerWeights& l : w.layers) {
    for (const Tensor* t : {l.wq, l.wk, l.wv, l.wo, l.ffn_gate, l.ffn_up, l.ffn_down}) {
      consider(t);
    }
  }
  return widest;
}

}  // namespace

const char* ArenaStepName(int step) {
  static const char* const kNames[] = {"session", "embed", "attention", "ffn", "logits"};
  return step >= 0 && step <= kStepLogits ? kNames[step] : "?";
}

Result<ArenaPlan> PlanArena(const Model& model, const SessionOptions& options) {
  const ModelConfig& c = model.config();
  Dims dims;
  EMBER_RETURN_IF_ERROR(ResolveDims(c, options, &dims));
  const size_t f = sizeof(float), b = dims.batch, T = dims.context;
  const size_t logit_rows = options.all_logits ? b : 1;
  ArenaPlan plan;
  // The order must match SessionBuffer (forward.h).
  plan.Add("kv_cache", size_t{c.n_layers} * 2 * T * c.kv_dim() * f, kStepSession,
           kStepLogits, BufferKind::kKvCache);
  plan.Add("logits", logit_rows * c.vocab_size * f, kStepSession, kStepLogits);
  plan.Add("sampler", Sampler::ScratchBytes(c.vocab_size), kStepSession, kStepLogits,
           BufferKind::kScratch);
  plan.Add("tokens", Tokenizer::EncodeCapacity(dims.prompt_bytes) * sizeof(int32_t),
           kStepSession, kStepLogits, BufferKind::kScratch);
  plan.Add("x", b * c.d_model * f, kStepEmbed, kStepLogits);
  plan.Add("x_norm", b * c.d_model * f, kStepEmbed, kStepLogits);
  plan.Add("rope_cos", b * c.head_dim * f, kStepEmbed, kStepFeedForward);
  plan.Add("rope_sin", b * c.head_dim * f, kStepEmbed, kStepFeedForward);
  plan.Add("q", b * c.q_dim() * f, kStepAttention, kStepAttention);
  plan.Add("attn_out", b * c.q_dim() * f, kStepAttention, kStepAttention);
  plan.Add("attn_probs", AttentionChunk(b) * c.n_heads * T * f, kStepAttention,
           kStepAttention);
  plan.Add("attn_spans",
           AttentionChunk(b) * kernels::kMaxAttentionSpans * c.n_heads *
               kernels::AttentionPartialFloats(c.head_dim) * f,
           kStepAttention, kStepAttention);
  plan.Add("proj", b * c.d_model * f, kStepAttention, kStepFeedForward);
  plan.Add("ffn_a", b * c.ffn_dim * f, kStepFeedForward, kStepFeedForward);
  plan.Add("ffn_b", c.ffn == FfnKind::kGated ? b * c.ffn_dim * f : 0, kStepFeedForward,
           kStepFeedForward);
  AttentionRecord record;  // empty unless options.record_attention.enabled
  EMBER_RETURN_IF_ERROR(ResolveAttentionRecord(c, T, options.record_attention, &record));
  plan.Add("attn_record", record.num_floats() * f, kStepSession, kStepLogits);
  size_t act_q = 0, act_scales = 0, act_sums = 0;
  QuantScratchBytes(b, MaxQuantizedInput(model.weights()), &act_q, &act_scales,
                    &act_sums);
  plan.Add("act_q", act_q, kStepEmbed, kStepLogits, BufferKind::kScratch);
  plan.Add("act_scales", act_scales, kStepEmbed, kStepLogits, BufferKind::kScratch);
  plan.Add("act_sums", act_sums, kStepEmbed, kStepLogits, BufferKind::kScratch);
  plan.Plan();
  return plan;
}

size_t RequiredArenaBytes(const Model& model, const SessionOptions& options) {
  Result<ArenaPlan> plan = PlanArena(model, options);
  return plan.ok() ? plan->total_bytes() + kArenaAlignment - 1 : 0;
}

Session::Session(const Model& model, const SessionOptions& options,
                 const ThreadPool* pool)
    : model_(model), options_(options), pool_(pool), kernels_(kernels::ChooseKernels()) {}

Session::~Session() = default;

Result<std::unique_ptr<Session>> Session::Create(const Model& model,
                                                 const SessionOptions& options,
                                                 const ThreadPool* pool, void* arena,
                                                 size_t arena_bytes) {
  Result<ArenaPlan> plan = PlanArena(model, options);
  if (!plan.ok()) return plan.status();
  const size_t needed = plan->total_bytes() + kArenaAlignment - 1;
  std::unique_ptr<Session> s(new Session(model, options, pool));
  s->plan_ = *plan;
  Dims dims;
  EMBER_RETURN_IF_ERROR(ResolveDims(model.config(), options, &dims));
  s->max_context_ = dims.context;
  s->options_.max_batch = static_cast<uint32_t>(dims.batch);
  s->options_.max_prompt_bytes = static_cast<uint32_t>(dims.prompt_bytes);
  if (arena == nullptr) {
    s->owned_arena_.reset(new uint8_t[needed]);
    arena = s->owned_arena_.get();
    arena_bytes = needed;
  } else if (arena_bytes < needed) {
    return ResourceExhausted(
        "arena of %zu bytes is too small: this model and these options "
        "need %zu",
        arena_bytes, needed);
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(arena);
  s->arena_ = reinterpret_cast<uint8_t*>((base + kArenaAlignment - 1) / kArenaAlignment *
                                         kArenaAlignment);
  // Zero once so no buffer ever holds stale bits (the KV cache past the position is
  // never read, but a NaN there must not exist either).
  memset(s->arena_, 0, plan->total_bytes());
  s->logits_last_ = s->Buffer(kBufLogits);
  EMBER_RETURN_IF_ERROR(ResolveAttentionRecord(
      model.config(), dims.context, options.record_attention, &s->attention_record_));
  if (options.record_attention.enabled) {
    s->attention_record_.weights = s->Buffer(kBufAttnRec);
  }
  return s;
}

float* Session::Buffer(size_t id) const {
  return reinterpret_cast<float*>(arena_ + plan_.buffer(id).offset);
}

void* Session::sampler_scratch() const { return Buffer(kBufSampler); }

Status Session::RecordAttention(const AttentionRecordOptions& what, float* weights,
                                size_t num_floats) {
  if (position_ != 0) {
    return InvalidArgument(
        "attention recording starts at position 0; this session is at %zu (Reset first)",
        position_);
  }
  AttentionRecord record;
  EMBER_RETURN_IF_ERROR(
      ResolveAttentionRecord(model_.config(), max_context_, what, &record));
  if (what.enabled) {
    if (weights == nullptr) return InvalidArgument("attention record: no memory given");
    if (num_floats < record.num_floats()) {
      return ResourceExhausted(
          "attention record of %zu floats is too small: the selection needs %zu",
          num_floats, record.num_floats());
    }
    record.weights = weights;
  }
  attention_record_ = record;
  return Status::Ok();
}

AttentionRecord Session::attention_record() const {
  AttentionRecord record = attention_record_;
  record.rows = position_ < record.positions ? position_ : record.positions;
  return record;
}

const float* Session::logits_at(size_t i) const {
  return i < num_logits_ ? Buffer(kBufLogits) + i * model_.config().vocab_size : nullptr;
}

Status Session::Prefill(const int32_t* tokens, size_t n) {
  if (n == 0) return InvalidArgument("no tokens to process");
  const ModelConfig& c = model_.config();
  for (size_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || static_cast<uint32_t>(tokens[i]) >= c.vocab_size) {
      return InvalidArgument("token %d at index %zu is outside the vocabulary [0, %u)",
                             tokens[i], i, c.vocab_size);
    }
  }
  if (n > max_context_ - position_) {
    return OutOfRange(
        "context full: %zu tokens at position %zu exceed the context of %zu", n,
        position_, max_context_);
  }
  const size_t batch = options_.max_batch;
  if (c.mask == AttentionMask::kBidirectional && position_ != 0) {
    return InvalidArgument(
        "a bidirectional model takes its whole input in one call; "
        "Reset() first");
  }
  Forward forward(*this);
  for (size_t done = 0; done < n; done += batch) {
    const size_t count = n - done < batch ? n - done : batch;
    forward.Run(tokens + done, count, position_);
    position_ += count;
  }
  return Status::Ok();
}

Status Session::Tokenize(const char* text, size_t text_bytes, bool add_bos,
                         const int32_t** ids, size_t* n) {
  int32_t* buf = reinterpret_cast<int32_t*>(Buffer(kBufTokens));
  const size_t capacity = Tokenizer::EncodeCapacity(options_.max_prompt_bytes);
  if (text_bytes > options_.max_prompt_bytes) {
    return InvalidArgument("text of %zu bytes exceeds the session's max_prompt_bytes %u",
                           text_bytes, options_.max_prompt_bytes);
  }
  *ids = buf;
  return model_.tokenizer().Encode(std::string_view(text, text_bytes), add_bos, buf,
                                   capacity, n);
}

}  // namespace ember
