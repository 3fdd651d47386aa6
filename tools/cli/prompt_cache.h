// `ember run --prompt-cache FILE`: a saved prompt state (runtime/chat/prompt_state.h)
// reused when the new prompt starts with its tokens, and the new prompt's state saved
// back.
#ifndef EMBER_TOOLS_CLI_PROMPT_CACHE_H_
#define EMBER_TOOLS_CLI_PROMPT_CACHE_H_

#include <cstdint>
#include <string>

#include "runtime/session.h"
#include "runtime/status.h"

namespace ember::tools {

// Whether `path` may be a prompt cache for a run of `model_path`, checked before the
// model loads: missing, empty or an ember prompt state (of any model), and not the model
// itself under any name. Any other file is refused, never replaced.
Status CheckPromptCacheFile(const std::string& path, const std::string& model_path);

// Prefills prompt[0, n - 1) into the session (at position 0), restoring the longest
// prefix the cache file holds first (a file that is missing, empty, a state of another
// model or another prompt is not used: a note on stderr says why; a file that is not a
// prompt state is an error, as CheckPromptCacheFile says), then saves the state of
// those n - 1 tokens back to the file, atomically, when it holds more than the file did.
// The last token is left for generation to prefill (it makes the logits). *reused: the
// tokens the cache supplied.
Status PrefillWithPromptCache(const std::string& path, Session* session,
                              const int32_t* prompt, size_t n, size_t* reused);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_PROMPT_CACHE_H_
