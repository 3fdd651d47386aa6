// Session planning: the options of a session, the buffers they need and where in the
// arena each one lives. PlanSession makes no heap allocation (but for the XNNPACK
// backend's one-time initialisation in a process); SessionPlan::Bind turns an arena into
// typed buffers.
#ifndef EMBER_RUNTIME_SESSION_PLAN_H_
#define EMBER_RUNTIME_SESSION_PLAN_H_

#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"
#include "runtime/activations.h"
#include "runtime/arena.h"
#include "runtime/attention_record.h"
#include "runtime/model/model.h"
#include "runtime/status.h"

namespace ember {

// What runs the f32 weight matrices' products: ember's Highway kernels (every weight
// type), or XNNPACK's fully-connected operators (f32 matrices; the others stay on
// Highway), which hold a packed copy of those weights in the session's arena.
enum class Backend : uint8_t { kHighway = 0, kXnnpack = 1 };
const char* BackendName(Backend backend);  // "highway", "xnnpack"

// A session that takes the model's whole context without asking for it (max_context 0)
// may not plan more than this: a small file can declare a context whose cache would
// not fit any device. Past it, give max_context explicitly (a shorter context, or the
// model's own to insist).
inline constexpr size_t kDefaultArenaLimit =
    sizeof(size_t) > 4 ? size_t{4} << 30 : size_t{1} << 30;  // 4 GiB (1 GiB on 32-bit)

inline constexpr uint32_t kDefaultMaxPromptBytes = 1u << 20;  // 1 MiB

struct SessionOptions {
  Backend backend = Backend::kHighway;
  uint32_t max_context = 0;  // positions the KV cache holds; 0: the model's, if its
                             // plan stays within kDefaultArenaLimit
  uint32_t max_batch = 64;   // tokens per prefill step (a bidirectional model's whole
                             // input must fit in one)
  bool all_logits = false;   // keep the logits of every position of a prefill step
  uint32_t max_prompt_bytes = 0;  // longest text Tokenize accepts; 0: 8 x max_context,
                                  // at most kDefaultMaxPromptBytes
  // Attention weights to record into an arena buffer the planner sizes for them (none
  // when not enabled); Session::attention_record() reads them.
  AttentionRecordOptions record_attention;
  // Long context in small memory (kv_cache.h, Session::ShiftContext).
  KvType kv_type = KvType::kF32;  // what the KV cache stores
  // When generation fills the context: keep the first context_keep positions, drop the
  // oldest half of the rest and go on (RoPE models only), instead of stopping.
  bool context_shift = false;
  uint32_t context_keep = 0;
  // A model with a baked prompt: the session starts (and Reset returns) after it, with
  // its KV cache restored instead of prefilled. False: start empty.
  bool baked_prompt = true;
  // The ISA tier the session's kernels are built for (kernels/isa.h: "avx2", "avx-vnni",
  // "avx512", "avx512-vnni", "neon", "dotprod", "i8mm", ... or "native", the best of this
  // CPU); null: the EMBER_ISA environment variable, else "native". A tier this CPU
  // cannot run is an error, not a fallback. The string need not outlive Create.
  const char* isa = nullptr;
  // Arena bytes reserved for a grammar (runtime/grammar: its program, matcher, the
  // vocabulary in byte order and the token mask's tables; GrammarConstraint::bytes()
  // tells what one needs, ember_grammar_bytes in the C API). 0: none, and a grammar is
  // refused, naming its bytes.
  size_t grammar_bytes = 0;
  // Speculative decoding (runtime/speculative/): up to this many drafted tokens
  // verified in one pass (at most kMaxDraftTokens). The session then keeps the logits
  // of draft_max + 1 positions, takes steps of at least that many, and plans the
  // drafting's tables (SpeculativeBytes). 0: none.
  uint32_t draft_max = 0;
};

// Lifetimes of arena buffers, in steps of one forward pass. Persistent buffers span all
// of them. The attention and feed-forward steps repeat once per layer, so a buffer read
// by every layer's attention (the rope tables) must live through the feed-forward step.
enum ArenaStep : int {
  kStepSession = 0,  // between forward passes: KV cache, logits, sampler, tokens
  kStepEmbed = 1,
  kStepAttention = 2,
  kStepFeedForward = 3,
  kStepLogits = 4,
};
// "session", "embed", "attention", "ffn", "logits".
const char* ArenaStepName(int step);

// Every buffer of a session, typed, in its arena.
struct SessionBuffers {
  KvCache kv;
  Activations act;
  float* logits = nullptr;            // (SessionPlan::logit_rows, vocab)
  uint8_t* sampler = nullptr;         // Sampler::ScratchBytes(vocab)
  int32_t* tokens = nullptr;          // (SessionPlan::token_capacity): Tokenize's ids
  float* pooled = nullptr;  // an embedding model's (2, pooled_width): its vector, twice
  uint8_t* types = nullptr;  // an embedding model's (max_context): a pair's token types
  // (max_prompt_bytes) a reranker's prompt or a named prompt and its text, written out
  char* prompt_text = nullptr;
  float* attention_record = nullptr;  // SessionPlan::record.num_floats(), or null
  uint8_t* xnnpack = nullptr;         // SessionPlan::xnnpack_bytes: XNNPACK operators
  int32_t* history = nullptr;         // (max_context): the token at each cached position
  uint8_t* grammar = nullptr;         // SessionPlan::grammar_bytes: a grammar's region
  uint8_t* speculative = nullptr;     // SessionPlan::speculative_bytes: drafting's tables
};

// Where a layer keeps its keys and values in a session of `context` positions (first_row
// aside): every position, or for a sliding layer whose window and a step of max_batch
// tokens need fewer, a ring of window + max_batch - 1 positions after `sink` kept ones
// (a context shift's; see KvLayer).
KvLayer KvLayerPositions(const ModelConfig& c, size_t layer, size_t context,
                         size_t max_batch, size_t sink);

// The session's sizes, resolved from the options and the model, and its arena layout.
struct SessionPlan {
  size_t max_context = 0;
  size_t max_batch = 0;  // tokens per forward pass
  size_t max_prompt_bytes = 0;
  size_t logit_rows = 0;      // max_batch with all_logits, else 1
  size_t token_capacity = 0;  // the tokenizer's EncodeCapacity(max_prompt_bytes)
  bool all_logits = false;
  Backend backend = Backend::kHighway;
  KvType kv_type = KvType::kF32;
  bool context_shift = false;
  size_t context_keep = 0;
  size_t xnnpack_bytes = 0;  // the XNNPACK operators (0 on the Highway backend)
  size_t grammar_bytes = 0;  // SessionOptions::grammar_bytes resolved
  size_t draft_max = 0;      // SessionOptions::draft_max
  size_t speculative_bytes = 0;  // SpeculativeBytes for draft_max
  kernels::IsaChoice isa;    // SessionOptions::isa (or EMBER_ISA) resolved on this CPU
  AttentionRecord record;  // the layout options.record_attention asks for (weights null)
  ArenaPlan arena;

  // Where each buffer went (ids from ArenaPlan::Add).
  struct Ids {
    // The cache in the array of its type (the others are not added), q8's scales, and
    // the per-layer table (KvCache).
    ArenaBuffer<float> kv_f32;
    ArenaBuffer<uint16_t> kv_f16;
    ArenaBuffer<int8_t> kv_q8;
    ArenaBuffer<float> kv_scales;
    ArenaBuffer<KvLayer> kv_layers;
    ArenaBuffer<float> kv_new, q8_scales;
    ArenaBuffer<int8_t> q8;
    ArenaBuffer<float> logits, attention_record, pooled;
    ArenaBuffer<uint8_t> sampler, xnnpack, grammar, speculative;
    ArenaBuffer<int32_t> tokens, history;
    ArenaBuffer<uint8_t> types, prompt_text;
    ArenaBuffer<float> x, x_norm, rope_cos, rope_sin, q, attn_out, probs, spans, proj,
        ffn_a, ffn_b, rope_local_cos, rope_local_sin;
    ArenaBuffer<int8_t> act_q;
    ArenaBuffer<float> act_scales;
    ArenaBuffer<int32_t> act_sums;
    ArenaBuffer<int32_t> act_half_sums;  // empty unless a matrix is a K-quant
  } ids;

  // Layer `layer`'s place in the cache (first_row aside), as Bind lays it out.
  KvLayer Layer(const ModelConfig& config, size_t layer) const;
  // Bytes a caller's arena must have: the plan plus the slack to align any address.
  size_t arena_bytes() const { return arena.total_bytes() + kArenaAlignment - 1; }
  // The buffers in an arena laid out by this plan (`base` aligned to kArenaAlignment);
  // fills the KV cache's layer table there.
  SessionBuffers Bind(const ModelConfig& config, uint8_t* base) const;
};

// The ISA tier `tier` names (SessionOptions::isa), else EMBER_ISA's, else this CPU's
// best; an unknown tier or one this CPU lacks is refused. Planned with the sizes, so that
// a session's size is never given for a tier its creation would refuse.
Status ResolveSessionIsa(const char* tier, kernels::IsaChoice* choice);

// Checks the options against the model (and the ISA tier against this CPU: an error
// here is Session::Create's) and plans the arena.
Result<SessionPlan> PlanSession(const Model& model, const SessionOptions& options);

// SessionPlan::arena_bytes() for these options (0 when they are invalid: PlanSession
// says why).
size_t RequiredArenaBytes(const Model& model, const SessionOptions& options);

// The longest context, at most the model's, whose session with these options (their
// max_context ignored) fits an arena of budget_bytes: the largest N with
// RequiredArenaBytes(N) <= budget_bytes, by a binary search over PlanSession (a plan
// only grows with its context). ResourceExhausted when not even one position fits.
Result<size_t> LongestContextWithin(const Model& model, SessionOptions options,
                                    size_t budget_bytes);

}  // namespace ember

#endif  // EMBER_RUNTIME_SESSION_PLAN_H_
