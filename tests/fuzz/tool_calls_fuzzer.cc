// Fuzzes tool calls' two hostile inputs: a model's reply (runtime/chat/tool_calls.h:
// parsed in each family's syntax into views of it) and a tools file (runtime/grammar/
// tool_grammar.h: read, turned into the grammar of a call, which the GBNF compiler and
// Bind must accept). The first byte picks which. Never a crash, unbounded memory or
// time, nor a view outside the reply.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/chat/tool_calls.h"
#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/grammar_program.h"
#include "runtime/grammar/tool_grammar.h"

namespace {

void Check(bool ok, const char* what, const std::string& detail) {
  if (!ok) {
    fprintf(stderr, "tool_calls_fuzzer: %s: %s\n", what, detail.c_str());
    abort();
  }
}

bool Inside(std::string_view view, std::string_view text) {
  return view.empty() ||
         (view.data() >= text.data() && view.data() + view.size() <= text.data() + text.size());
}

constexpr ember::ToolCallFormat kFormats[] = {
    ember::ToolCallFormat::kHermes, ember::ToolCallFormat::kLlama3,
    ember::ToolCallFormat::kMistral, ember::ToolCallFormat::kPhi4Mini};

void Reply(const std::string& text) {
  for (const ember::ToolCallFormat format : kFormats) {
    ember::ToolCall calls[ember::kMaxToolCalls];
    size_t n = 99;
    std::string_view content;
    const ember::Status s =
        ember::ParseToolCalls(format, text, calls, ember::kMaxToolCalls, &n, &content);
    Check(n <= ember::kMaxToolCalls, "more calls than room", text);
    Check(s.ok() || s.message()[0] != '\0', "a refusal without a message", text);
    Check(Inside(content, text), "content outside the reply", text);
    for (size_t i = 0; i < n; ++i) {
      Check(Inside(calls[i].name, text) && !calls[i].name.empty(), "a bad name view", text);
      Check(calls[i].arguments == "{}" || Inside(calls[i].arguments, text),
            "arguments outside the reply", text);
    }
  }
  size_t end = 0;
  if (ember::SkipJsonValue(text, 0, &end).ok()) Check(end <= text.size(), "end past", text);
}

void Tools(const std::string& text) {
  std::vector<ember::grammar::ToolDefinition> tools;
  const ember::Status read = ember::grammar::ReadTools(text, "tools", &tools);
  if (!read.ok()) {
    Check(read.message()[0] != '\0', "a refusal without a message", text);
    return;
  }
  for (const ember::ToolCallFormat format : kFormats) {
    std::string gbnf;
    const ember::Status made = ember::grammar::ToolCallGrammar(tools, format, &gbnf);
    if (!made.ok()) {
      Check(made.message()[0] != '\0', "a refusal without a message", text);
      continue;
    }
    std::vector<uint32_t> words;
    const ember::Status compiled = ember::grammar::CompileGbnf(gbnf, "root", &words);
    if (!compiled.ok()) {
      Check(compiled.code() == ember::StatusCode::kResourceExhausted,
            "the tool grammar does not compile", std::string(compiled.message()) + "\n" + gbnf);
      continue;
    }
    ember::grammar::Program program;
    Check(program.Bind(words.data(), words.size()).ok(), "Bind refuses a compiled program",
          gbnf);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    Tools(text);
  } else {
    Reply(text);
  }
  return 0;
}
