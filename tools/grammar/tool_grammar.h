// Tools (OpenAI-style function definitions) for `ember chat --tools` and the C API: the
// definitions read and checked, and the grammar of a call to any of them in a family's
// syntax (runtime/chat/tool_calls.h), each call's arguments constrained to its
// function's parameter schema (converted by runtime/grammar/json_schema.h from its
// JSON text). The grammar starts where the call's JSON starts (after
// the format's trigger, or with it for Llama 3's '{') and ends at its last '}' or ']'.
#ifndef EMBER_TOOLS_GRAMMAR_TOOL_GRAMMAR_H_
#define EMBER_TOOLS_GRAMMAR_TOOL_GRAMMAR_H_

#include <string>
#include <vector>

#include "runtime/chat/tool_calls.h"
#include "runtime/status.h"
#include "tools/util/json_util.h"

namespace ember::tools {

// Tools keep their keys' order: a parameter schema's properties are written in it.
using OrderedJson = nlohmann::ordered_json;

// Functions a tools list may define.
inline constexpr size_t kMaxTools = 128;

struct ToolDefinition {
  OrderedJson function;  // the definition as given (name, description, parameters)
  std::string name;
  OrderedJson parameters;  // a JSON Schema of an object ({"type": "object"} when none given)
};

// Reads a tools list: [{"type": "function", "function": {"name": ..., "description":
// ..., "parameters": {...}}}, ...] (the type may be left out, or the function's fields
// given directly). Names must be unique and non-empty. `where` names the text in errors.
Status ReadTools(const std::string& text, const std::string& where,
                 std::vector<ToolDefinition>* tools);

// The tools as a template reads them, each {"type": "function", "function": {...}}.
std::string ToolsJson(const std::vector<ToolDefinition>& tools);

// The GBNF of one call (Mistral: a list of calls) to any of `tools` in `format`.
Status ToolCallGrammar(const std::vector<ToolDefinition>& tools, ToolCallFormat format,
                       std::string* gbnf);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_GRAMMAR_TOOL_GRAMMAR_H_
