// GrammarConstraint: see grammar_constraint.h.
#include "runtime/grammar/grammar_constraint.h"

#include <cstring>
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
                               const MatcherLimits& limits, void* memory, size_t bytes) {
  EMBER_RETURN_IF_ERROR(
      Build(std::move(words), tokenizer, extra_stops, num_extra_stops, limits));
  return Place(memory, bytes);
}

Status GrammarConstraint::Build(std::vector<uint32_t> words, const Tokenizer& tokenizer,
                                const int32_t* extra_stops, size_t num_extra_stops,
                                const MatcherLimits& limits) {
  placed_ = false;
  std::vector<uint64_t>().swap(owned_);
  limits_ = limits;
  heap_words_ = std::move(words);
  EMBER_RETURN_IF_ERROR(program_.Bind(heap_words_.data(), heap_words_.size()));
  if (GrammarMatcher::RequiredBytes(limits) == 0) {
    return InvalidArgument("grammar: the matcher's limits are zero or too large");
  }
  const uint32_t vocab = tokenizer.vocab_size();
  // The bytes a token adds in the middle of a text (after a token that is never BOS).
  order_.Build(vocab, [&](int32_t id) { return tokenizer.Decode(int32_t(vocab), id); });
  EMBER_RETURN_IF_ERROR(mask_.Build(program_, order_, limits));
  heap_stops_.clear();
  for (uint32_t id = 0; id < vocab; ++id) {
    if (tokenizer.IsStop(static_cast<int32_t>(id))) {
      heap_stops_.push_back(static_cast<int32_t>(id));
    }
  }
  for (size_t i = 0; i < num_extra_stops; ++i) {
    if (extra_stops[i] >= 0 && static_cast<uint32_t>(extra_stops[i]) < vocab) {
      heap_stops_.push_back(extra_stops[i]);
    }
  }
  GrammarArena count;
  Lay(&count, &bytes_);
  if (count.overflowed()) return ResourceExhausted("grammar: its tables are too large");
  return Status::Ok();
}

void GrammarConstraint::Lay(GrammarArena* arena, GrammarBytes* bytes) {
  const size_t matcher_words = (GrammarMatcher::RequiredBytes(limits_) + 7) / 8;
  size_t mark = arena->used();
  const auto part = [&](size_t* to) {
    *to = arena->used() - mark;
    mark = arena->used();
  };
  uint32_t* words = arena->Take<uint32_t>(heap_words_.size());
  part(&bytes->program);
  uint64_t* memory = arena->Take<uint64_t>(matcher_words);
  part(&bytes->matcher);
  order_.Place(arena);
  part(&bytes->vocabulary);
  mask_.Place(arena);
  part(&bytes->tables);
  uint32_t* bits = arena->Take<uint32_t>(order_.mask_words());
  int32_t* stops = arena->Take<int32_t>(heap_stops_.size());
  part(&bytes->mask);
  bytes->total = arena->used();
  if (!arena->fits()) return;
  if (!heap_words_.empty()) memcpy(words, heap_words_.data(), heap_words_.size() * 4);
  if (!heap_stops_.empty()) memcpy(stops, heap_stops_.data(), heap_stops_.size() * 4);
  memset(memory, 0, matcher_words * 8);
  memset(bits, 0, order_.mask_words() * 4);
  words_ = words;
  num_words_ = heap_words_.size();
  stops_ = stops;
  num_stops_ = heap_stops_.size();
  bits_ = bits;
  matcher_memory_ = memory;
}

Status GrammarConstraint::Fits(const void* memory, size_t bytes) const {
  const GrammarBytes& need = bytes_;
  if (memory != nullptr && need.total <= bytes) return Status::Ok();
  return ResourceExhausted(
      "grammar: needs %zu bytes of the session's arena (program %zu, matcher %zu, "
      "vocabulary %zu, mask tables %zu, mask %zu); the session planned %zu "
      "(grammar_bytes in its options)",
      need.total, need.program, need.matcher, need.vocabulary, need.tables, need.mask,
      memory != nullptr ? bytes : 0);
}

Status GrammarConstraint::Place(void* memory, size_t bytes) {
  if (placed_ || heap_words_.empty()) {
    return InvalidArgument("grammar: Place needs a grammar built and not yet placed");
  }
  const GrammarBytes& need = bytes_;
  if (memory == nullptr) {  // a region of its own, aligned within a little slack
    owned_.assign(need.total / 8 + 3, 0);
    const uintptr_t at = reinterpret_cast<uintptr_t>(owned_.data());
    const uintptr_t a = GrammarArena::kAlignment;
    memory = owned_.data() + ((a - at % a) % a) / 8;
    bytes = need.total;
  } else if (reinterpret_cast<uintptr_t>(memory) % GrammarArena::kAlignment != 0) {
    return InvalidArgument("grammar: its region is not aligned to %zu bytes",
                           GrammarArena::kAlignment);
  }
  EMBER_RETURN_IF_ERROR(Fits(memory, bytes));
  GrammarArena arena(memory, bytes);
  GrammarBytes placed;
  Lay(&arena, &placed);
  if (!arena.fits()) return Internal("grammar: its layout changed between two passes");
  std::vector<uint32_t>().swap(heap_words_);
  std::vector<int32_t>().swap(heap_stops_);
  EMBER_RETURN_IF_ERROR(program_.Bind(words_, num_words_));
  EMBER_RETURN_IF_ERROR(matcher_.Init(&program_, limits_, matcher_memory_,
                                      GrammarMatcher::RequiredBytes(limits_)));
  placed_ = true;
  return Status::Ok();
}

Status GrammarConstraint::Allowed(const uint32_t** bits) {
  if (!placed_) return InvalidArgument("grammar: the constraint is not placed");
  size_t count = 0;
  EMBER_RETURN_IF_ERROR(mask_.Allowed(&matcher_, bits_, &count));
  if (matcher_.CanEnd()) {
    for (size_t i = 0; i < num_stops_; ++i)
      bits_[stops_[i] >> 5] |= 1u << (stops_[i] & 31);
    count += num_stops_;
  }
  if (count == 0) {
    return InvalidArgument(
        "grammar: no token of the vocabulary continues the text here, and it cannot end");
  }
  *bits = bits_;
  return Status::Ok();
}

Status GrammarConstraint::Accept(int32_t id, std::string_view text) {
  if (!placed_) return InvalidArgument("grammar: the constraint is not placed");
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
