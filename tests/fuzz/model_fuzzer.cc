// Fuzzes model loading from memory through the C API: FlatBuffers verification, the
// semantic checks, weight binding and the arena plan; whatever loads then runs a short
// forward pass (two tokens prefilled, one decoded), samples, and round-trips text
// through its tokenizer, and renders its chat template if it has one. Any crash,
// sanitizer report or abort is a bug: bad files must come back as a status.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "runtime/ember.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

// Sessions of fuzzed models are kept small so one input stays quick.
constexpr uint32_t kContext = 8;
constexpr size_t kMaxArenaBytes = size_t{256} << 20;

void RunModel(ember_model* model) {
  ember_session_options options;
  ember_session_options_default(&options);
  options.max_context = std::min<uint32_t>(kContext, ember_model_max_context(model));
  options.max_batch = 2;
  options.max_prompt_bytes = 64;
  const size_t arena_bytes = ember_arena_bytes(model, &options);
  if (arena_bytes == 0 || arena_bytes > kMaxArenaBytes) return;
  ember_session* session = nullptr;
  if (ember_session_create(model, &options, nullptr, nullptr, 0, &session) != EMBER_OK) {
    return;
  }
  const uint32_t vocab = ember_model_vocab_size(model);
  const int32_t bos = ember_model_bos(model);
  const int32_t prompt[2] = {bos >= 0 ? bos : 0, static_cast<int32_t>(vocab - 1)};
  if (ember_prefill(session, prompt, 2) == EMBER_OK) {
    int32_t token = -1;
    if (ember_sample(session, &token) == EMBER_OK) {
      if (token < 0 || static_cast<uint32_t>(token) >= vocab) abort();
      ember_decode(session, token);
    }
  }
  // Out-of-range ids are refused, not read.
  const int32_t bad[1] = {static_cast<int32_t>(vocab)};
  if (ember_prefill(session, bad, 1) == EMBER_OK) abort();

  const char text[] = "Once upon a time, \xc3\xa9t\xc3\xa9 \xe2\x9c\x93";
  int32_t ids[2 * sizeof(text) + 2];
  size_t n = 0;
  if (ember_tokenize(session, text, sizeof(text) - 1, 1, ids, 2 * sizeof(text) + 2, &n) ==
      EMBER_OK) {
    int32_t prev = -1;
    for (size_t i = 0; i < n; ++i) {
      const char* bytes;
      size_t length;
      if (ember_detokenize(model, prev, ids[i], &bytes, &length) != EMBER_OK) abort();
      prev = ids[i];
    }
  }
  // A chat template (checked at load) renders a conversation or fails with a status; a
  // baked prompt (restored when the session started) left a session that samples.
  if (ember_model_has_chat_template(model)) {
    static char buffer[1 << 16];
    const ember_chat_message messages[] = {{"system", "Be brief.", 9},
                                           {"user", "Hi", 2},
                                           {"assistant", "Hello.", 6},
                                           {"user", "\xc3\xa9?", 3}};
    size_t length = 0;
    if (ember_chat_template_render(model, messages, 4, nullptr, buffer, sizeof(buffer),
                                   &length) == EMBER_OK &&
        length > sizeof(buffer)) {
      abort();
    }
  }
  ember_session_free(session);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ember::fuzz::AlignedCopy copy(data, size);
  ember_model* model = nullptr;
  if (ember_model_from_memory(copy.data(), copy.size(), &model) != EMBER_OK) {
    if (model != nullptr || ember_last_error()[0] == '\0') abort();  // a status says why
    return 0;
  }
  RunModel(model);
  ember_model_free(model);
  return 0;
}
