// Generate: the prompt -> prefill -> sample -> decode loop, streaming each new token's
// text to a callback. Used by `ember run`, `ember chat` and the C API.
#ifndef EMBER_RUNTIME_GENERATE_H_
#define EMBER_RUNTIME_GENERATE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/chat/stop_strings.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/speculative/speculator.h"

namespace ember {

enum class StopReason { kMaxTokens, kEndOfText, kContextFull, kCallback, kStopString };

// Called once per generated token with its id and the bytes it adds to the text (may be
// empty, or part of a UTF-8 character). Return false to stop. With stop strings, the
// bytes are those released at this token (text that might begin a stop string is held
// back until it cannot), and text still held back when generation ends without one comes
// in a last call with id -1.
using TokenCallback = bool (*)(void* user, int32_t id, std::string_view text);

// What may come next, for constrained generation (a grammar: GrammarConstraint::
// AsTokenConstraint in runtime/grammar/grammar_constraint.h). `allowed` gives a bit per
// token id (set: allowed) for the next token, stop ids among them only where the text
// can end (`can_end`); `accept` takes the token sampled and the bytes it adds; `reset`
// goes back to the beginning (a new reply). None may allocate (they run once per
// token). Function pointers over `self`, not virtual functions: the runtime is built
// without RTTI, and code built with it (a sanitizer's vptr check) would need type
// information the runtime does not emit.
struct TokenConstraint {
  void* self = nullptr;
  Status (*allowed)(void* self, const uint32_t** bits) = nullptr;
  Status (*accept)(void* self, int32_t id, std::string_view text) = nullptr;
  bool (*can_end)(const void* self) = nullptr;
  Status (*reset)(void* self) = nullptr;
};

struct GenerateOptions {
  size_t max_new = SIZE_MAX;  // tokens to sample at most
  // Generation also ends at these (a chat template's end of turn), besides the
  // tokenizer's stop ids.
  const int32_t* stop_ids = nullptr;
  size_t num_stop_ids = 0;
  StopStrings* stop_strings = nullptr;  // null or empty: none
  // Null: any token. Else only the tokens it allows, and the end of text (a stop id)
  // only where it can end.
  const TokenConstraint* constraint = nullptr;
  // Null: plain decoding. Else speculative decoding through it (over this session),
  // when it drafts (a lookup or a draft model set) and no constraint is given: the
  // same text greedily, the same distribution when sampling.
  Speculator* speculator = nullptr;
};

struct GenerateResult {
  size_t generated = 0;  // tokens passed to the callback
  StopReason stop = StopReason::kMaxTokens;
  int32_t stop_token = -1;  // the stop id sampled (kEndOfText), else -1
  // With a constraint: whether the text is a whole sentence of it when generation
  // stopped (false after -n tokens or a full context mid-structure).
  bool complete = true;
};

// Prefills `prompt` after the session's context (none: the session's logits go on, as
// after a restored state that brought them) and samples up to
// max_new tokens, feeding each back, with the penalties over the context's tokens. Stops
// early at a stop id (Tokenizer::IsStop: EOS, every end id a Hugging Face model lists,
// and BOS for llama2.c models; and the options' ids), a stop string, a full context
// (unless the session shifts its context: SessionOptions::context_shift), or when the
// callback says so.
Status Generate(Session& session, Sampler& sampler, const int32_t* prompt,
                size_t n_prompt, const GenerateOptions& options, TokenCallback callback,
                void* user, GenerateResult* result);

inline Status Generate(Session& session, Sampler& sampler, const int32_t* prompt,
                       size_t n_prompt, size_t max_new, TokenCallback callback,
                       void* user, GenerateResult* result) {
  GenerateOptions options;
  options.max_new = max_new;
  return Generate(session, sampler, prompt, n_prompt, options, callback, user, result);
}

}  // namespace ember

#endif  // EMBER_RUNTIME_GENERATE_H_
