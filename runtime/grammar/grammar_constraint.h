// GrammarConstraint: generation under a grammar. A compiled program, its matcher, the
// vocabulary in byte order and the token mask's tables, set up once where the grammar
// is set (that allocates); then each token's mask and advance make no heap calls.
#ifndef EMBER_RUNTIME_GRAMMAR_GRAMMAR_CONSTRAINT_H_
#define EMBER_RUNTIME_GRAMMAR_GRAMMAR_CONSTRAINT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/generate.h"
#include "runtime/grammar/grammar_matcher.h"
#include "runtime/grammar/token_mask.h"
#include "runtime/text/tokenizer.h"

namespace ember::grammar {

// A grammar any JSON value matches (RFC 8259; whitespace as JSON allows it, at most 20
// characters in a row so that a model cannot pad forever), for `--json`.
extern const char kJsonGrammar[];

class GrammarConstraint {
 public:
  // `words`: a compiled program (CompileGbnf's); `tokenizer` must outlive the
  // constraint. `extra_stops`: ids that end the text besides the tokenizer's stop ids
  // (a chat template's end of turn).
  Status Init(std::vector<uint32_t> words, const Tokenizer& tokenizer,
              const int32_t* extra_stops = nullptr, size_t num_extra_stops = 0,
              const MatcherLimits& limits = MatcherLimits());
  // Back to the beginning of the grammar (a new reply).
  Status Reset() { return matcher_.Reset(); }

  // The tokens allowed next (bits by id; the stop ids where the text can end).
  Status Allowed(const uint32_t** bits);
  // InvalidArgument when the grammar does not allow `text` (a token the mask did not
  // allow): the state is then as it was.
  Status Accept(int32_t id, std::string_view text);
  bool CanEnd() const { return matcher_.CanEnd(); }
  // Whether the text is a whole sentence that nothing can continue.
  bool Finished() const { return matcher_.CanEnd() && matcher_.num_stacks() == 0; }
  // This constraint for Generate and Chat (which must not outlive it).
  TokenConstraint AsTokenConstraint();

  const TokenMask& mask() const { return mask_; }
  size_t program_bytes() const { return words_.size() * 4; }
  size_t matcher_bytes() const { return memory_.size() * 8; }

 private:
  std::vector<uint32_t> words_;
  Program program_;
  std::vector<uint64_t> memory_;
  GrammarMatcher matcher_;
  TokenOrder order_;
  TokenMask mask_;
  std::vector<uint32_t> bits_;
  std::vector<int32_t> stops_;
};

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_GRAMMAR_CONSTRAINT_H_
