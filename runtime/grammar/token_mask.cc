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

void TokenOrder::Sort() {
  order_.clear();
  for (size_t id = 0; id < pieces_.size(); ++id) {
    if (!pieces_[id].empty()) order_.push_back(static_cast<int32_t>(id));
  }
  std::sort(order_.begin(), order_.end(), [this](int32_t a, int32_t b) {
    return pieces_[a] < pieces_[b] || (pieces_[a] == pieces_[b] && a < b);
  });
  bytes_.clear();
  offsets_.assign(1, 0);
  shared_.assign(order_.size(), 0);
  for (size_t i = 0; i < order_.size(); ++i) {
    bytes_.append(pieces_[order_[i]].data(), pieces_[order_[i]].size());
    offsets_.push_back(static_cast<uint32_t>(bytes_.size()));
    if (i > 0) {
      shared_[i] = static_cast<uint16_t>(
          std::min<size_t>(SharedPrefix(sorted(i - 1), sorted(i)), UINT16_MAX));
    }
  }
}

Status TokenMask::AllowedByWalk(GrammarMatcher* m, const TokenOrder& order,
                                uint32_t* bits, size_t* count) {
  memset(bits, 0, order.mask_words() * 4);
  *count = 0;
  TokenWalker walker(m);
  EMBER_RETURN_IF_ERROR(walker.Begin());
  Status status;
  for (size_t i = 0; i < order.order_.size(); ++i) {
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
    std::fill(seen_.begin(), seen_.end(), 0);
    stamp_ = 1;
  }
  size_t first = SIZE_MAX, last = 0;  // the candidates' words
  for (size_t s = 0; s < m->num_stacks(); ++s) {
    // The element's entry whose frames the stack's are.
    const uint32_t top = m->top(s);
    uint32_t e = entry_of_[top];
    while (e < entry_end_[top] &&
           !m->ReturnsTo(s, chains_.data() + entries_[e].chain, entries_[e].chain_length,
                         entries_[e].exact)) {
      ++e;
    }
    if (e == entry_end_[top]) {
      // Frames the grammar's references cannot push (a program no compiler wrote):
      // the tables do not hold.
      for (uint32_t c = 0; c < candidates_.size(); ++c) candidates_[c] = 0;
      return AllowedByWalk(m, *order_, bits, count);
    }
    const Entry& entry = entries_[e];
    if (seen_[e] == stamp_) continue;
    seen_[e] = stamp_;
    const uint32_t* allowed = words_.data() + entry.allowed;
    for (size_t i = 0; i < words; ++i) bits[i] |= allowed[i];
    const uint32_t* dependent = words_.data() + entry.dependent;
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
  s.entries = entries_.size();
  s.allowed_sets = allowed_sets_;
  for (const Entry& e : entries_) s.dependent += e.count;
  s.bytes = words_.size() * 4 + entries_.size() * sizeof(Entry) + entry_of_.size() * 4 +
            chains_.size() * 4 + entry_end_.size() * 4 + candidates_.size() * 4 +
            seen_.size() * 4;
  return s;
}

}  // namespace ember::grammar
