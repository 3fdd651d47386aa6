// Tool calls in a model's reply: how each family writes them (the syntax its chat
// template teaches), found from the template's own text, and the calls parsed out of a
// reply into spans of it. No heap: a reply's calls are views of its text.
#ifndef EMBER_RUNTIME_CHAT_TOOL_CALLS_H_
#define EMBER_RUNTIME_CHAT_TOOL_CALLS_H_

#include <cstddef>
#include <string_view>

#include "runtime/chat/chat_template.h"
#include "runtime/status.h"

namespace ember {

enum class ToolCallFormat {
  kNone,     // the template shows no way to call tools
  kHermes,   // <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>: Qwen2.5,
             // Qwen3
  kLlama3,   // the whole reply is {"name": ..., "parameters": {...}}: Llama 3.1-3.3
  kMistral,  // [TOOL_CALLS] [{"name": ..., "arguments": {...}}, ...]: Mistral v0.3
  // <|tool_call|>[{"name": ..., "arguments": {...}}, ...]<|/tool_call|>: Phi-4-mini,
  // whose template takes the tools as a JSON string in the system message's "tools"
  // (<|tool|>...<|/tool|>), not as `tools` (ChatTemplate::Render puts them there).
  kPhi4Mini,
};
const char* ToolCallFormatName(ToolCallFormat format);

// The format a compiled template writes tool calls in, read from its string constants
// (the markup it renders calls with, or for Phi-4-mini the <|tool|> tags it renders the
// tools in).
ToolCallFormat DetectToolCallFormat(const ChatProgramTables& program);

// How a format opens a call, for a grammar that starts there (runtime/grammar/
// lazy_constraint.h): the trigger text (or the control token whose piece it is), whether
// it counts only at the start of the reply (after white space), and whether the call's
// grammar begins with the trigger's bytes or after them.
struct ToolCallSyntax {
  std::string_view trigger;
  bool at_start = false;
  bool grammar_includes_trigger = false;
  std::string_view arguments_key;  // "arguments" or "parameters"
  bool list = false;               // calls as a JSON array (Mistral, Phi-4-mini)
};
ToolCallSyntax SyntaxOf(ToolCallFormat format);

// One call: views into the reply (the name's JSON string contents as written, escapes
// and all; the arguments' JSON object text, "{}" when the call gave none).
struct ToolCall {
  std::string_view name;
  std::string_view arguments;
};

// Nesting a call's JSON may have (objects and arrays within each other).
inline constexpr int kMaxToolCallDepth = 64;
// Calls one reply may make; more are refused.
inline constexpr size_t kMaxToolCalls = 16;

// The calls in `reply` (at most max_calls) and the text outside them (`content`: for
// Hermes and Phi-4-mini, the text before the first call; empty when the reply is all
// calls). A reply without the format's call markup has no calls and is all content. A
// call whose JSON is not an object with a string "name" (and an object of arguments,
// if any) is InvalidArgument naming where; ResourceExhausted past max_calls.
// Phi-4-mini's markers are control tokens, which decode to no text: the chat keeps
// their pieces in the reply it parses (Chat::Reply).
Status ParseToolCalls(ToolCallFormat format, std::string_view reply, ToolCall* calls,
                      size_t max_calls, size_t* num_calls, std::string_view* content);

// The end of the JSON value starting at text[begin] (after white space), with at most
// kMaxToolCallDepth levels; InvalidArgument when it is not one. Checks structure, string
// escapes and literals, not numbers' digits.
Status SkipJsonValue(std::string_view text, size_t begin, size_t* end);

}  // namespace ember

#endif  // EMBER_RUNTIME_CHAT_TOOL_CALLS_H_
