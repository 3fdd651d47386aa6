// TokenOrder and TokenMask: see token_mask.h.
#include "runtime/grammar/token_mask.h"

#include <algorithm>
#include <cstring>

namespace ember::grammar {

void TokenOrder::Sort() {
  order_.clear();
  for (size_t id = 0; id < pieces_.size(); ++id) {
    if (!pieces_[id].empty()) order_.push_back(static_cast<int32_t>(id));
  }
  std::sort(order_.begin(), order_.end(), [this](int32_t a, int32_t b) {
    return pieces_[a] < pieces_[b] || (pieces_[a] == pieces_[b] && a < b);
  });
  shared_.assign(order_.size(), 0);
  for (size_t i = 1; i < order_.size(); ++i) {
    const std::string_view a = pieces_[order_[i - 1]], b = pieces_[order_[i]];
    size_t n = 0;
    while (n < a.size() && n < b.size() && n < UINT16_MAX && a[n] == b[n]) ++n;
    shared_[i] = static_cast<uint16_t>(n);
  }
}

Status TokenMask::Allowed(GrammarMatcher* m, const TokenOrder& order, uint8_t* allowed,
                          size_t* count) {
  memset(allowed, 0, order.pieces_.size());
  *count = 0;
  // marks[d]: the state after the walk's first d bytes (marks[0]: the matcher's own).
  constexpr size_t kMaxDepth = 256;
  size_t marks[kMaxDepth + 1];
  EMBER_RETURN_IF_ERROR(m->SaveState(&marks[0]));
  size_t depth = 0;           // bytes of the walk's path with saved states
  size_t dead = SIZE_MAX;     // the path's first refused byte (SIZE_MAX: none)
  Status status;
  for (size_t i = 0; i < order.order_.size() && status.ok(); ++i) {
    const int32_t id = order.order_[i];
    const std::string_view bytes = order.pieces_[id];
    const size_t shared = order.shared_[i];
    if (shared > dead) continue;  // starts with the refused prefix
    dead = SIZE_MAX;
    if (shared < depth) {  // back up the path to the prefix it shares
      m->DropStates(marks[shared + 1]);
      depth = shared;
    }
    m->RestoreState(marks[depth]);
    if (bytes.size() > kMaxDepth) {
      status = ResourceExhausted("grammar: token %d has %zu bytes (at most %zu)", id,
                                 bytes.size(), kMaxDepth);
      break;
    }
    for (size_t k = depth; k < bytes.size(); ++k) {
      const Status s = m->AcceptByte(static_cast<uint8_t>(bytes[k]));
      if (s.code() == StatusCode::kInvalidArgument) {
        dead = k;
        break;
      }
      if (!s.ok()) {
        status = s;
        break;
      }
      status = m->SaveState(&marks[k + 1]);
      if (!status.ok()) break;
      depth = k + 1;
    }
    if (status.ok() && dead == SIZE_MAX) {
      allowed[id] = 1;
      ++*count;
    }
  }
  m->RestoreState(marks[0]);
  m->DropStates(marks[0]);
  return status;
}

}  // namespace ember::grammar
