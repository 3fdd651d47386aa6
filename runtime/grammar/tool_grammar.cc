// Tools and the grammar of a call: see tool_grammar.h.
#include "runtime/grammar/tool_grammar.h"

#include <set>
#include <utility>

#include "runtime/grammar/json_schema.h"

namespace ember::grammar {

Status ReadTools(std::string_view text, const char* where,
                 std::vector<ToolDefinition>* tools) {
  tools->clear();
  EMBER_RETURN_IF_ERROR(CheckNesting(text, where));
  JsonValue list;
  const Status read = ReadJson(text, 2 * kMaxSchemaDepth + 8, &list);
  if (!read.ok()) return Status(read.code(), "%s: %s", where, read.message());
  if (!list.is_array()) {
    return InvalidArgument(
        "%s: a list of tools ([{\"type\": \"function\", \"function\": "
        "{...}}, ...]) expected",
        where);
  }
  if (list.size() > kMaxTools) {
    return InvalidArgument("%s: %zu tools, at most %zu", where, list.size(), kMaxTools);
  }
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonValue& tool = list[i];
    if (!tool.is_object())
      return InvalidArgument("%s: tool %zu is not an object", where, i);
    const JsonValue* type = tool.Find("type");
    if (type && !(type->is_string() && type->text() == "function")) {
      std::string written;
      DumpJson(*type, &written);
      return InvalidArgument("%s: tool %zu: type %s is not supported (only \"function\")",
                             where, i, written.c_str());
    }
    const JsonValue* function = tool.Find("function");
    const JsonValue& f = function ? *function : tool;
    if (!f.is_object()) {
      return InvalidArgument("%s: tool %zu: \"function\" is not an object", where, i);
    }
    const JsonValue* name = f.Find("name");
    if (!name || !name->is_string() || name->text().empty()) {
      return InvalidArgument("%s: tool %zu has no \"name\" string", where, i);
    }
    ToolDefinition d;
    d.function = f;
    d.name = name->text();
    std::string quoted;
    DumpJsonString(d.name, &quoted);
    if (!names.insert(d.name).second) {
      return InvalidArgument("%s: two tools are named %s", where, quoted.c_str());
    }
    const JsonValue* parameters = f.Find("parameters");
    if (!parameters || parameters->is_null()) {
      d.parameters = R"({"type":"object"})";
    } else if (!parameters->is_object()) {
      return InvalidArgument("%s: tool %s: \"parameters\" is not a JSON Schema object",
                             where, quoted.c_str());
    } else {
      DumpJson(*parameters, &d.parameters);
    }
    tools->push_back(std::move(d));
  }
  return Status::Ok();
}

std::string ToolsJson(const std::vector<ToolDefinition>& tools) {
  std::string out = "[";
  for (size_t i = 0; i < tools.size(); ++i) {
    out += i ? R"(,{"type":"function","function":)" : R"({"type":"function","function":)";
    DumpJson(tools[i].function, &out);
    out += '}';
  }
  return out + "]";
}

Status ToolCallGrammar(const std::vector<ToolDefinition>& tools, ToolCallFormat format,
                       std::string* gbnf) {
  if (format == ToolCallFormat::kNone) {
    return InvalidArgument(
        "the model's chat template shows no tool-call syntax (Hermes <tool_call> tags, "
        "Llama 3 JSON, Mistral [TOOL_CALLS] or Phi-4-mini <|tool|>)");
  }
  if (tools.empty()) return InvalidArgument("no tools to call");
  const ToolCallSyntax syntax = SyntaxOf(format);
  std::vector<std::pair<std::string, std::string_view>> schemas;
  std::string calls;
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string rule = "f" + std::to_string(i);
    schemas.emplace_back(rule + "-arguments", tools[i].parameters);
    calls += (i ? " | " : "") + rule;
  }
  std::string rules;
  const Status converted = JsonSchemasToRules(schemas, &rules);
  if (!converted.ok()) {
    // The rule's name: f<i>-arguments... names the tool.
    return Status(converted.code(), "tool parameters: %s", converted.message());
  }
  std::string out;
  const std::string open = R"("{" ws "\"name\"" ws ":" ws )";
  if (syntax.list) {
    out += "root ::= ws \"[\" ws call ( ws \",\" ws call )* ws \"]\"\n";
  } else if (syntax.grammar_includes_trigger) {
    out += "root ::= call\n";
  } else {
    out += "root ::= [ \\t\\n]{0,4} call\n";
  }
  out += "call ::= " + open + "( " + calls + " ) ws \"}\"\n";
  for (size_t i = 0; i < tools.size(); ++i) {
    std::string name;
    DumpJsonString(tools[i].name, &name);
    out += "f" + std::to_string(i) + " ::= " + GbnfLiteral(name) + " ws \",\" ws " +
           GbnfLiteral("\"" + std::string(syntax.arguments_key) + "\"") +
           " ws \":\" ws f" + std::to_string(i) + "-arguments\n";
  }
  *gbnf = out + rules;
  return Status::Ok();
}

}  // namespace ember::grammar
