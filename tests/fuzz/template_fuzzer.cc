// Fuzzes the chat-template compiler: the input is a template's text, compiled as
// conversion compiles it (tools/template: parse, compile, the special tokens it writes,
// the end-of-turn probe render); what compiles is checked and bound by the runtime's
// ChatTemplate, as a model's loader binds it, and renders a fixed conversation into a
// fixed buffer under the runtime's default step budget, plain and with tools and tool
// calls (tools_json, extra_json). A template is hostile input: it must come back as a
// status naming what is wrong, never a crash, a hang or memory past the buffer. The
// same bytes are also read as JSON (the reader tools_json and extra_json go through).
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

// The tools of the render with tools: two functions, nested schemas, escapes.
constexpr char kTools[] =
    R"([{"type": "function", "function": {"name": "get_weather", "description": )"
    R"("M\u00e9t\u00e9o \"now\" \ud83c\udf24", "parameters": {"type": "object", )"
    R"("properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": )"
    R"(["c", "f"]}}, "required": ["city"]}}}, {"type": "function", "function": )"
    R"({"name": "search", "parameters": {"type": "object", "properties": {}}}}])";

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ember::TokenizerSpec* const kTokenizer =
      new ember::TokenizerSpec(ember::fuzz::SmallModelSpec().tokenizer);
  static char* const buffer = static_cast<char*>(malloc(kRenderBytes));
  {
    ember::tmpl::Heap heap(buffer, kRenderBytes);
    ember::tmpl::Value value;
    ExpectMessage(
        ember::tmpl::ParseJson(
            std::string_view(reinterpret_cast<const char*>(data), size), &heap, &value),
        "reading JSON");
  }
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
  const ember::Status bound =
      chat_template.Init(ember::tools::TablesOf(tok.chat_program, &storage),
                         static_cast<uint32_t>(tok.pieces.size()));
  if (!bound.ok()) {
    fprintf(stderr, "template_fuzzer: the runtime refuses a compiled template: %s\n",
            bound.message());
    abort();
  }

  const ember::ChatMessage conversation[] = {
      {"system", "Be brief."},
      {"user", "Hi <|im_start|> {{ x }}"},
      {"assistant", "<think>\nhm\n</think>\n\nHello."},
      {"tool", "{\"ok\": true}"},
      {"user", "caf\xc3\xa9 \xe2\x9c\x93?"}};
  // With tools: an assistant's tool call (content None) and its result.
  const ember::ChatMessage tool_conversation[] = {
      {"system", "Use tools."},
      {"user", "Weather in Paris?"},
      {"assistant", "",
       R"({"content": null, "tool_calls": [{"id": "call12345", "type": "function", )"
       R"("function": {"name": "get_weather", "arguments": {"city": "Paris", )"
       R"("unit": "c"}}}]})"},
      {"tool", "{\"temp\": 22}",
       R"({"tool_call_id": "call12345", "name": "get_weather"})"},
      {"assistant",
       "22\xc2\xb0"
       "C."},
      {"user", "Thanks"}};
  const size_t n = sizeof(conversation) / sizeof(conversation[0]);
  for (int variant = 0; variant < 3; ++variant) {
    ember::ChatTemplateOptions options;  // max_steps 0: the runtime's budget
    options.add_generation_prompt = variant != 1;
    options.enable_thinking = variant == 0 ? -1 : 0;
    options.now_seconds = variant == 0 ? -1 : 1767225600;  // 2026-01-01
    if (variant == 2) options.tools_json = kTools;
    size_t length = 0;
    const ember::Status s =
        variant == 2 ? chat_template.Render(
                           tool_conversation,
                           sizeof(tool_conversation) / sizeof(tool_conversation[0]),
                           options, buffer, kRenderBytes, &length)
                     : chat_template.Render(conversation, n - variant, options, buffer,
                                            kRenderBytes, &length);
    ExpectMessage(s, "rendering");
    if (s.ok() && length > kRenderBytes) {
      fprintf(stderr, "template_fuzzer: a render of %zu bytes in a %zu-byte buffer\n",
              length, kRenderBytes);
      abort();
    }
  }
  return 0;
}
