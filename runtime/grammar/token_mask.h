// The tokens a grammar allows next: each token's bytes tried from the matcher's state,
// as a walk of the vocabulary in byte order so that tokens sharing a prefix share its
// work (a trie walked over a sorted array: each token's common prefix with the one
// before it is where the walk resumes), and a prefix the grammar refuses skips every
// token that starts with it.
#ifndef EMBER_RUNTIME_GRAMMAR_TOKEN_MASK_H_
#define EMBER_RUNTIME_GRAMMAR_TOKEN_MASK_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/grammar/grammar_matcher.h"
#include "runtime/status.h"

namespace ember::grammar {

// A vocabulary in byte order. Built where a grammar is set (it allocates); `bytes(id)`
// must return the bytes token id adds to the text (empty for control tokens, which a
// grammar never allows: the caller allows the end of text when the matcher CanEnd).
class TokenOrder {
 public:
  template <class BytesOf>
  void Build(size_t vocab_size, BytesOf bytes) {
    pieces_.resize(vocab_size);
    for (size_t id = 0; id < vocab_size; ++id) pieces_[id] = bytes(static_cast<int32_t>(id));
    Sort();
  }
  size_t size() const { return order_.size(); }

 private:
  friend class TokenMask;
  void Sort();

  std::vector<std::string_view> pieces_;  // by id
  std::vector<int32_t> order_;            // ids in byte order, empty pieces left out
  std::vector<uint16_t> shared_;          // bytes each shares with the one before it
};

class TokenMask {
 public:
  // Sets allowed[id] to 1 for each token whose bytes the matcher accepts from its state
  // (else 0; `allowed` holds the vocabulary), and *count to their number. The matcher's
  // state is unchanged. ResourceExhausted past one of its limits (a token longer than
  // its saved states hold, an ambiguous grammar's stacks).
  static Status Allowed(GrammarMatcher* matcher, const TokenOrder& order, uint8_t* allowed,
                        size_t* count);
};

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_TOKEN_MASK_H_
