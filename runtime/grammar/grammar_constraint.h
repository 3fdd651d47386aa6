// GrammarConstraint: generation under a grammar. A compiled program, its matcher, the
// vocabulary in byte order and the token mask's tables, built once where the grammar is
// set (on the heap: the grammar's load), then placed in a region of the session's arena
// (GrammarArena: every byte that lives while generating); each token's mask and advance
// make no heap calls.
#ifndef EMBER_RUNTIME_GRAMMAR_GRAMMAR_CONSTRAINT_H_
#define EMBER_RUNTIME_GRAMMAR_GRAMMAR_CONSTRAINT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/generate.h"
#include "runtime/grammar/grammar_arena.h"
#include "runtime/grammar/grammar_matcher.h"
#include "runtime/grammar/token_mask.h"
#include "runtime/text/tokenizer.h"

namespace ember::grammar {

// A grammar any JSON value matches (RFC 8259; whitespace as JSON allows it, at most 20
// characters in a row so that a model cannot pad forever), for `--json`.
extern const char kJsonGrammar[];

class GrammarConstraint {
 public:
  GrammarConstraint() = default;
  GrammarConstraint(const GrammarConstraint&) = delete;  // its parts point at each other
  GrammarConstraint& operator=(const GrammarConstraint&) = delete;

  // Build, then Place in `memory` (`bytes` of it, 16-byte aligned: the session's grammar
  // region) or, when `memory` is null, in a region of its own on the heap (tools, tests).
  Status Init(std::vector<uint32_t> words, const Tokenizer& tokenizer,
              const int32_t* extra_stops = nullptr, size_t num_extra_stops = 0,
              const MatcherLimits& limits = MatcherLimits(), void* memory = nullptr,
              size_t bytes = 0);
  // The grammar's load: `words` (a compiled program, CompileGbnf's) bound, the
  // vocabulary sorted and the mask's tables built, on the heap; `tokenizer` must outlive
  // the constraint. `extra_stops`: ids that end the text besides the tokenizer's stop
  // ids (a chat template's end of turn). Then bytes() tells the region Place needs.
  Status Build(std::vector<uint32_t> words, const Tokenizer& tokenizer,
               const int32_t* extra_stops = nullptr, size_t num_extra_stops = 0,
               const MatcherLimits& limits = MatcherLimits());
  // Moves everything into `memory` and frees the heap copies (null: a region of its
  // own). ResourceExhausted, naming the bytes needed and given, when they do not fit:
  // the constraint is then unusable.
  Status Place(void* memory, size_t bytes);
  // The region's bytes, by part (known after Build).
  const GrammarBytes& bytes() const { return bytes_; }
  // OK when a region of `bytes` at `memory` holds them; else ResourceExhausted naming
  // the bytes needed, by part, and given (no region: `memory` null).
  Status Fits(const void* memory, size_t bytes) const;

  // Back to the beginning of the grammar (a new reply).
  Status Reset() {
    return placed_ ? matcher_.Reset() : InvalidArgument("grammar: not placed");
  }

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
  uint32_t num_rules() const { return program_.num_rules(); }
  size_t order_size() const { return order_.size(); }  // tokens with bytes
  size_t program_bytes() const { return bytes_.program; }
  size_t matcher_bytes() const { return bytes_.matcher; }

 private:
  // Takes each part's room from `arena` in one order (a counting pass, then the real
  // one); copies and repoints only when the whole fits.
  void Lay(GrammarArena* arena, GrammarBytes* bytes);

  std::vector<uint32_t> heap_words_;  // Build's copy of the program, until Place
  std::vector<int32_t> heap_stops_;   // Build's stop ids, until Place
  std::vector<uint64_t> owned_;       // the region, when no arena's was given
  const uint32_t* words_ = nullptr;
  size_t num_words_ = 0;
  Program program_;
  MatcherLimits limits_;
  GrammarMatcher matcher_;
  TokenOrder order_;
  TokenMask mask_;
  uint64_t* matcher_memory_ = nullptr;  // GrammarMatcher::RequiredBytes(limits_)
  uint32_t* bits_ = nullptr;            // order_.mask_words()
  const int32_t* stops_ = nullptr;
  size_t num_stops_ = 0;
  GrammarBytes bytes_;
  bool placed_ = false;
};

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_GRAMMAR_CONSTRAINT_H_
