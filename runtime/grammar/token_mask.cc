// TokenOrder and TokenMask: see token_mask.h.
#include "runtime/grammar/token_mask.h"

#include <algorithm>
#include <cstring>

#include "runtime/grammar/token_walker.h"

namespace ember::grammar {
namespace {

size_t CountBits(const uint32_t* bits, size_t words) {
  // SWAR: a popcount instruction is not in every target's baseline (a libgcc call).
  size_t n = 0;
  for (size_t i = 0; i < words; ++i) {
    uint32_t v = bits[i] - ((bits[i] >> 1) & 0x55555555u);
    v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
    n += (((v + (v >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
  }
  return n;
}

}  // namespace

namespace {

// Copies `src` to `to`, room taken for it from a grammar's arena.
template <class T>
T* PlaceCopy(const std::vector<T>& src, T* to) {
  if (to != nullptr && !src.empty()) memcpy(to, src.data(), src.size() * sizeof(T));
  return to;
}

}  // namespace

void TokenOrder::Sort(const std::vector<std::string_view>& pieces) {
  Heap& h = heap_;
  vocab_size_ = pieces.size();
  h.order.clear();
  for (size_t id = 0; id < pieces.size(); ++id) {
    if (!pieces[id].empty()) h.order.push_back(static_cast<int32_t>(id));
  }
  std::sort(h.order.begin(), h.order.end(), [&pieces](int32_t a, int32_t b) {
    return pieces[a] < pieces[b] || (pieces[a] == pieces[b] && a < b);
  });
  h.bytes.clear();
  h.offsets.assign(1, 0);
  h.shared.assign(h.order.size(), 0);
  for (size_t i = 0; i < h.order.size(); ++i) {
    const std::string_view piece = pieces[h.order[i]];
    h.bytes.insert(h.bytes.end(), piece.begin(), piece.end());
    h.offsets.push_back(static_cast<uint32_t>(h.bytes.size()));
  }
  num_tokens_ = h.order.size();
  num_bytes_ = h.bytes.size();
  order_ = h.order.data();
  bytes_ = h.bytes.data();
  offsets_ = h.offsets.data();
  shared_ = h.shared.data();
  for (size_t i = 1; i < num_tokens_; ++i) {
    h.shared[i] = static_cast<uint16_t>(
        std::min<size_t>(SharedPrefix(sorted(i - 1), sorted(i)), UINT16_MAX));
  }
}

void TokenOrder::Place(GrammarArena* arena) {
  int32_t* order = arena->Take<int32_t>(num_tokens_);
  char* bytes = arena->Take<char>(num_bytes_);
  uint32_t* offsets = arena->Take<uint32_t>(num_tokens_ + 1);
  uint16_t* shared = arena->Take<uint16_t>(num_tokens_);
  if (!arena->fits() || heap_.offsets.empty()) return;
  order_ = PlaceCopy(heap_.order, order);
  bytes_ = PlaceCopy(heap_.bytes, bytes);
  offsets_ = PlaceCopy(heap_.offsets, offsets);
  shared_ = PlaceCopy(heap_.shared, shared);
  heap_ = Heap();
}

void TokenMask::Point() {
  entry_of_ = heap_.entry_of.data();
  entry_end_ = heap_.entry_end.data();
  entries_ = heap_.entries.data();
  words_ = heap_.words.data();
  chains_ = heap_.chains.data();
  candidates_ = heap_.candidates.data();
  seen_ = heap_.seen.data();
  num_elements_ = heap_.entry_of.size();
  num_entries_ = heap_.entries.size();
  num_words_ = heap_.words.size();
  num_chains_ = heap_.chains.size();
  num_candidates_ = heap_.candidates.size();
}

void TokenMask::Place(GrammarArena* arena) {
  uint32_t* entry_of = arena->Take<uint32_t>(num_elements_);
  uint32_t* entry_end = arena->Take<uint32_t>(num_elements_);
  Entry* entries = arena->Take<Entry>(num_entries_);
  uint32_t* words = arena->Take<uint32_t>(num_words_);
  uint32_t* chains = arena->Take<uint32_t>(num_chains_);
  uint32_t* candidates = arena->Take<uint32_t>(num_candidates_);
  uint32_t* seen = arena->Take<uint32_t>(num_entries_);
  if (!arena->fits() || order_ == nullptr) return;
  entry_of_ = PlaceCopy(heap_.entry_of, entry_of);
  entry_end_ = PlaceCopy(heap_.entry_end, entry_end);
  entries_ = PlaceCopy(heap_.entries, entries);
  words_ = PlaceCopy(heap_.words, words);
  chains_ = PlaceCopy(heap_.chains, chains);
  candidates_ = PlaceCopy(heap_.candidates, candidates);
  seen_ = PlaceCopy(heap_.seen, seen);
  heap_ = Heap();
}

Status TokenMask::AllowedByWalk(GrammarMatcher* m, const TokenOrder& order,
                                uint32_t* bits, size_t* count) {
  memset(bits, 0, order.mask_words() * 4);
  *count = 0;
  TokenWalker walker(m);
  EMBER_RETURN_IF_ERROR(walker.Begin());
  Status status;
  for (size_t i = 0; i < order.size(); ++i) {
    const int32_t id = order.order_[i];
    TokenWalker::Result r;
    status = walker.Try(order.sorted(i), &r, i > 0 ? order.shared_[i] : 0);
    if (!status.ok()) break;
    if (r.accepted) bits[id >> 5] |= 1u << (id & 31);
  }
  walker.End();
  *count = CountBits(bits, order.mask_words());
  return status;
}

Status TokenMask::Allowed(GrammarMatcher* m, uint32_t* bits, size_t* count) {
  if (order_ == nullptr) return InvalidArgument("grammar: the token mask is not built");
  if (m->holding()) return AllowedByWalk(m, *order_, bits, count);
  const size_t words = order_->mask_words();
  memset(bits, 0, words * 4);
  if (++stamp_ == 0) {  // wrapped: forget every stamp
    std::fill(seen_, seen_ + num_entries_, 0);
    stamp_ = 1;
  }
  size_t first = SIZE_MAX, last = 0;  // the candidates' words
  for (size_t s = 0; s < m->num_stacks(); ++s) {
    // The element's entry whose frames the stack's are.
    const uint32_t top = m->top(s);
    uint32_t e = entry_of_[top];
    while (e < entry_end_[top] &&
           !m->ReturnsTo(s, chains_ + entries_[e].chain, entries_[e].chain_length,
                         entries_[e].exact)) {
      ++e;
    }
    if (e == entry_end_[top]) {
      // Frames the grammar's references cannot push (a program no compiler wrote):
      // the tables do not hold.
      for (size_t c = 0; c < num_candidates_; ++c) candidates_[c] = 0;
      return AllowedByWalk(m, *order_, bits, count);
    }
    const Entry& entry = entries_[e];
    if (seen_[e] == stamp_) continue;
    seen_[e] = stamp_;
    const uint32_t* allowed = words_ + entry.allowed;
    for (size_t i = 0; i < words; ++i) bits[i] |= allowed[i];
    const uint32_t* dependent = words_ + entry.dependent;
    for (uint32_t i = 0; i < entry.count; ++i) {
      candidates_[dependent[i] >> 5] |= 1u << (dependent[i] & 31);
    }
    if (entry.count > 0) {  // sorted: the words from its first to its last
      first = std::min<size_t>(first, dependent[0] >> 5);
      last = std::max<size_t>(last, (dependent[entry.count - 1] >> 5) + 1);
    }
  }
  Status status;
  if (last > 0) {
    // The dependent tokens not yet allowed, in byte order, from the whole state; the
    // candidates are cleared as they are read, whatever happens.
    TokenWalker walker(m);
    status = walker.Begin();
    const bool walking = status.ok();
    for (size_t w = first; w < last; ++w) {
      for (uint32_t word = candidates_[w]; word != 0 && status.ok(); word &= word - 1) {
        const size_t i = w * 32 + static_cast<size_t>(__builtin_ctz(word));
        const int32_t id = order_->order_[i];
        if ((bits[id >> 5] >> (id & 31)) & 1) continue;
        TokenWalker::Result r;
        status = walker.Try(order_->sorted(i), &r);
        if (r.accepted) bits[id >> 5] |= 1u << (id & 31);
      }
      candidates_[w] = 0;
    }
    if (walking) walker.End();
  }
  *count = CountBits(bits, words);
  return status;
}

TokenMask::Stats TokenMask::stats() const {
  Stats s;
  s.entries = num_entries_;
  s.allowed_sets = allowed_sets_;
  for (size_t e = 0; e < num_entries_; ++e) s.dependent += entries_[e].count;
  s.bytes = num_words_ * 4 + num_entries_ * sizeof(Entry) + num_elements_ * 8 +
            num_chains_ * 4 + num_candidates_ * 4 + num_entries_ * 4;
  return s;
}

}  // namespace ember::grammar
