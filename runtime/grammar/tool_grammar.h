// Tools (OpenAI-style function definitions) for `ember chat --tools` and the C API: the
// definitions read and checked, and the grammar of a call to any of them in a family's
// syntax (runtime/chat/tool_calls.h), each call's arguments held to its function's
// parameter schema (converted by json_schema.h). The grammar starts where the call's
// JSON starts (after the format's trigger, or with it for Llama 3's '{') and ends at its
// last '}' or ']'. Reading allocates, as compiling a grammar does; the text is never
// trusted (json_reader.h).
#ifndef EMBER_RUNTIME_GRAMMAR_TOOL_GRAMMAR_H_
#define EMBER_RUNTIME_GRAMMAR_TOOL_GRAMMAR_H_

#include <string>
#include <string_view>
#include <vector>

#include "runtime/chat/tool_calls.h"
#include "runtime/grammar/json_reader.h"
#include "runtime/status.h"

namespace ember::grammar {

// Functions a tools list may define.
inline constexpr size_t kMaxTools = 128;

struct ToolDefinition {
  JsonValue function;  // the definition as given (name, description, parameters)
  std::string name;
  std::string
      parameters;  // a JSON Schema of an object, compact ({"type":"object"} if none)
};

// Reads a tools list: [{"type": "function", "function": {"name": ..., "description":
// ..., "parameters": {...}}}, ...] (the type may be left out, or the function's fields
// given directly). Names must be unique and non-empty. `where` names the text in errors.
Status ReadTools(std::string_view text, const char* where,
                 std::vector<ToolDefinition>* tools);

// The tools as a template reads them, each {"type":"function","function":{...}}, compact.
std::string ToolsJson(const std::vector<ToolDefinition>& tools);

// The GBNF of one call (Mistral and Phi-4-mini: a list of calls) to any of `tools` in
// `format`.
Status ToolCallGrammar(const std::vector<ToolDefinition>& tools, ToolCallFormat format,
                       std::string* gbnf);

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_TOOL_GRAMMAR_H_
