// Session: one conversation over a loaded Model: the KV cache, activations, logits and
// scratch, all in one arena planned before the first token. After Create, nothing here
// allocates.
#ifndef EMBER_RUNTIME_SESSION_H_
#define EMBER_RUNTIME_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/kernel_table.h"
#include "runtime/arena.h"
#include "runtime/attention_record.h"
#include "runtime/model.h"
#include "runtime/profile.h"
#include "runtime/status.h"
#include "runtime/thread_pool.h"

namespace ember {

struct SessionOptions {
  uint32_t max_context = 0;  // positions the KV cache holds; 0: the model's
  uint32_t max_batch = 64;   // tokens per prefill step (a bidirectional model's whole
                             // input must fit in one)
  bool all_logits = false;   // keep the logits of every position of a prefill step
  uint32_t max_prompt_bytes = 0;  // longest text Tokenize accepts; 0: 8 x max_context
  // Attention weights to record into an arena buffer the planner sizes for them (none
  // when not enabled); Session::attention_record() reads them.
  AttentionRecordOptions record_attention;
};

// The arena plan for a model and options: every buffer's name, offset, size, lifetime.
Result<ArenaPlan> PlanArena(const Model& model, const SessionOptions& options);

// The name of a lifetime step of the plan ("session", "embed", "attention", "ffn",
// "logits"): attention and ffn repeat once per layer.
const char* ArenaStepName(int step);

// Exact arena bytes Session::Create needs for these options (0 when they are invalid:
// PlanArena says why). Includes the slack to align an arbitrary caller buffer.
size_t RequiredArenaBytes(const Model& model, const SessionOptions& options);

class Session {
 public:
  // `pool` may be null (single-threaded) and must outlive the session. With `arena` null
  // the session allocates its arena once, here; otherwise the caller's buffer is used and
  // must hold RequiredArenaBytes(model, options) bytes.
  static Result<std::unique_ptr<Session>> Create(const Model& model,
                                                 const SessionOptions& options,
                                                 const ThreadPool* pool = nullptr,
                                                 void* arena = nullptr,
                                                 size_t arena_bytes = 0);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Runs the model over `tokens` at positions position() onward and advances the
  // position; afterwards logits() holds the last position's logits (and, with
  // all_logits, logits_at(i) those of the i-th token of the last prefill step).
  Status Prefill(const int32_t* tokens, size_t n);
  Status Decode(int32_t token) { return Prefill(&token, 1); }

  // Encodes text into the session's token buffer (valid until the next Tokenize).
  Status Tokenize(const char* text, size_t text_bytes, bool add_bos, const int32_t** ids,
                  size_t* n);

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
  size_t max_context() const { return max_context_; }
  void Reset() { position_ = 0; }

  const Model& model() const { return model_; }
  const ArenaPlan& plan() const { return plan_; }
  const char* kernel_target() const { return kernels_.target; }
  // What q8/q4 products run on: "avx512-vnni", "neon-sdot" or "highway".
  const char* kernel_int8_dot() const { return kernels_.int8_dot; }
  void* sampler_scratch() const;

 private:
  friend class Forward;
  Session(const Model& model, const SessionOptions& options, const ThreadPool* pool);
  float* Buffer(size_t id) const;

  const Model& model_;
  SessionOptions options_;
  const ThreadPool* pool_;
  kernels::KernelTable kernels_;
  ArenaPlan plan_;
  uint8_t* arena_ = nullptr;
  std::unique_ptr<uint8_t[]> owned_arena_;
  size_t max_context_ = 0;
  size_t position_ = 0;
  const float* logits_last_ = nullptr;
  size_t num_logits_ = 0;
  AttentionRecord attention_record_;  // rows unused: attention_record() computes them
  ForwardProfile* profile_ = nullptr;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_SESSION_H_
