// Fuzzes the chat-template compiler: the input is a template's text, compiled as
// conversion compiles it (tools/template: parse, compile, the special tokens it writes,
// the end-of-turn probe render); what compiles is checked and bound by the runtime's
// ChatTemplate, as a model's loader binds it, and renders a fixed conversation into a
// fixed buffer under the runtime's default step budget. A template is hostile input: it
// must come back as a status naming what is wrong, never a crash, a hang or memory
// past the buffer.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/chat/chat_template.h"
#include "tests/fuzz/fuzz_common.h"
#include "tools/template/chat_program.h"

namespace {

// The render's text and scratch, as a chat session's render buffer is: fixed, so a
// template that writes without end meets ResourceExhausted.
constexpr size_t kRenderBytes = size_t{1} << 16;

// What every failing call must leave: a status with a message.
void ExpectMessage(const ember::Status& s, const char* what) {
  if (!s.ok() && s.message()[0] == '\0') {
    fprintf(stderr, "template_fuzzer: %s failed without a message\n", what);
    abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ember::TokenizerSpec* const kTokenizer =
      new ember::TokenizerSpec(ember::fuzz::SmallModelSpec().tokenizer);
  ember::TokenizerSpec tok = *kTokenizer;
  tok.chat_template.assign(reinterpret_cast<const char*>(data), size);
  if (tok.chat_template.empty()) return 0;  // no template: nothing is compiled
  const ember::Status compiled = ember::tools::CompileChatTemplate(&tok);
  ExpectMessage(compiled, "compiling");
  if (!compiled.ok()) return 0;

  // A compiled program the runtime refuses is a compiler bug: the loader would refuse
  // the model conversion just wrote.
  ember::tools::ProgramStorage storage;
  ember::ChatTemplate chat_template;
  const ember::Status bound = chat_template.Init(
      ember::tools::TablesOf(tok.chat_program, &storage),
      static_cast<uint32_t>(tok.pieces.size()));
  if (!bound.ok()) {
    fprintf(stderr, "template_fuzzer: the runtime refuses a compiled template: %s\n",
            bound.message());
    abort();
  }

  static char* const buffer = static_cast<char*>(malloc(kRenderBytes));
  const ember::ChatMessage conversation[] = {
      {"system", "Be brief."},
      {"user", "Hi <|im_start|> {{ x }}"},
      {"assistant", "<think>\nhm\n</think>\n\nHello."},
      {"tool", "{\"ok\": true}"},
      {"user", "caf\xc3\xa9 \xe2\x9c\x93?"}};
  const size_t n = sizeof(conversation) / sizeof(conversation[0]);
  for (int variant = 0; variant < 2; ++variant) {
    ember::ChatTemplateOptions options;  // max_steps 0: the runtime's budget
    options.add_generation_prompt = variant == 0;
    options.enable_thinking = variant == 0 ? -1 : 0;
    options.now_seconds = variant == 0 ? -1 : 1767225600;  // 2026-01-01
    size_t length = 0;
    const ember::Status s =
        chat_template.Render(conversation, n - variant, options, buffer, kRenderBytes,
                             &length);
    ExpectMessage(s, "rendering");
    if (s.ok() && length > kRenderBytes) {
      fprintf(stderr, "template_fuzzer: a render of %zu bytes in a %zu-byte buffer\n",
              length, kRenderBytes);
      abort();
    }
  }
  return 0;
}
