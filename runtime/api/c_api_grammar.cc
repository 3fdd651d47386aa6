// The C API's grammars (ember.h, "Structured output"): a GBNF grammar compiled and set
// up for a session's vocabulary, which ember_generate (c_api.cc) then follows.
#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/api/c_api_internal.h"
#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/grammar_constraint.h"
#include "runtime/grammar/lazy_constraint.h"

using ember::c_api::CheckStructSize;
using ember::c_api::NullArgument;
using ember::c_api::Report;

namespace {

// The GBNF text compiled from rule options->root (NULL options or root: "root").
ember::Status Compile(const char* gbnf, size_t length,
                      const ember_grammar_options* options,
                      std::vector<uint32_t>* words) {
  const char* root = "root";
  if (options) {
    const ember::Status size = CheckStructSize<ember_grammar_options>(
        "ember_grammar_options", options->struct_size,
        offsetof(ember_grammar_options, root) + sizeof(const char*));
    if (!size.ok()) return size;
    if (options->root) root = options->root;
  }
  return ember::grammar::CompileGbnf(std::string_view(gbnf, length), root, words);
}

// Makes `owner` (deleted by `release`; null: none) the chat's replies' grammar, through
// `constraint`; a whole-reply grammar makes a reply it cuts short an error.
ember_status SetChatGrammar(ember_chat* chat, void* owner, void (*release)(void*),
                            bool whole_reply,
                            const ember::TokenConstraint& constraint = {}) {
  chat->grammar = std::unique_ptr<void, void (*)(void*)>(owner, release);
  chat->constraint = constraint;
  chat->whole_reply = owner != nullptr && whole_reply;
  chat->chat.set_constraint(owner != nullptr ? &chat->constraint : nullptr);
  if (owner == nullptr && chat->session->grammar_chat == chat) {
    chat->session->grammar_chat = nullptr;
  }
  return EMBER_OK;
}

// Forgets the grammar the session's arena region holds (the session's or a chat's).
void ReleaseRegion(ember_session* session) {
  session->grammar.reset();
  session->constraint = ember::TokenConstraint();
  session->grammar_complete = true;
  if (session->grammar_chat != nullptr) {
    SetChatGrammar(session->grammar_chat, nullptr, nullptr, false);
  }
}

// Builds the grammar for the session's vocabulary (on the heap: its load), then, when it
// fits, places it in the session's arena region in place of the grammar held there.
// When it does not, the grammar held there stays.
ember::Status BuildInRegion(ember_session* session, std::vector<uint32_t> words,
                            const int32_t* stops, size_t num_stops,
                            ember::grammar::GrammarConstraint* grammar) {
  const ember::Session& s = session->session;
  EMBER_RETURN_IF_ERROR(
      grammar->Build(std::move(words), s.model().tokenizer(), stops, num_stops));
  EMBER_RETURN_IF_ERROR(grammar->Fits(s.grammar_memory(), s.grammar_bytes()));
  ReleaseRegion(session);
  return grammar->Place(s.grammar_memory(), s.grammar_bytes());
}

}  // namespace

extern "C" {

ember_status ember_grammar_bytes(const ember_model* model, const char* gbnf,
                                 size_t length, const ember_grammar_options* options,
                                 size_t* bytes) {
  if (!model) return NullArgument("model");
  if (!gbnf) return NullArgument("gbnf");
  if (!bytes) return NullArgument("bytes");
  std::vector<uint32_t> words;
  ember::Status status = Compile(gbnf, length, options, &words);
  if (!status.ok()) return Report(status);
  const ember::Model& m = *model->model;
  // A chat's end-of-turn ids too: the most a session or a chat of it places.
  const ember::ChatProgramTables& t = m.chat_template().tables();
  ember::grammar::GrammarConstraint grammar;
  status = grammar.Build(std::move(words), m.tokenizer(), t.end_of_turn_ids,
                         t.num_end_of_turn_ids);
  if (!status.ok()) return Report(status);
  *bytes = grammar.bytes().total;
  return EMBER_OK;
}

ember_status ember_session_set_grammar(ember_session* session, const char* gbnf,
                                       size_t length,
                                       const ember_grammar_options* options) {
  if (!session) return NullArgument("session");
  if (!gbnf) {
    if (session->grammar_chat == nullptr) ReleaseRegion(session);
    return EMBER_OK;
  }
  std::vector<uint32_t> words;
  ember::Status status = Compile(gbnf, length, options, &words);
  if (!status.ok()) return Report(status);
  auto constraint = std::make_unique<ember::grammar::GrammarConstraint>();
  status = BuildInRegion(session, std::move(words), nullptr, 0, constraint.get());
  if (!status.ok()) return Report(status);
  session->constraint = constraint->AsTokenConstraint();
  session->grammar = std::unique_ptr<void, void (*)(void*)>(
      constraint.release(),
      [](void* p) { delete static_cast<ember::grammar::GrammarConstraint*>(p); });
  session->grammar_complete = true;
  return EMBER_OK;
}

int ember_session_grammar_complete(const ember_session* session) {
  return session && !session->grammar_complete ? 0 : 1;
}

ember_status ember_chat_set_tool_grammar(ember_chat* chat, const char* gbnf,
                                         size_t length) {
  if (!chat) return NullArgument("chat");
  if (!gbnf) return SetChatGrammar(chat, nullptr, nullptr, false);
  const ember::ToolCallFormat format = chat->chat.tool_call_format();
  if (format == ember::ToolCallFormat::kNone) {
    return Report(ember::InvalidArgument(
        "ember_chat_set_tool_grammar: set the tools first (ember_chat_set_tools)"));
  }
  std::vector<uint32_t> words;
  ember::Status status = Compile(gbnf, length, nullptr, &words);
  if (!status.ok()) return Report(status);
  // The grammar and the trigger that starts it, in one owner.
  struct ToolGrammar {
    ember::grammar::GrammarConstraint grammar;
    ember::grammar::LazyConstraint lazy;
  };
  auto made = std::make_unique<ToolGrammar>();
  const ember::Model& model = chat->session->session.model();
  const ember::ChatProgramTables& t = model.chat_template().tables();
  status = BuildInRegion(chat->session, std::move(words), t.end_of_turn_ids,
                         t.num_end_of_turn_ids, &made->grammar);
  if (!status.ok()) return Report(status);
  const ember::ToolCallSyntax syntax = ember::SyntaxOf(format);
  const ember::grammar::LazyTrigger trigger = ember::grammar::ToolCallTrigger(syntax);
  status = made->lazy.Init(&made->grammar, trigger, model.tokenizer());
  if (!status.ok()) return Report(status);
  const ember::TokenConstraint constraint = made->lazy.AsTokenConstraint();
  chat->session->grammar_chat = chat;
  return SetChatGrammar(
      chat, made.release(), [](void* p) { delete static_cast<ToolGrammar*>(p); }, false,
      constraint);
}

ember_status ember_chat_set_grammar(ember_chat* chat, const char* gbnf, size_t length,
                                    const ember_grammar_options* options) {
  if (!chat) return NullArgument("chat");
  if (!gbnf) return SetChatGrammar(chat, nullptr, nullptr, false);
  std::vector<uint32_t> words;
  ember::Status status = Compile(gbnf, length, options, &words);
  if (!status.ok()) return Report(status);
  auto made = std::make_unique<ember::grammar::GrammarConstraint>();
  const ember::Model& model = chat->session->session.model();
  const ember::ChatProgramTables& t = model.chat_template().tables();
  status = BuildInRegion(chat->session, std::move(words), t.end_of_turn_ids,
                         t.num_end_of_turn_ids, made.get());
  if (!status.ok()) return Report(status);
  const ember::TokenConstraint constraint = made->AsTokenConstraint();
  chat->session->grammar_chat = chat;
  return SetChatGrammar(
      chat, made.release(),
      [](void* p) { delete static_cast<ember::grammar::GrammarConstraint*>(p); }, true,
      constraint);
}

}  // extern "C"
