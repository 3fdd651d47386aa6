// GrammarConstraint: see grammar_constraint.h.
#include "runtime/grammar/grammar_constraint.h"

#include <utility>

namespace ember::grammar {

const char kJsonGrammar[] = R"gbnf(# Any JSON value (RFC 8259).
root    ::= ws value ws
value   ::= object | array | string | number | "true" | "false" | "null"
object  ::= "{" ws ( member ( ws "," ws member )* ws )? "}"
member  ::= string ws ":" ws value
array   ::= "[" ws ( value ( ws "," ws value )* ws )? "]"
string  ::= "\"" ( [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
number  ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?
ws      ::= [ \t\n\r]{0,20}
)gbnf";

Status GrammarConstraint::Init(std::vector<uint32_t> words, const Tokenizer& tokenizer,
                               const int32_t* extra_stops, size_t num_extra_stops,
                               const MatcherLimits& limits) {
  words_ = std::move(words);
  EMBER_RETURN_IF_ERROR(program_.Bind(words_.data(), words_.size()));
  const size_t bytes = GrammarMatcher::RequiredBytes(limits);
  memory_.assign((bytes + 7) / 8, 0);
  EMBER_RETURN_IF_ERROR(matcher_.Init(&program_, limits, memory_.data(), bytes));
  const uint32_t vocab = tokenizer.vocab_size();
  // The bytes a token adds in the middle of a text (after a token that is never BOS).
  order_.Build(vocab, [&](int32_t id) { return tokenizer.Decode(int32_t(vocab), id); });
  EMBER_RETURN_IF_ERROR(mask_.Build(program_, order_, limits));
  bits_.assign(order_.mask_words(), 0);
  stops_.clear();
  for (uint32_t id = 0; id < vocab; ++id) {
    if (tokenizer.IsStop(static_cast<int32_t>(id))) stops_.push_back(static_cast<int32_t>(id));
  }
  for (size_t i = 0; i < num_extra_stops; ++i) {
    if (extra_stops[i] >= 0 && static_cast<uint32_t>(extra_stops[i]) < vocab) {
      stops_.push_back(extra_stops[i]);
    }
  }
  return Status::Ok();
}

Status GrammarConstraint::Allowed(const uint32_t** bits) {
  size_t count = 0;
  EMBER_RETURN_IF_ERROR(mask_.Allowed(&matcher_, bits_.data(), &count));
  if (matcher_.CanEnd()) {
    for (const int32_t id : stops_) bits_[id >> 5] |= 1u << (id & 31);
    count += stops_.size();
  }
  if (count == 0) {
    return InvalidArgument(
        "grammar: no token of the vocabulary continues the text here, and it cannot end");
  }
  *bits = bits_.data();
  return Status::Ok();
}

Status GrammarConstraint::Accept(int32_t id, std::string_view text) {
  size_t mark = 0;
  EMBER_RETURN_IF_ERROR(matcher_.SaveState(&mark));
  Status status;
  for (size_t i = 0; i < text.size() && status.ok(); ++i) {
    status = matcher_.AcceptByte(static_cast<uint8_t>(text[i]));
  }
  if (!status.ok()) {
    matcher_.RestoreState(mark);
    matcher_.DropStates(mark);
    return Status(status.code(), "grammar: token %d does not continue the text: %s", id,
                  status.message());
  }
  matcher_.DropStates(mark);
  return Status::Ok();
}

TokenConstraint GrammarConstraint::AsTokenConstraint() {
  TokenConstraint c;
  c.self = this;
  c.allowed = [](void* self, const uint32_t** bits) {
    return static_cast<GrammarConstraint*>(self)->Allowed(bits);
  };
  c.accept = [](void* self, int32_t id, std::string_view text) {
    return static_cast<GrammarConstraint*>(self)->Accept(id, text);
  };
  c.can_end = [](const void* self) {
    return static_cast<const GrammarConstraint*>(self)->CanEnd();
  };
  c.reset = [](void* self) { return static_cast<GrammarConstraint*>(self)->Reset(); };
  return c;
}

}  // namespace ember::grammar
