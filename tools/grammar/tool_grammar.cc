// Tools and the grammar of a call: see tool_grammar.h.
#include "tools/grammar/tool_grammar.h"

#include <set>
#include <string_view>
#include <utility>

#include "runtime/grammar/json_schema.h"

namespace ember::tools {

using grammar::CheckNesting;
using grammar::GbnfLiteral;

Status ReadTools(const std::string& text, const std::string& where,
                 std::vector<ToolDefinition>* tools) {
  tools->clear();
  EMBER_RETURN_IF_ERROR(CheckNesting(text, where.c_str()));
  const OrderedJson list = OrderedJson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (list.is_discarded()) return InvalidArgument("%s: not valid JSON", where.c_str());
  if (!list.is_array()) {
    return InvalidArgument("%s: a list of tools ([{\"type\": \"function\", \"function\": "
                           "{...}}, ...]) expected",
                           where.c_str());
  }
  if (list.size() > kMaxTools) {
    return InvalidArgument("%s: %zu tools, at most %zu", where.c_str(), list.size(),
                           kMaxTools);
  }
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const OrderedJson& tool = list[i];
    if (!tool.is_object()) {
      return InvalidArgument("%s: tool %zu is not an object", where.c_str(), i);
    }
    const auto type = tool.find("type");
    if (type != tool.end() && *type != "function") {
      return InvalidArgument("%s: tool %zu: type %s is not supported (only \"function\")",
                             where.c_str(), i, type->dump().c_str());
    }
    const auto function = tool.find("function");
    const OrderedJson& f = function != tool.end() ? *function : tool;
    if (!f.is_object()) {
      return InvalidArgument("%s: tool %zu: \"function\" is not an object", where.c_str(), i);
    }
    const auto name = f.find("name");
    if (name == f.end() || !name->is_string() || name->get<std::string>().empty()) {
      return InvalidArgument("%s: tool %zu has no \"name\" string", where.c_str(), i);
    }
    ToolDefinition d;
    d.function = f;
    d.name = name->get<std::string>();
    if (!names.insert(d.name).second) {
      return InvalidArgument("%s: two tools are named %s", where.c_str(), name->dump().c_str());
    }
    const auto parameters = f.find("parameters");
    if (parameters == f.end() || parameters->is_null()) {
      d.parameters = OrderedJson{{"type", "object"}};
    } else if (!parameters->is_object()) {
      return InvalidArgument("%s: tool %s: \"parameters\" is not a JSON Schema object",
                             where.c_str(), name->dump().c_str());
    } else {
      d.parameters = *parameters;
    }
    tools->push_back(std::move(d));
  }
  return Status::Ok();
}

std::string ToolsJson(const std::vector<ToolDefinition>& tools) {
  OrderedJson list = OrderedJson::array();
  for (const ToolDefinition& t : tools) {
    list.push_back(OrderedJson{{"type", "function"}, {"function", t.function}});
  }
  return list.dump();
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
  // Each function's parameters as JSON text (the keys in their order), which the
  // runtime's converter reads.
  std::vector<std::string> texts;
  for (const ToolDefinition& t : tools) texts.push_back(t.parameters.dump());
  std::vector<std::pair<std::string, std::string_view>> schemas;
  std::string calls;
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string rule = "f" + std::to_string(i);
    schemas.emplace_back(rule + "-arguments", texts[i]);
    calls += (i ? " | " : "") + rule;
  }
  std::string rules;
  const Status converted = grammar::JsonSchemasToRules(schemas, &rules);
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
    const std::string rule = "f" + std::to_string(i);
    out += rule + " ::= " + GbnfLiteral(Json(tools[i].name).dump()) + " ws \",\" ws " +
           GbnfLiteral("\"" + std::string(syntax.arguments_key) + "\"") + " ws \":\" ws " +
           rule + "-arguments\n";
  }
  *gbnf = out + rules;
  return Status::Ok();
}

}  // namespace ember::tools
