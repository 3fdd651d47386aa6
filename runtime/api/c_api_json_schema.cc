// The C API's JSON Schemas and tools (ember_grammar.h): a schema, or the tools' call,
// converted to GBNF by the grammar room (runtime/grammar/json_schema.h, tool_grammar.h),
// then set or measured as GBNF is (c_api_grammar.cc).
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/api/c_api_internal.h"
#include "runtime/grammar/json_schema.h"
#include "runtime/grammar/tool_grammar.h"

using ember::c_api::NullArgument;
using ember::c_api::Report;

namespace {

// The schema's GBNF into *gbnf; the C API's messages call it "the schema".
ember::Status Convert(const char* schema, size_t length, std::string* gbnf) {
  return ember::grammar::JsonSchemaTextToGbnf(std::string_view(schema, length),
                                              "the schema", gbnf);
}

// The grammar of a call to the tools in the format of `model`'s template.
ember::Status ToolGrammar(const ember::Model& model, std::string_view tools,
                          std::string* gbnf) {
  const ember::ToolCallFormat format =
      model.chat_template().empty()
          ? ember::ToolCallFormat::kNone
          : ember::DetectToolCallFormat(model.chat_template().tables());
  std::vector<ember::grammar::ToolDefinition> definitions;
  EMBER_RETURN_IF_ERROR(ember::grammar::ReadTools(tools, "the tools", &definitions));
  return ember::grammar::ToolCallGrammar(definitions, format, gbnf);
}

// Writes `text` as the converters' C functions do (see ember_json_schema_to_grammar).
ember_status WriteGrammar(const char* function, const std::string& text, char* gbnf,
                          size_t* gbnf_length) {
  const size_t capacity = *gbnf_length;
  if (capacity < text.size() + 1) {
    *gbnf_length = text.size() + 1;
    return Report(
        ember::ResourceExhausted("%s: the grammar needs %zu bytes, the buffer has %zu",
                                 function, text.size() + 1, capacity));
  }
  memcpy(gbnf, text.c_str(), text.size() + 1);
  *gbnf_length = text.size();
  return EMBER_OK;
}

}  // namespace

extern "C" {

ember_status ember_json_schema_to_grammar(const char* schema, size_t length, char* gbnf,
                                          size_t* gbnf_length) {
  if (!schema) return NullArgument("schema");
  if (!gbnf_length) return NullArgument("gbnf_length");
  if (!gbnf && *gbnf_length != 0) return NullArgument("gbnf");
  std::string text;
  const ember::Status status = Convert(schema, length, &text);
  if (!status.ok()) return Report(status);
  return WriteGrammar("ember_json_schema_to_grammar", text, gbnf, gbnf_length);
}

ember_status ember_tool_grammar(const ember_model* model, const char* tools_json,
                                size_t length, char* gbnf, size_t* gbnf_length) {
  if (!model) return NullArgument("model");
  if (!tools_json) return NullArgument("tools_json");
  if (!gbnf_length) return NullArgument("gbnf_length");
  if (!gbnf && *gbnf_length != 0) return NullArgument("gbnf");
  std::string text;
  const ember::Status status =
      ToolGrammar(*model->model, std::string_view(tools_json, length), &text);
  if (!status.ok()) return Report(status);
  return WriteGrammar("ember_tool_grammar", text, gbnf, gbnf_length);
}

ember_status ember_chat_constrain_tools(ember_chat* chat) {
  if (!chat) return NullArgument("chat");
  if (chat->chat.tool_call_format() == ember::ToolCallFormat::kNone) {
    return Report(ember::InvalidArgument(
        "ember_chat_constrain_tools: set the tools first (ember_chat_set_tools)"));
  }
  std::string gbnf;
  const ember::Status status =
      ToolGrammar(chat->session->session.model(), chat->chat.tools_json(), &gbnf);
  if (!status.ok()) return Report(status);
  return ember_chat_set_tool_grammar(chat, gbnf.data(), gbnf.size());
}

ember_status ember_json_schema_bytes(const ember_model* model, const char* schema,
                                     size_t length, size_t* bytes) {
  if (!model) return NullArgument("model");
  if (!schema) return NullArgument("schema");
  if (!bytes) return NullArgument("bytes");
  std::string gbnf;
  const ember::Status status = Convert(schema, length, &gbnf);
  if (!status.ok()) return Report(status);
  return ember_grammar_bytes(model, gbnf.data(), gbnf.size(), nullptr, bytes);
}

ember_status ember_session_set_json_schema(ember_session* session, const char* schema,
                                           size_t length) {
  if (!session) return NullArgument("session");
  if (!schema) return ember_session_set_grammar(session, nullptr, 0, nullptr);
  std::string gbnf;
  const ember::Status status = Convert(schema, length, &gbnf);
  if (!status.ok()) return Report(status);
  return ember_session_set_grammar(session, gbnf.data(), gbnf.size(), nullptr);
}

ember_status ember_chat_set_json_schema(ember_chat* chat, const char* schema,
                                        size_t length) {
  if (!chat) return NullArgument("chat");
  if (!schema) return ember_chat_set_grammar(chat, nullptr, 0, nullptr);
  std::string gbnf;
  const ember::Status status = Convert(schema, length, &gbnf);
  if (!status.ok()) return Report(status);
  return ember_chat_set_grammar(chat, gbnf.data(), gbnf.size(), nullptr);
}

}  // extern "C"
