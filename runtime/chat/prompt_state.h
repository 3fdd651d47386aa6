// Prompt state: a session's state saved into caller memory (its position, the tokens and
// KV cache rows of the positions used, the sampler's generator) and restored into a
// compatible session, for a prompt cache or a prompt baked into the model file.
//
// Layout (little-endian): a 96-byte header, then the payload: position int32 tokens;
// each layer's ring geometry ({uint32 sink, uint32 ring}, 0 0 for a layer that keeps
// every position: KvLayer); for each layer its key slots and value slots in use, as the
// cache stores them (row_bytes each, KvRowBytes of the cache's type: f32, f16, or q8's
// int8 rows then their scales; a ring's slots in their rotation), so that a restore is
// exact; then (when the session had them) the last position's vocab_size logits, so
// that a restored session samples its next token with no prefill at all. The header
// names the model (a fingerprint), the cache's shape and type, the sizes, and checksums
// of both parts (the header's covers every header byte but its own): a state for another
// model, another cache type or ring geometry, a damaged copy, or one with bytes missing
// or added at its end is refused before anything is written, never half-restored.
#ifndef EMBER_RUNTIME_CHAT_PROMPT_STATE_H_
#define EMBER_RUNTIME_CHAT_PROMPT_STATE_H_

#include <cstddef>
#include <cstdint>

#include "runtime/model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/status.h"

namespace ember {

inline constexpr size_t kPromptStateHeaderBytes = 96;
// 3: the header's checksum covers all of it (but itself), not its first 72 bytes.
inline constexpr uint32_t kPromptStateVersion = 3;

// What a state's header says (PeekPromptState).
struct PromptStateInfo {
  uint64_t model_fingerprint = 0;
  uint32_t n_layers = 0, kv_dim = 0, kv_type = 0, row_bytes = 0;
  uint32_t position = 0;
  uint64_t rng_state = 0;
  uint64_t payload_bytes = 0;
  uint32_t vocab_size = 0;
  bool has_logits = false;          // the last position's logits follow the KV rows
  const int32_t* tokens = nullptr;  // position tokens, inside the state's memory
  // n_layers entries of {uint32 sink, uint32 ring} (KvLayer), inside the state's memory.
  const uint8_t* layer_table = nullptr;
};

// A fingerprint of the model's weights and shape (config, tokenizer size, each tensor's
// name, type, shape and samples of its bytes), which a state must carry to be restored:
// equal for the same weights in any file (a baked copy too), different for others.
uint64_t ModelFingerprint(const Model& model);

// Bytes SavePromptState needs for the session's current position.
size_t PromptStateBytes(const Session& session);

// Saves the session (and the sampler's generator, when given) into out[0, *bytes).
// ResourceExhausted (with *bytes set to the size needed) when capacity is too small.
Status SavePromptState(const Session& session, const Sampler* sampler, void* out,
                       size_t capacity, size_t* bytes);

// Checks a state's header and sizes against `bytes`, which must be the state's size
// exactly (not the payload checksum, nor the model), and describes it.
Status PeekPromptState(const void* data, size_t bytes, PromptStateInfo* info);

// Whether a state described by `info` restores its first `keep` positions into a
// session of this plan: RestorePromptState's checks of the model, the cache's type and
// geometry and the context, before any arena exists. `convert`: an f32 state into an
// f16 or q8 cache.
Status PromptStateFits(const Model& model, const SessionPlan& plan,
                       const PromptStateInfo& info, size_t keep, bool* convert);

// PromptStateFits for the model's baked prompt (OK when it has none), its message
// naming the baked prompt: a plan that asks for it (SessionOptions::baked_prompt) and
// fails this makes no session.
Status BakedPromptFits(const Model& model, const SessionPlan& plan);

// Restores a saved state into the session (and the sampler's generator, when given):
// the model must be the one it was saved from, the KV cache of the same type and ring
// geometry (the same sliding layers' rings: context, max_batch and context_keep that
// give them), and the position within the session's context. An f32 state (a baked
// prompt's) also restores into an f16 or q8 cache, its rows converted as that cache
// stores rows (KvCache::StoreRow), unless one of its layers is a wrapped ring. Every
// check (and the checksums) passes before the session is touched; on an error it is
// unchanged. With `positions` below the state's, only its first `positions` positions
// are restored (OutOfRange when a ring in the state has wrapped past those a pass from
// there reads).
Status RestorePromptState(Session* session, Sampler* sampler, const void* data,
                          size_t bytes, size_t positions = SIZE_MAX);

}  // namespace ember

#endif  // EMBER_RUNTIME_CHAT_PROMPT_STATE_H_
