// NgramLookup: see ngram_lookup.h.
#include "runtime/speculative/ngram_lookup.h"

#include <cstring>

namespace ember {

size_t NgramLookup::TableEntries(size_t max_context) {
  size_t entries = 64;
  while (entries < 4 * max_context && entries < (size_t{1} << 30)) entries *= 2;
  return entries;
}

void NgramLookup::Clear() {
  if (table_) memset(table_, 0, (mask_ + 1) * sizeof(uint32_t));
  indexed_ = 0;
}

// FNV-1a over the ids, with the length mixed in: the n-grams of every n share a table.
uint64_t NgramLookup::Hash(const int32_t* tokens, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ n;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<uint32_t>(tokens[i]);
    h *= 0x100000001b3ull;
  }
  return h ^ (h >> 29);
}

size_t NgramLookup::Propose(const int32_t* history, size_t n_history, int32_t pending,
                            uint32_t ngram, size_t max, int32_t* out) {
  if (!table_ || ngram == 0 || max == 0 || n_history == 0) return 0;
  if (ngram > kMaxLookupNgram) ngram = kMaxLookupNgram;
  // The context is history then pending. The n-grams ending at positions end in
  // [indexed_, n_history) point at `end`, where their continuation starts. A history
  // cut short since (a caller's rollback: speculation itself indexes only accepted
  // tokens) may have overwritten earlier occurrences: index it all again.
  if (indexed_ > n_history) Clear();
  for (size_t end = indexed_ > 0 ? indexed_ : 1; end < n_history; ++end) {
    for (size_t n = 1; n <= ngram && n <= end; ++n) {
      table_[Slot(history + end - n, n)] = static_cast<uint32_t>(end + 1);
    }
  }
  indexed_ = n_history;
  // The query: the context's last n tokens, pending last.
  int32_t query[kMaxLookupNgram];
  const size_t longest = ngram < n_history + 1 ? ngram : n_history + 1;
  for (size_t n = longest; n >= 1; --n) {
    memcpy(query, history + n_history - (n - 1), (n - 1) * sizeof(int32_t));
    query[n - 1] = pending;
    const uint32_t entry = table_[Slot(query, n)];
    if (entry == 0) continue;
    const size_t end = entry - 1;  // the match is history[end - n, end)
    if (end < n || end >= n_history ||
        memcmp(history + end - n, query, n * sizeof(int32_t)) != 0) {
      continue;  // a collision, or a position rolled back since
    }
    size_t count = 0;
    for (; count < max && end + count <= n_history; ++count) {
      out[count] = end + count < n_history ? history[end + count] : pending;
    }
    return count;
  }
  return 0;
}

}  // namespace ember
