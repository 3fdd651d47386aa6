// Session: one conversation over a loaded Model. It owns its arena (the KV cache,
// activations, logits and scratch, planned before the first token: session_plan.h) and
// its position; each Prefill/Decode hands the buffers to a Forward pass. After Create,
// nothing here allocates.
#ifndef EMBER_RUNTIME_SESSION_H_
#define EMBER_RUNTIME_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/kernel_table.h"
#include "runtime/attention_record.h"
#include "runtime/forward.h"
#include "runtime/model/model.h"
#include "runtime/profile.h"
#include "runtime/session_plan.h"
#include "runtime/status.h"
#include "runtime/pool/thread_pool.h"

namespace ember {

class Session {
 public:
  // `pool` may be null (single-threaded) and must outlive the session. With `arena` null
  // the session allocates its arena once, here; otherwise the caller's buffer is used
  // (it must hold RequiredArenaBytes(model, options) bytes and outlive the session), and
  // Create makes no heap allocation at all. The session may be moved; its buffers stay.
  static Result<Session> Create(const Model& model, const SessionOptions& options,
                                const ThreadPool* pool = nullptr, void* arena = nullptr,
                                size_t arena_bytes = 0);
  Session(Session&&) = default;
  Session& operator=(Session&&) = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the model over `tokens` at positions position() onward and advances the
  // position; afterwards logits() holds the last position's logits (and, with
  // all_logits, logits_at(i) those of the i-th token of the last prefill step).
  Status Prefill(const int32_t* tokens, size_t n);
  Status Decode(int32_t token) { return Prefill(&token, 1); }
  // Prefill where each token equal to embedded.marker takes the next of embedded.rows
  // (embedded.count rows of d_model, one per marker) as its embedding (an image's rows:
  // Forward's EmbeddedRows). The marker need not be in the vocabulary; tokens() hold it.
  // With embedded.bidirectional each run of markers is one block its rows attend to
  // whole: steps are cut before a block rather than through it, and a block longer than
  // plan().max_batch is refused.
  Status PrefillEmbedded(const int32_t* tokens, size_t n, const EmbeddedRows& embedded);
  // Speculative decoding's pass: `tokens` (at most plan().draft_max + 1) in one step,
  // keeping each one's logits (logits_at(i)) whatever all_logits says.
  Status Verify(const int32_t* tokens, size_t n);
  // An embedding model's pass (runtime/embed/): back to position 0, then `tokens` with
  // their segment `types` (null: all 0; each below config.token_types), handing each
  // step's final hidden states to sink(context, rows, first, count): rows [first, first
  // + count) of the input, d_model floats each, valid during the call. A bidirectional
  // model takes the whole input in one step. logits() are stale afterwards.
  using HiddenSink = void (*)(void* context, const float* rows, size_t first,
                              size_t count);
  Status PrefillHidden(const int32_t* tokens, const uint8_t* types, size_t n,
                       HiddenSink sink, void* context);
  // Several whole texts in one step (Forward::HiddenPacked): text t is tokens[bounds[t],
  // bounds[t + 1]) (bounds[0] = 0, increasing), each at its own positions from 0 and
  // attending only within itself; bounds[texts] at most packed_capacity(). *rows: the
  // step's final hidden states (bounds[texts] rows of d_model), valid until the next
  // pass.
  Status PrefillPacked(const int32_t* tokens, const uint8_t* types, const size_t* bounds,
                       size_t texts, const float** rows);
  size_t packed_capacity() const {
    return plan_.max_batch < plan_.max_context ? plan_.max_batch : plan_.max_context;
  }

  // Context shift: drops positions [keep, keep + discard) of the cache and moves the
  // later ones `discard` positions down, their RoPE keys rotated to the new positions
  // (as a fresh pass at those positions would have rotated them; the values move
  // unchanged), so generation goes on past the context. A model with learned positions
  // refuses it. f32 and f16 keys rotate exactly up to rounding; q8 keys are dequantized,
  // rotated and quantized again (one more rounding of the moved keys). tokens() move
  // with their positions.
  Status ShiftContext(size_t keep, size_t discard);
  // Room for n more positions: nothing to do when they fit; else, with
  // SessionOptions::context_shift, a ShiftContext keeping context_keep positions and
  // dropping half of the rest (more if n needs it); else OutOfRange.
  Status MakeRoom(size_t n);
  size_t shifts() const { return shifts_; }  // context shifts since Create or Reset

  // Encodes text into the session's token buffer (valid until the next Tokenize).
  Status Tokenize(const char* text, size_t text_bytes, const EncodeOptions& options,
                  const int32_t** ids, size_t* n);
  Status Tokenize(const char* text, size_t text_bytes, bool add_bos, const int32_t** ids,
                  size_t* n) {
    EncodeOptions options;
    options.add_bos = add_bos;
    return Tokenize(text, text_bytes, options, ids, n);
  }

  // Records the attention weights of later Prefill/Decode calls as `what` selects into
  // `weights` (caller memory of at least `num_floats`, which must outlive the recording;
  // AttentionRecord::num_floats() after ResolveAttentionRecord gives the size) instead of
  // the arena buffer of SessionOptions::record_attention. `what.enabled == false` stops
  // recording. Rows count from position 0: only a session at position 0 (new or Reset)
  // starts recording.
  Status RecordAttention(const AttentionRecordOptions& what, float* weights,
                         size_t num_floats);
  // The weights recorded so far (weights null when not recording).
  AttentionRecord attention_record() const;

  // Adds the time of later forward passes, per kernel kind, to `profile` (null: stop).
  void set_profile(ForwardProfile* profile) { profile_ = profile; }

  const float* logits() const { return logits_last_; }
  const float* logits_at(size_t i) const;
  size_t num_logits() const { return num_logits_; }  // rows logits_at() accepts
  size_t position() const { return position_; }
  size_t max_context() const { return plan_.max_context; }
  // Back to the start: position 0, or after the model's baked prompt (restored again)
  // when the session uses it; the count of shifts() starts again.
  void Reset();
  // Positions the session starts with (the baked prompt's tokens, or 0).
  size_t start_position() const {
    return use_baked_ ? model_->baked_prompt().num_tokens : 0;
  }
  // The tokens at positions [0, position()), as prefilled.
  const int32_t* tokens() const { return buffers_.history; }
  // Forgets the positions from `position` on (<= position()): the next prefill continues
  // after the first `position` tokens, whose keys and values stay. logits() become
  // those of position - 1 when the last step kept that position's row (all_logits or
  // Verify), and are stale until the next prefill otherwise. OutOfRange when a sliding
  // layer's ring has wrapped past the positions a pass from `position` reads
  // (KvCache::Holds): prefill again from an earlier point.
  Status Truncate(size_t position);

  const Model& model() const { return *model_; }
  const SessionPlan& plan() const { return plan_; }
  const char* kernel_target() const { return kernels_.target; }
  Backend backend() const { return plan_.backend; }
  // What q8/q4 products run on: "avx512-vnni", "avx-vnni", "avx2", "neon-sdot", ...
  // (kernels::KernelTable::int8_dot).
  const char* kernel_int8_dot() const { return kernels_.int8_dot; }
  // The ISA tier the kernels were built for: "avx-vnni", ... (SessionOptions::isa).
  const char* kernel_isa() const { return kernels_.isa; }
  const kernels::KernelTable& kernels() const { return kernels_; }
  // The cache (its rows as the forward pass wrote them; KvCache::Load reads one).
  const KvCache& kv_cache() const { return buffers_.kv; }
  // Sampler::ScratchBytes(vocab) bytes for a Sampler over this session's logits.
  void* sampler_scratch() const { return buffers_.sampler; }
  // The region planned for a grammar (SessionOptions::grammar_bytes; null when none).
  void* grammar_memory() const { return buffers_.grammar; }
  // The region planned for speculative decoding (SessionOptions::draft_max; null: none).
  uint8_t* speculative_memory() const { return buffers_.speculative; }
  size_t grammar_bytes() const { return buffers_.grammar ? plan_.grammar_bytes : 0; }
  // The session's arena buffers (the KV cache, for saving and restoring state).
  const SessionBuffers& buffers() const { return buffers_; }
  // Sets the position after a restore wrote the cache and tokens of positions
  // [0, position) (prompt_state.h), and, with `logits`, the logits of the last position
  // into the first row of buffers().logits; otherwise they are stale until a prefill.
  void RestorePosition(size_t position, bool logits) {
    position_ = position;
    logits_valid_ = logits;
    if (logits) {
      logits_last_ = buffers_.logits;
      num_logits_ = 1;
    }
  }
  // Whether logits() are those of the last position (after a prefill or decode, or a
  // restore that brought them), so that sampling may go on without a prefill.
  bool logits_valid() const { return logits_valid_ && position_ > 0; }

 private:
  Session(const Model& model, const ThreadPool* pool, const SessionPlan& plan,
          const kernels::KernelTable& kernels);
  // Prefill's checks: a count that fits the context, ids in the vocabulary, a
  // bidirectional model's input whole.
  // `marker` (>= 0) is taken as an embedded row's, in the vocabulary or not.
  Status CheckInput(const int32_t* tokens, size_t n, int32_t marker = -1) const;
  // Runs tokens in steps of max_batch (cut before a bidirectional block of `embedded`
  // rows that would not fit), keeping every row's logits or the last one's.
  Status Run(const int32_t* tokens, size_t n, bool all_logits,
             const EmbeddedRows* embedded = nullptr);
  // Segment types (null: all 0) below the model's count of them.
  Status CheckTypes(const uint8_t* types, size_t n) const;

  const Model* model_;
  const ThreadPool* pool_;
  const XnnMatrices* xnn_ = nullptr;  // in the arena, with the XNNPACK backend
  ForwardProfile* profile_ = nullptr;
  kernels::KernelTable kernels_;
  SessionPlan plan_;
  std::unique_ptr<uint8_t[]> owned_arena_;  // null when the caller gave the arena
  SessionBuffers buffers_;
  AttentionRecord record_;  // rows unused: attention_record() computes them
  size_t position_ = 0;
  size_t shifts_ = 0;
  bool use_baked_ = false;
  bool logits_valid_ = false;
  const float* logits_last_ = nullptr;
  size_t num_logits_ = 0;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_SESSION_H_
