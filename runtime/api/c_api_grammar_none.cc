// The C API's grammars in a build without them (EMBER_WITH_GRAMMAR=OFF: bare metal,
// firmware): setting one (GBNF or a JSON Schema) is refused; there is never one to
// follow.
#include "runtime/api/c_api_internal.h"

using ember::c_api::NullArgument;
using ember::c_api::Report;

namespace {

ember_status LeftOut() {
  return Report(ember::Unimplemented(
      "grammars are left out of this build (EMBER_WITH_GRAMMAR=OFF)"));
}

}  // namespace

extern "C" {

ember_status ember_grammar_bytes(const ember_model* model, const char* gbnf, size_t,
                                 const ember_grammar_options*, size_t* bytes) {
  if (!model) return NullArgument("model");
  if (!gbnf) return NullArgument("gbnf");
  if (!bytes) return NullArgument("bytes");
  return LeftOut();
}

ember_status ember_session_set_grammar(ember_session* session, const char* gbnf, size_t,
                                       const ember_grammar_options*) {
  if (!session) return NullArgument("session");
  if (!gbnf) return EMBER_OK;  // none to remove
  return LeftOut();
}

int ember_session_grammar_complete(const ember_session*) { return 1; }

ember_status ember_chat_set_tool_grammar(ember_chat* chat, const char* gbnf, size_t) {
  if (!chat) return NullArgument("chat");
  if (!gbnf) return EMBER_OK;  // none to remove
  return LeftOut();
}

ember_status ember_chat_set_grammar(ember_chat* chat, const char* gbnf, size_t,
                                    const ember_grammar_options*) {
  if (!chat) return NullArgument("chat");
  if (!gbnf) return EMBER_OK;  // none to remove
  return LeftOut();
}

// JSON Schemas: the converter is the grammar room's, left out with it.
ember_status ember_json_schema_to_grammar(const char* schema, size_t, char*,
                                          size_t* gbnf_length) {
  if (!schema) return NullArgument("schema");
  if (!gbnf_length) return NullArgument("gbnf_length");
  return LeftOut();
}

ember_status ember_json_schema_bytes(const ember_model* model, const char* schema, size_t,
                                     size_t* bytes) {
  if (!model) return NullArgument("model");
  if (!schema) return NullArgument("schema");
  if (!bytes) return NullArgument("bytes");
  return LeftOut();
}

ember_status ember_session_set_json_schema(ember_session* session, const char* schema,
                                           size_t) {
  if (!session) return NullArgument("session");
  if (!schema) return EMBER_OK;  // none to remove
  return LeftOut();
}

ember_status ember_chat_set_json_schema(ember_chat* chat, const char* schema, size_t) {
  if (!chat) return NullArgument("chat");
  if (!schema) return EMBER_OK;  // none to remove
  return LeftOut();
}

ember_status ember_tool_grammar(const ember_model* model, const char* tools_json, size_t,
                                char*, size_t* gbnf_length) {
  if (!model) return NullArgument("model");
  if (!tools_json) return NullArgument("tools_json");
  if (!gbnf_length) return NullArgument("gbnf_length");
  return LeftOut();
}

ember_status ember_chat_constrain_tools(ember_chat* chat) {
  if (!chat) return NullArgument("chat");
  return LeftOut();
}

}  // extern "C"
