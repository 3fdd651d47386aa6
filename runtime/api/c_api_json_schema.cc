// The C API's JSON Schemas (ember_grammar.h): a schema converted to GBNF by the grammar
// room (runtime/grammar/json_schema.h), then set or measured as GBNF is (c_api_grammar.cc).
#include <cstring>
#include <string>
#include <string_view>

#include "runtime/api/c_api_internal.h"
#include "runtime/grammar/json_schema.h"

using ember::c_api::NullArgument;
using ember::c_api::Report;

namespace {

// The schema's GBNF into *gbnf; the C API's messages call it "the schema".
ember::Status Convert(const char* schema, size_t length, std::string* gbnf) {
  return ember::grammar::JsonSchemaTextToGbnf(std::string_view(schema, length),
                                              "the schema", gbnf);
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
  const size_t capacity = *gbnf_length;
  if (capacity < text.size() + 1) {
    *gbnf_length = text.size() + 1;
    return Report(ember::ResourceExhausted(
        "ember_json_schema_to_grammar: the grammar needs %zu bytes, the buffer has %zu",
        text.size() + 1, capacity));
  }
  memcpy(gbnf, text.c_str(), text.size() + 1);
  *gbnf_length = text.size();
  return EMBER_OK;
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
