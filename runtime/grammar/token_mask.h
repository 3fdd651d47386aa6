// The tokens a grammar allows next, as bits by token id.
//
// A vocabulary is walked in byte order (TokenOrder) so that tokens sharing a prefix share
// its work, and a prefix the grammar refuses skips every token that starts with it. Most
// of that work does not depend on the parse stacks, only on their tops: TokenMask::Build
// walks the vocabulary once from each class element of the program alone, and sorts the
// tokens into those the element's rule accepts whatever lies below it (allowed), those
// it refuses before its rule can end or whose byte after the rule's end can follow it
// nowhere in the grammar (refused), and the rest (dependent: they run past the rule's
// end into what the stacks below hold). Each step then ORs the allowed bits of the
// stacks' tops and walks only their dependent tokens from the matcher's whole state.
#ifndef EMBER_RUNTIME_GRAMMAR_TOKEN_MASK_H_
#define EMBER_RUNTIME_GRAMMAR_TOKEN_MASK_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/grammar/grammar_arena.h"
#include "runtime/grammar/grammar_matcher.h"
#include "runtime/status.h"

namespace ember::grammar {

// A vocabulary in byte order. Built where a grammar is set (on the heap, then Placed in
// the grammar's arena region); `bytes(id)`
// must return the bytes token id adds to the text (empty for control tokens, which a
// grammar never allows: the caller allows the end of text when the matcher CanEnd).
class TokenOrder {
 public:
  TokenOrder() = default;
  TokenOrder(const TokenOrder&) = delete;  // views of its own heap copies until Place
  TokenOrder& operator=(const TokenOrder&) = delete;

  template <class BytesOf>
  void Build(size_t vocab_size, BytesOf bytes) {
    std::vector<std::string_view> pieces(vocab_size);
    for (size_t id = 0; id < vocab_size; ++id)
      pieces[id] = bytes(static_cast<int32_t>(id));
    Sort(pieces);
  }
  size_t vocab_size() const { return vocab_size_; }
  size_t size() const { return num_tokens_; }  // tokens with bytes
  // Words of a mask of this vocabulary's ids (a bit each).
  size_t mask_words() const { return (vocab_size_ + 31) / 32; }
  // Moves the tables into `arena` and frees the heap copies, when it has room (else
  // only counts their bytes there: arena->fits() is false).
  void Place(GrammarArena* arena);

 private:
  friend class TokenMask;
  void Sort(const std::vector<std::string_view>& pieces);

  // Token i in byte order: its bytes (contiguous, so that walks read them in order),
  // and how many it shares with token i - 1.
  std::string_view sorted(size_t i) const {
    return std::string_view(bytes_ + offsets_[i], offsets_[i + 1] - offsets_[i]);
  }

  // Where Build leaves the tables (Place moves them to an arena).
  struct Heap {
    std::vector<int32_t> order;
    std::vector<char> bytes;
    std::vector<uint32_t> offsets;
    std::vector<uint16_t> shared;
  } heap_;
  size_t vocab_size_ = 0, num_tokens_ = 0, num_bytes_ = 0;
  const int32_t* order_ = nullptr;     // ids in byte order, empty pieces left out
  const char* bytes_ = nullptr;        // the pieces in byte order, end to end
  const uint32_t* offsets_ = nullptr;  // num_tokens_ + 1 offsets into bytes_
  const uint16_t* shared_ = nullptr;   // bytes token i shares with token i - 1
};

class TokenMask {
 public:
  // Tokens longer than this are tried alone at each step (none of the shared
  // vocabularies has one).
  static constexpr size_t kMaxWalk = 256;

  // Precomputes the tables for `program` over `order` (both must outlive the mask) on
  // the heap, walking the vocabulary once per class element: where a grammar is set.
  Status Build(const Program& program, const TokenOrder& order, const MatcherLimits& limits);

  // Sets bit id of `bits` (order.mask_words() words) for each token whose bytes the
  // matcher accepts from its state, clears the others, and sets *count to their number.
  // The matcher's state is unchanged; no heap. ResourceExhausted past one of the
  // matcher's limits.
  Status Allowed(GrammarMatcher* matcher, uint32_t* bits, size_t* count);

  // The same without tables: every token tried from the state (a reference, and what
  // Allowed does while the matcher holds the first bytes of a code point).
  static Status AllowedByWalk(GrammarMatcher* matcher, const TokenOrder& order,
                              uint32_t* bits, size_t* count);

  // The tables: entries (a class element and the frames below it), distinct allowed
  // sets, dependent tokens of all entries together, and their bytes.
  struct Stats {
    size_t entries = 0, allowed_sets = 0, dependent = 0, bytes = 0;
  };
  Stats stats() const;

  TokenMask() = default;
  TokenMask(const TokenMask&) = delete;  // views of its own heap copies until Place
  TokenMask& operator=(const TokenMask&) = delete;
  // Moves the tables into `arena` and frees the heap copies, when it has room (else
  // only counts their bytes there). The mask's order must have been placed first, or
  // stay where it is.
  void Place(GrammarArena* arena);

 private:
  struct Entry {
    uint32_t allowed;            // offset of its allowed bits in words_
    uint32_t dependent, count;   // its dependent tokens: order indices in words_
    uint32_t chain, chain_length;  // the frames below it: return positions in chains_
    bool exact;                    // and nothing below them
  };
  static constexpr size_t kMaxChain = 8;
  static constexpr uint32_t kNoEntry = UINT32_MAX;

  const TokenOrder* order_ = nullptr;
  // Where Build leaves the tables (Place moves them to an arena).
  struct Heap {
    std::vector<uint32_t> entry_of, entry_end, words, chains, candidates, seen;
    std::vector<Entry> entries;
  } heap_;
  void Point();  // the views below over heap_
  // By program element: its entries, entries_[entry_of_[e] .. entry_end_[e]).
  const uint32_t* entry_of_ = nullptr;
  const uint32_t* entry_end_ = nullptr;
  const Entry* entries_ = nullptr;
  const uint32_t* words_ = nullptr;   // allowed bit sets (ids), dependent lists (order)
  const uint32_t* chains_ = nullptr;  // return positions of the frames below each entry
  size_t num_elements_ = 0, num_entries_ = 0, num_words_ = 0, num_chains_ = 0;
  size_t allowed_sets_ = 0;
  // Per step (sized by Build, so Allowed does not allocate).
  uint32_t* candidates_ = nullptr;  // dependent tokens to try: bits by order index
  uint32_t* seen_ = nullptr;        // entries_ applied this step: their step's stamp
  size_t num_candidates_ = 0;
  uint32_t stamp_ = 0;
};

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_TOKEN_MASK_H_
