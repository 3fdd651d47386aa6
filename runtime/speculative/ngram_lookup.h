// NgramLookup: prompt-lookup drafting. The continuation of the latest earlier place
// where the context's last n tokens (n from the longest asked down to 1) occurred, read
// from the context itself: no second model. A hash table in caller memory (the session's
// arena) maps each n-gram to the position after its latest occurrence; a hit is checked
// against the tokens, so collisions and stale entries (positions rolled back) only miss.
#ifndef EMBER_RUNTIME_SPECULATIVE_NGRAM_LOOKUP_H_
#define EMBER_RUNTIME_SPECULATIVE_NGRAM_LOOKUP_H_

#include <cstddef>
#include <cstdint>

namespace ember {

inline constexpr uint32_t kMaxLookupNgram = 8;

class NgramLookup {
 public:
  // Table entries for a context of max_context positions: a power of two at least 4
  // per position (each position enters up to kMaxLookupNgram n-grams; the latest win).
  static size_t TableEntries(size_t max_context);

  NgramLookup() = default;
  // `table`: TableEntries(max_context) entries of caller memory, for the lifetime.
  NgramLookup(uint32_t* table, size_t entries) : table_(table), mask_(entries - 1) {}

  // Forget everything (a new context, or one shifted: positions moved).
  void Clear();
  // Up to `max` drafted tokens into `out` (returns how many): what followed the latest
  // earlier occurrence of the context's last n tokens (n = ngram, then shorter), the
  // context being `history` (the cached tokens) then `pending` (the one sampled after
  // them). Indexes the history it has not seen (all of it again after a rollback).
  size_t Propose(const int32_t* history, size_t n_history, int32_t pending,
                 uint32_t ngram, size_t max, int32_t* out);

 private:
  static uint64_t Hash(const int32_t* tokens, size_t n);
  size_t Slot(const int32_t* tokens, size_t n) const { return Hash(tokens, n) & mask_; }

  uint32_t* table_ = nullptr;  // position after the n-gram + 1; 0: empty
  size_t mask_ = 0;
  size_t indexed_ = 0;  // n-grams ending before this position are in the table
};

}  // namespace ember

#endif  // EMBER_RUNTIME_SPECULATIVE_NGRAM_LOOKUP_H_
