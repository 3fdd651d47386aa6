// PlanSession: the sizes and the arena layout of a session (see session_plan.h).
#include "runtime/session_plan.h"

#include <cstdint>
#include <initializer_list>

#include "kernels/isa.h"
#include "kernels/kernel_table.h"
#include "kernels/quant_layout.h"
#include "runtime/chat/prompt_state.h"
#include "runtime/checked_math.h"
#include "runtime/forward.h"
#include "runtime/sampler.h"
#include "runtime/speculative/speculator.h"
#include "runtime/text/tokenizer.h"
#include "runtime/xnn_backend.h"

namespace ember {
namespace {

size_t Product(std::initializer_list<size_t> factors) {
  return SaturatingProduct(factors);
}
size_t Padded(size_t count, size_t pad) {
  return count > SIZE_MAX - pad ? SIZE_MAX : count + pad;
}

// The widest input of any q8/q4 or K-quant matrix (0 when none is quantized): the size
// of the int8 copy of the activations the quantized products read.
size_t MaxQuantizedInput(const Weights& w) {
  size_t widest = 0;
  ForEachMatrix(w, [&](const Tensor& t) {
    const bool quantized =
        t.dtype == DType::kQ8 || t.dtype == DType::kQ4 || IsKQuant(t.dtype);
    if (quantized && t.cols() > widest) widest = t.cols();
  });
  return widest;
}

// Context shift moves keys to earlier positions: RoPE keys are rotated there, keys
// without positions need nothing, but learned positions were added to the input of every
// layer and cannot be moved. It keeps context_keep positions and drops half of the rest,
// so at least two must remain.
Status CheckContextShift(const ModelConfig& c, const SessionOptions& o, size_t context) {
  if (!o.context_shift) return Status::Ok();
  if (c.positions == PositionKind::kLearned) {
    return InvalidArgument(
        "context shift needs rotary (RoPE) positions or none; this model's positions "
        "are learned (added to its input), so its cache cannot be moved to new "
        "positions");
  }
  if (c.mask == AttentionMask::kBidirectional) {
    return InvalidArgument(
        "context shift is for generation; this model is bidirectional");
  }
  if (!RopeShiftable(c, context)) {
    return InvalidArgument(
        "context shift: LongRoPE picks its factors per pass, and with a context of %zu "
        "past its original %u the moved keys cannot be rotated as a fresh pass would",
        context, c.rope_original_context);
  }
  // In size_t, a context_keep near UINT32_MAX plus 2 wraps on a 32-bit target.
  size_t needed;
  if (!CheckedAdd(size_t{o.context_keep}, size_t{2}, &needed) || needed > context) {
    return InvalidArgument(
        "context shift keeps %u positions of a context of %zu: at least 2 must be left "
        "to drop from",
        o.context_keep, context);
  }
  return Status::Ok();
}

// The first positions a ring keeps apart: a context shift's kept ones.
size_t RingSink(const SessionPlan& plan) {
  return plan.context_shift ? plan.context_keep : 0;
}

// Whether any matrix is a K-quant (its products read the activations' half sums).
bool HasKQuant(const Weights& w) {
  bool found = false;
  ForEachMatrix(w, [&](const Tensor& t) { found = found || IsKQuant(t.dtype); });
  return found;
}

}  // namespace

Status ResolveSessionIsa(const char* tier, kernels::IsaChoice* choice) {
  const char* from = "SessionOptions::isa";
  if (tier == nullptr) {
    tier = kernels::IsaFromEnvironment();
    from = "EMBER_ISA";
  }
  const char* missing;
  switch (kernels::ResolveIsa(tier, choice, &missing)) {
    case kernels::IsaError::kOk:
      return Status::Ok();
    case kernels::IsaError::kUnknownTier:
      return InvalidArgument("%s: unknown ISA tier \"%s\" (this build knows: %s, native)",
                             from, tier, kernels::IsaTierNames());
    case kernels::IsaError::kUnsupported:
      break;
  }
  return Unimplemented("%s: this CPU cannot run ISA tier \"%s\": it lacks %s", from, tier,
                       missing);
}

namespace {

// Fills the sizes of `plan` from the options.
Status ResolveSizes(const Model& model, const SessionOptions& o, SessionPlan* plan) {
  const ModelConfig& c = model.config();
  EMBER_RETURN_IF_ERROR(ResolveSessionIsa(o.isa, &plan->isa));
  plan->max_context = o.max_context ? o.max_context : c.max_context;
  if (plan->max_context > c.max_context) {
    return InvalidArgument("context %u exceeds the model's %u positions", o.max_context,
                           c.max_context);
  }
  if (o.max_batch == 0) return InvalidArgument("max_batch must be at least 1");
  plan->max_batch = o.max_batch < plan->max_context ? o.max_batch : plan->max_context;
  // A bidirectional model sees its whole input at once: one prefill step holds it all.
  if (c.mask == AttentionMask::kBidirectional) plan->max_batch = plan->max_context;
  const size_t default_prompt_bytes = Product({8, plan->max_context});
  plan->max_prompt_bytes = o.max_prompt_bytes ? o.max_prompt_bytes
                           : default_prompt_bytes < kDefaultMaxPromptBytes
                               ? default_prompt_bytes
                               : kDefaultMaxPromptBytes;
  plan->all_logits = o.all_logits;
  plan->backend = o.backend;
  if (o.backend != Backend::kHighway && o.backend != Backend::kXnnpack) {
    return InvalidArgument("unknown backend %u", static_cast<unsigned>(o.backend));
  }
  plan->kv_type = o.kv_type;
  if (o.kv_type != KvType::kF32 && o.kv_type != KvType::kF16 &&
      o.kv_type != KvType::kQ8) {
    return InvalidArgument("unknown KV cache type %u", static_cast<unsigned>(o.kv_type));
  }
  EMBER_RETURN_IF_ERROR(CheckContextShift(c, o, plan->max_context));
  plan->context_shift = o.context_shift;
  plan->context_keep = o.context_keep;
  // An embedding model (or reranker) puts out vectors, never the vocabulary's logits:
  // no rows for them, nor room to sample them (Session::Prefill refuses it).
  plan->logit_rows = c.embeds() ? 0 : o.all_logits ? plan->max_batch : 1;
  plan->token_capacity = model.tokenizer().EncodeCapacity(plan->max_prompt_bytes);
  if (plan->token_capacity == SIZE_MAX) {
    return InvalidArgument("max_prompt_bytes %zu exceeds the %zu the tokenizer takes",
                           plan->max_prompt_bytes, model.tokenizer().max_text_bytes());
  }
  plan->grammar_bytes = o.grammar_bytes;
  if (o.draft_max > 0) {
    if (o.draft_max > kMaxDraftTokens) {
      return InvalidArgument("draft_max %u: at most %u drafted tokens per pass",
                             o.draft_max, kMaxDraftTokens);
    }
    if (c.embeds() || c.mask == AttentionMask::kBidirectional) {
      return InvalidArgument(
          "speculative decoding (draft_max %u) needs a causal language model",
          o.draft_max);
    }
    // A verifying pass: the sampled token and draft_max drafted ones, each one's logits.
    const size_t step = size_t{o.draft_max} + 1;
    if (step > plan->max_context) {
      return InvalidArgument("draft_max %u needs a context of more than %u positions",
                             o.draft_max, o.draft_max);
    }
    if (plan->max_batch < step) plan->max_batch = step;
    if (plan->logit_rows < step) plan->logit_rows = step;
    plan->draft_max = o.draft_max;
    plan->speculative_bytes =
        SpeculativeBytes(c.vocab_size, plan->max_context, o.draft_max);
  }
  return ResolveAttentionRecord(c, plan->max_context, o.record_attention, &plan->record);
}

}  // namespace

const char* BackendName(Backend backend) {
  return backend == Backend::kXnnpack ? "xnnpack" : "highway";
}

const char* ArenaStepName(int step) {
  static const char* const kNames[] = {"session", "embed", "attention", "ffn", "logits"};
  return step >= kStepSession && step <= kStepLogits ? kNames[step] : "?";
}

Result<SessionPlan> PlanSession(const Model& model, const SessionOptions& options) {
  const ModelConfig& c = model.config();
  SessionPlan plan;
  EMBER_RETURN_IF_ERROR(ResolveSizes(model, options, &plan));
  const size_t b = plan.max_batch, T = plan.max_context, chunk = AttentionChunk(b);
  // XNNPACK reads up to a few bytes past an input: the buffers Linear reads carry them.
  size_t pad = 0;
  if (plan.backend == Backend::kXnnpack) {
    EMBER_RETURN_IF_ERROR(XnnpackArenaBytes(model, &plan.xnnpack_bytes));
    pad = (XnnpackInputPaddingBytes() + sizeof(float) - 1) / sizeof(float);
  }
  ArenaPlan& a = plan.arena;
  SessionPlan::Ids& id = plan.ids;
  // Between passes: the cache, what the caller reads after a pass, and the scratch of
  // the calls between passes (sampling, tokenizing).
  size_t kv_rows = 0;
  bool rings = false;  // a ring's new rows may wrap: they are written through kv_new
  for (size_t layer = 0; layer < c.n_layers; ++layer) {
    const KvLayer l = KvLayerPositions(c, layer, T, plan.max_batch, RingSink(plan));
    rings = rings || l.ring > 0;
    kv_rows = Padded(kv_rows, Product({2, l.capacity}));
  }
  const size_t kv_values = Product({kv_rows, c.kv_dim()});
  const size_t head_groups = kernels::KvGroups(c.head_dim);
  const bool q8 = plan.kv_type == KvType::kQ8;
  switch (plan.kv_type) {
    case KvType::kF32:
      id.kv_f32 = a.Add<float>("kv_cache", kv_values, kStepSession, kStepLogits,
                               BufferKind::kKvCache);
      break;
    case KvType::kF16:
      id.kv_f16 = a.Add<uint16_t>("kv_cache", kv_values, kStepSession, kStepLogits,
                                  BufferKind::kKvCache);
      break;
    case KvType::kQ8:
      id.kv_q8 = a.Add<int8_t>("kv_cache", kv_values, kStepSession, kStepLogits,
                               BufferKind::kKvCache);
      id.kv_scales =
          a.Add<float>("kv_scales", Product({kv_rows, c.n_kv_heads, head_groups}),
                       kStepSession, kStepLogits, BufferKind::kKvCache);
      break;
  }
  id.kv_layers = a.Add<KvLayer>("kv_layers", c.n_layers, kStepSession, kStepLogits,
                                BufferKind::kKvCache);
  id.logits = a.Add<float>("logits", Product({plan.logit_rows, c.vocab_size}),
                           kStepSession, kStepLogits);
  id.sampler =
      a.Add<uint8_t>("sampler", plan.logit_rows ? Sampler::ScratchBytes(c.vocab_size) : 0,
                     kStepSession, kStepLogits, BufferKind::kScratch);
  id.pooled = a.Add<float>("pooled", c.embeds() ? Product({2, c.pooled_width()}) : 0,
                           kStepSession, kStepLogits, BufferKind::kScratch);
  id.types = a.Add<uint8_t>("token_types", c.embeds() ? plan.max_context : 0,
                            kStepSession, kStepLogits, BufferKind::kScratch);
  // A reranker's prompt (EncodePair) or a named prompt and its text (EmbedText),
  // written out before it is encoded.
  const Tokenizer& tok = model.tokenizer();
  const bool prompt_text = (c.labels > 0 && !tok.pair_format().empty()) ||
                           (c.embeds() && tok.num_prompts() > 0);
  id.prompt_text = a.Add<uint8_t>("prompt_text", prompt_text ? plan.max_prompt_bytes : 0,
                                  kStepSession, kStepLogits, BufferKind::kScratch);
  id.tokens = a.Add<int32_t>("tokens", plan.token_capacity, kStepSession, kStepLogits,
                             BufferKind::kScratch);
  // One pass.
  id.x = a.Add<float>("x", Padded(Product({b, c.d_model}), pad), kStepEmbed, kStepLogits);
  id.x_norm = a.Add<float>("x_norm", Padded(Product({b, c.d_model}), pad), kStepEmbed,
                           kStepLogits);
  id.rope_cos =
      a.Add<float>("rope_cos", Product({b, c.head_dim}), kStepEmbed, kStepFeedForward);
  id.rope_sin =
      a.Add<float>("rope_sin", Product({b, c.head_dim}), kStepEmbed, kStepFeedForward);
  id.q = a.Add<float>("q", Product({b, c.q_dim()}), kStepAttention, kStepAttention);
  // New keys and values outside the cache, converted into it (not for an f32 cache
  // without rings, whose rows are computed in place); a q8 cache's queries in its
  // encoding.
  id.kv_new = a.Add<float>(
      "kv_new", plan.kv_type != KvType::kF32 || rings ? Product({2, b, c.kv_dim()}) : 0,
      kStepAttention, kStepAttention);
  id.q8 = a.Add<int8_t>("q8",
                        q8 ? Product({b, c.n_heads, head_groups, kernels::kKvGroup}) : 0,
                        kStepAttention, kStepAttention);
  id.q8_scales = a.Add<float>("q8_scales", q8 ? Product({b, c.n_heads, head_groups}) : 0,
                              kStepAttention, kStepAttention);
  id.attn_out = a.Add<float>("attn_out", Padded(Product({b, c.q_dim()}), pad),
                             kStepAttention, kStepAttention);
  id.probs = a.Add<float>("attn_probs", Product({chunk, c.n_heads, T}), kStepAttention,
                          kStepAttention);
  id.spans = a.Add<float>("attn_spans",
                          Product({chunk, kernels::kMaxAttentionSpans, c.n_heads,
                                   kernels::AttentionPartialFloats(c.head_dim)}),
                          kStepAttention, kStepAttention);
  id.proj =
      a.Add<float>("proj", Product({b, c.d_model}), kStepAttention, kStepFeedForward);
  id.ffn_a = a.Add<float>("ffn_a", Padded(Product({b, c.ffn_dim}), pad), kStepFeedForward,
                          kStepFeedForward);
  id.ffn_b = a.Add<float>("ffn_b", c.ffn == FfnKind::kGated ? Product({b, c.ffn_dim}) : 0,
                          kStepFeedForward, kStepFeedForward);
  // Sliding layers' RoPE tables, when they have their own base (Gemma 3).
  if (c.positions == PositionKind::kRope && c.rope_local_theta > 0.0f &&
      c.has_sliding_layers()) {
    id.rope_local_cos = a.Add<float>("rope_local_cos", Product({b, c.head_dim}),
                                     kStepEmbed, kStepFeedForward);
    id.rope_local_sin = a.Add<float>("rope_local_sin", Product({b, c.head_dim}),
                                     kStepEmbed, kStepFeedForward);
  }
  id.attention_record =
      a.Add<float>("attn_record", plan.record.num_floats(), kStepSession, kStepLogits);
  // QuantScratchGroups(b, ...), without wrapping around.
  const size_t groups = Product(
      {b, static_cast<size_t>(kernels::QuantGroups(MaxQuantizedInput(model.weights())))});
  id.act_q = a.Add<int8_t>("act_q", Product({groups, kernels::kQuantGroup}), kStepEmbed,
                           kStepLogits, BufferKind::kScratch);
  id.act_scales =
      a.Add<float>("act_scales", groups, kStepEmbed, kStepLogits, BufferKind::kScratch);
  id.act_sums =
      a.Add<int32_t>("act_sums", groups, kStepEmbed, kStepLogits, BufferKind::kScratch);
  id.act_half_sums =
      a.Add<int32_t>("act_half_sums", HasKQuant(model.weights()) ? groups : 0, kStepEmbed,
                     kStepLogits, BufferKind::kScratch);
  id.xnnpack = a.Add<uint8_t>("xnnpack", plan.xnnpack_bytes, kStepSession, kStepLogits,
                              BufferKind::kXnnpack);
  // The tokens in the cache, position by position: penalties look back over them, a
  // chat or a prompt cache compares a new prompt with them, a saved state keeps them.
  id.history =
      a.Add<int32_t>("history", T, kStepSession, kStepLogits, BufferKind::kKvCache);
  // A grammar set on the session lives from then on (between passes and through them).
  id.grammar = a.Add<uint8_t>("grammar", plan.grammar_bytes, kStepSession, kStepLogits,
                              BufferKind::kGrammar);
  id.speculative = a.Add<uint8_t>("speculative", plan.speculative_bytes, kStepSession,
                                  kStepLogits, BufferKind::kScratch);
  const Status planned = a.Plan();
  if (!planned.ok() && planned.code() != StatusCode::kResourceExhausted) return planned;
  if (!planned.ok()) {  // a buffer past what this target can address
    return ResourceExhausted(
        "%s context of %zu positions needs more memory than this "
        "target can address (%s): choose a shorter context "
        "(max_context; -c on the command line)",
        options.max_context ? "a" : "the model's", T, planned.message());
  }
  if (options.max_context == 0 && plan.arena_bytes() > kDefaultArenaLimit) {
    return ResourceExhausted(
        "the model's context of %zu positions needs a session of %.1f GiB, over the "
        "%.0f GiB allowed when no context is asked for: choose a shorter context "
        "(max_context; -c on the command line), or ask for %zu explicitly",
        T, plan.arena_bytes() / 1073741824.0, kDefaultArenaLimit / 1073741824.0, T);
  }
  return plan;
}

SessionBuffers SessionPlan::Bind(const ModelConfig& config, uint8_t* base) const {
  SessionBuffers s;
  KvCache& kv = s.kv;
  kv.type = kv_type;
  kv.max_context = max_context;
  kv.n_kv_heads = config.n_kv_heads;
  kv.head_dim = config.head_dim;
  kv.kv_dim = config.kv_dim();
  kv.scale_stride = size_t{config.n_kv_heads} * kernels::KvGroups(config.head_dim);
  kv.f32 = arena.Bind(ids.kv_f32, base);
  kv.f16 = arena.Bind(ids.kv_f16, base);
  kv.q8 = arena.Bind(ids.kv_q8, base);
  kv.q8_scales = arena.Bind(ids.kv_scales, base);
  KvLayer* layers = arena.Bind(ids.kv_layers, base);
  for (size_t layer = 0, row = 0; layer < config.n_layers; ++layer) {
    layers[layer] = Layer(config, layer);
    layers[layer].first_row = row;
    row += 2 * layers[layer].capacity;
  }
  kv.layers = layers;
  s.logits = arena.Bind(ids.logits, base);
  s.sampler = arena.Bind(ids.sampler, base);
  s.tokens = arena.Bind(ids.tokens, base);
  s.pooled = arena.Bind(ids.pooled, base);
  s.types = arena.Bind(ids.types, base);
  s.prompt_text = reinterpret_cast<char*>(arena.Bind(ids.prompt_text, base));
  s.attention_record = arena.Bind(ids.attention_record, base);
  s.xnnpack = arena.Bind(ids.xnnpack, base);
  s.history = arena.Bind(ids.history, base);
  s.grammar = arena.Bind(ids.grammar, base);
  s.speculative = arena.Bind(ids.speculative, base);
  Activations& act = s.act;
  act.max_batch = max_batch;
  act.x = arena.Bind(ids.x, base);
  act.x_norm = arena.Bind(ids.x_norm, base);
  act.rope_cos = arena.Bind(ids.rope_cos, base);
  act.rope_sin = arena.Bind(ids.rope_sin, base);
  act.rope_local_cos = arena.Bind(ids.rope_local_cos, base);
  act.rope_local_sin = arena.Bind(ids.rope_local_sin, base);
  act.q = arena.Bind(ids.q, base);
  act.kv_new = arena.Bind(ids.kv_new, base);
  act.q8 = arena.Bind(ids.q8, base);
  act.q8_scales = arena.Bind(ids.q8_scales, base);
  act.attn_out = arena.Bind(ids.attn_out, base);
  act.probs = arena.Bind(ids.probs, base);
  act.spans = arena.Bind(ids.spans, base);
  act.proj = arena.Bind(ids.proj, base);
  act.ffn_a = arena.Bind(ids.ffn_a, base);
  act.ffn_b = arena.Bind(ids.ffn_b, base);
  act.quant.values = arena.Bind(ids.act_q, base);
  act.quant.scales = arena.Bind(ids.act_scales, base);
  act.quant.sums = arena.Bind(ids.act_sums, base);
  act.quant.half_sums = arena.Bind(ids.act_half_sums, base);  // null when empty
  return s;
}

KvLayer KvLayerPositions(const ModelConfig& c, size_t layer, size_t context,
                         size_t max_batch, size_t sink) {
  KvLayer l;
  l.capacity = context;
  // A step of max_batch tokens writes its rows before any of them attends, and its
  // first token looks back window - 1 positions: window + max_batch - 1 in the ring.
  const size_t window = c.window(layer);
  if (window == 0) return l;
  const size_t ring = window + max_batch - 1;
  if (sink + ring >= context) return l;
  l.sink = sink;
  l.ring = ring;
  l.capacity = sink + ring;
  return l;
}

KvLayer SessionPlan::Layer(const ModelConfig& config, size_t layer) const {
  return KvLayerPositions(config, layer, max_context, max_batch, RingSink(*this));
}

size_t RequiredArenaBytes(const Model& model, const SessionOptions& options) {
  Result<SessionPlan> plan = PlanSession(model, options);
  if (!plan.ok()) return 0;
  if (options.baked_prompt && !BakedPromptFits(model, *plan).ok()) return 0;
  return plan->arena_bytes();
}

Result<size_t> LongestContextWithin(const Model& model, SessionOptions options,
                                    size_t budget_bytes) {
  // fits(n): a session of n positions plans within the budget. Invalid options fail
  // at every context, so the plan of one position says what is wrong.
  const auto arena_at = [&](size_t n) -> Result<size_t> {
    options.max_context = static_cast<uint32_t>(n);
    Result<SessionPlan> plan = PlanSession(model, options);
    if (!plan.ok()) return plan.status();
    return plan->arena_bytes();
  };
  Result<size_t> smallest = arena_at(1);
  if (!smallest.ok()) return smallest.status();
  if (*smallest > budget_bytes) {
    options.max_context = 1;
    const Result<SessionPlan> one = PlanSession(model, options);
    const size_t grammar = one.ok() ? one->grammar_bytes : 0;
    if (grammar > 0) {
      return ResourceExhausted(
          "not even one position fits in %zu bytes: a session of one position needs %zu, "
          "%zu of them the room for a grammar (grammar_bytes)",
          budget_bytes, *smallest, grammar);
    }
    return ResourceExhausted(
        "not even one position fits in %zu bytes: a session of one position needs %zu",
        budget_bytes, *smallest);
  }
  size_t lo = 1, hi = model.config().max_context;  // lo fits; find the last that does
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    Result<size_t> bytes = arena_at(mid);
    if (bytes.ok() && *bytes <= budget_bytes) {
      lo = mid;
    } else if (bytes.ok() || bytes.status().code() == StatusCode::kResourceExhausted) {
      hi = mid - 1;  // too large (or past what the target can address)
    } else {
      return bytes.status();
    }
  }
  // The longest context that fits; a baked prompt it cannot hold is said here.
  if (options.baked_prompt) {
    options.max_context = static_cast<uint32_t>(lo);
    Result<SessionPlan> plan = PlanSession(model, options);
    if (!plan.ok()) return plan.status();
    EMBER_RETURN_IF_ERROR(BakedPromptFits(model, *plan));
  }
  return lo;
}

}  // namespace ember
