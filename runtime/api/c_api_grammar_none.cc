// The C API's grammars in a build without them (EMBER_WITH_GRAMMAR=OFF: bare metal,
// firmware): setting one is refused; there is never one to follow.
#include "runtime/api/c_api_internal.h"

using ember::c_api::NullArgument;
using ember::c_api::Report;

extern "C" {

ember_status ember_session_set_grammar(ember_session* session, const char* gbnf, size_t,
                                       const ember_grammar_options*) {
  if (!session) return NullArgument("session");
  if (!gbnf) return EMBER_OK;  // none to remove
  return Report(ember::Unimplemented(
      "grammars are left out of this build (EMBER_WITH_GRAMMAR=OFF)"));
}

int ember_session_grammar_complete(const ember_session*) { return 1; }

ember_status ember_chat_set_tool_grammar(ember_chat* chat, const char* gbnf, size_t) {
  if (!chat) return NullArgument("chat");
  if (!gbnf) return EMBER_OK;  // none to remove
  return Report(ember::Unimplemented(
      "grammars are left out of this build (EMBER_WITH_GRAMMAR=OFF)"));
}

ember_status ember_chat_set_grammar(ember_chat* chat, const char* gbnf, size_t,
                                    const ember_grammar_options*) {
  if (!chat) return NullArgument("chat");
  if (!gbnf) return EMBER_OK;  // none to remove
  return Report(ember::Unimplemented(
      "grammars are left out of this build (EMBER_WITH_GRAMMAR=OFF)"));
}

}  // extern "C"
