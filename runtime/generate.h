// Generate: the prompt -> prefill -> sample -> decode loop, streaming each new token's
// text to a callback. Used by `ember run` and the C API.
#ifndef EMBER_RUNTIME_GENERATE_H_
#define EMBER_RUNTIME_GENERATE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/sampler.h"
#include "runtime/session.h"

namespace ember {

enum class StopReason { kMaxTokens, kEndOfText, kContextFull, kCallback };

// Called once per generated token with its id and the bytes it adds to the text (may be
// empty, or part of a UTF-8 character). Return false to stop.
using TokenCallback = bool (*)(void* user, int32_t id, std::string_view text);

struct GenerateResult {
  size_t generated = 0;  // tokens passed to the callback
  StopReason stop = StopReason::kMaxTokens;
};

// Prefills `prompt` (n_prompt >= 1 tokens) and samples up to max_new tokens, feeding each
// back. Stops early at a stop token (Tokenizer::IsStop: EOS, and BOS for llama2.c
// models), when the context is full (unless the session shifts its context:
// SessionOptions::context_shift), or when the callback says so.
Status Generate(Session& session, Sampler& sampler, const int32_t* prompt,
                size_t n_prompt, size_t max_new, TokenCallback callback, void* user,
                GenerateResult* result);

}  // namespace ember

#endif  // EMBER_RUNTIME_GENERATE_H_
