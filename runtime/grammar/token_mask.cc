// TokenOrder and TokenMask: see token_mask.h.
#include "runtime/grammar/token_mask.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

namespace ember::grammar {
namespace {

// The rule each element belongs to.
std::vector<uint32_t> OwnerOfElements(const Program& p) {
  std::vector<uint32_t> owner(p.num_elements(), 0);
  for (uint32_t r = 0; r < p.num_rules(); ++r) {
    uint32_t count = 0;
    const uint32_t* alts = p.alternatives(r, &count);
    for (uint32_t a = 0; a < count; ++a) {
      for (uint32_t e = alts[a];; ++e) {
        owner[e] = r;
        if (KindOf(p.element(e)) == ElementKind::kEnd) break;
      }
    }
  }
  return owner;
}

// Where each rule's frame can return to (sorted positions; kRootEnd: the end of the
// text). A frame is pushed with the position after a reference that does not end its
// alternative; a reference that does passes its own rule's returns on.
constexpr uint32_t kRootEnd = UINT32_MAX;

std::vector<std::vector<uint32_t>> ReturnsOfRules(const Program& p,
                                                  const std::vector<uint32_t>& owner) {
  std::vector<std::vector<uint32_t>> ret(p.num_rules());
  ret[p.root()].push_back(kRootEnd);
  const auto add = [](std::vector<uint32_t>* to, uint32_t v) {
    const auto at = std::lower_bound(to->begin(), to->end(), v);
    if (at != to->end() && *at == v) return false;
    to->insert(at, v);
    return true;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t e = 0; e < p.num_elements(); ++e) {
      const uint32_t element = p.element(e);
      if (KindOf(element) != ElementKind::kRule) continue;
      std::vector<uint32_t>* to = &ret[ValueOf(element)];
      if (KindOf(p.element(e + 1)) != ElementKind::kEnd) {
        changed |= add(to, e + 1);
      } else if (ValueOf(element) != owner[e]) {
        const std::vector<uint32_t> from = ret[owner[e]];
        for (const uint32_t v : from) changed |= add(to, v);
      }
    }
  }
  return ret;
}

size_t SharedPrefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Tries tokens in byte order from a matcher's state: the path of the last token's
// bytes keeps a saved state per byte, and the next token resumes where it leaves the
// path. A refused prefix is remembered, so tokens that start with it are refused
// without work.
class Walker {
 public:
  struct Result {
    bool accepted = false;
    bool same = false;  // refused for the previous token's refused prefix: not walked
    bool alone = false; // longer than kMaxWalk: tried alone (no can_end record)
  };

  explicit Walker(GrammarMatcher* m) : m_(m) {}
  Status Begin() {
    depth_ = 0;
    dead_ = SIZE_MAX;
    previous_ = {};
    can_end_[0] = m_->CanEnd();
    return m_->SaveState(&marks_[0]);
  }
  void End() {
    m_->RestoreState(marks_[0]);
    m_->DropStates(marks_[0]);
  }
  // The refused byte of the last token walked (SIZE_MAX: none), and whether the
  // matcher could end after its first d bytes (d <= that byte, or its length).
  size_t dead() const { return dead_; }
  bool can_end_after(size_t d) const { return can_end_[d]; }

  // `shared`: the bytes it shares with the token tried before it, when the caller
  // knows (SIZE_MAX: compared here).
  Status Try(std::string_view bytes, Result* result, size_t shared = SIZE_MAX) {
    *result = Result();
    if (shared == SIZE_MAX) shared = SharedPrefix(previous_, bytes);
    previous_ = bytes;
    if (dead_ != SIZE_MAX && shared > dead_) {
      result->same = true;
      return Status::Ok();
    }
    dead_ = SIZE_MAX;
    if (bytes.size() > TokenMask::kMaxWalk) return TryAlone(bytes, result);
    if (shared < depth_) {  // back up the path to the prefix it shares
      m_->DropStates(marks_[shared + 1]);
      depth_ = shared;
    }
    m_->RestoreState(marks_[depth_]);
    for (size_t k = depth_; k < bytes.size(); ++k) {
      const GrammarMatcher::Step step = m_->FeedByte(static_cast<uint8_t>(bytes[k]));
      if (step == GrammarMatcher::Step::kRefused) {
        dead_ = k;
        return Status::Ok();
      }
      if (step == GrammarMatcher::Step::kFailed) return m_->error();
      EMBER_RETURN_IF_ERROR(m_->SaveState(&marks_[k + 1]));
      can_end_[k + 1] = m_->CanEnd();
      depth_ = k + 1;
    }
    result->accepted = true;
    return Status::Ok();
  }

 private:
  Status TryAlone(std::string_view bytes, Result* result) {
    if (depth_ > 0) m_->DropStates(marks_[1]);
    depth_ = 0;
    previous_ = {};
    m_->RestoreState(marks_[0]);
    result->alone = true;
    result->accepted = true;
    for (const char c : bytes) {
      const GrammarMatcher::Step step = m_->FeedByte(static_cast<uint8_t>(c));
      if (step == GrammarMatcher::Step::kRefused) {
        result->accepted = false;
        break;
      }
      if (step == GrammarMatcher::Step::kFailed) return m_->error();
    }
    m_->RestoreState(marks_[0]);
    return Status::Ok();
  }

  GrammarMatcher* m_;
  size_t depth_ = 0, dead_ = SIZE_MAX;
  std::string_view previous_;
  size_t marks_[TokenMask::kMaxWalk + 1];
  bool can_end_[TokenMask::kMaxWalk + 1];
};

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

Status TokenMask::AllowedByWalk(GrammarMatcher* m, const TokenOrder& order, uint32_t* bits,
                                size_t* count) {
  memset(bits, 0, order.mask_words() * 4);
  *count = 0;
  Walker walker(m);
  EMBER_RETURN_IF_ERROR(walker.Begin());
  Status status;
  for (size_t i = 0; i < order.order_.size(); ++i) {
    const int32_t id = order.order_[i];
    Walker::Result r;
    status = walker.Try(order.sorted(i), &r, i > 0 ? order.shared_[i] : 0);
    if (!status.ok()) break;
    if (r.accepted) bits[id >> 5] |= 1u << (id & 31);
  }
  walker.End();
  *count = CountBits(bits, order.mask_words());
  return status;
}

Status TokenMask::Build(const Program& program, const TokenOrder& order,
                        const MatcherLimits& limits) {
  order_ = &order;
  entry_of_.assign(program.num_elements(), kNoEntry);
  entries_.clear();
  words_.clear();
  allowed_sets_ = 0;
  const size_t words = order.mask_words();
  candidates_.assign((order.size() + 31) / 32, 0);
  const std::vector<uint32_t> owner = OwnerOfElements(program);
  const std::vector<std::vector<uint32_t>> returns = ReturnsOfRules(program, owner);
  chains_.clear();

  std::vector<uint64_t> memory((GrammarMatcher::RequiredBytes(limits) + 7) / 8);
  GrammarMatcher m;
  EMBER_RETURN_IF_ERROR(m.Init(&program, limits, memory.data(), memory.size() * 8));
  // What may follow a rule's end: its return positions with nothing below them.
  std::vector<uint32_t> return_offsets = {0}, return_positions;
  for (const std::vector<uint32_t>& r : returns) {
    return_positions.insert(return_positions.end(), r.begin(), r.end());
    return_offsets.push_back(static_cast<uint32_t>(return_positions.size()));
  }
  const GrammarMatcher::Returns follow_returns = {owner.data(), return_offsets.data(),
                                                  return_positions.data()};
  std::vector<uint64_t> follow_memory(memory.size());
  GrammarMatcher follow;
  EMBER_RETURN_IF_ERROR(
      follow.Init(&program, limits, follow_memory.data(), follow_memory.size() * 8));
  std::unordered_multimap<uint64_t, uint32_t> allowed_at;  // distinct allowed sets
  std::vector<uint32_t> allowed(words), dependent, all(order.order_.size()), chain;
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint32_t>(i);

  // Walks `tokens` (order indices, ascending) from element e over frames returning to
  // `chain`, then nothing: each token the walk accepts joins `allowed`; one it refuses
  // goes to `dependent` if the rule under the last frame (`rule`) could end before the
  // refused byte and the bytes from there on can follow `rule` somewhere in the grammar.
  // `coarse`: a token can follow when its first byte can (a later walk per return
  // place resolves the rest: where a rule returns to many places, the whole check
  // would walk most of a vocabulary through all of them at once).
  const auto classify = [&](uint32_t e, uint32_t rule, const std::vector<uint32_t>& tokens,
                            bool whole, bool coarse,
                            std::vector<uint32_t>* depends_on) -> Status {
    EMBER_RETURN_IF_ERROR(m.StartAt(e, chain.data(), chain.size()));
    size_t follow_mark = 0;
    EMBER_RETURN_IF_ERROR(follow.StartAfter(rule, &follow_returns));
    EMBER_RETURN_IF_ERROR(follow.SaveState(&follow_mark));
    bool first_follows[256];  // the bytes that can come first after the rule
    for (int b = 0; b < 256; ++b) {
      follow.RestoreState(follow_mark);
      first_follows[b] =
          follow.FeedByte(static_cast<uint8_t>(b)) == GrammarMatcher::Step::kAccepted;
    }
    // The last refused text and its refused byte: texts in byte order that share
    // that much of it are refused without a walk.
    std::string_view refused_text;
    size_t refused_at = 0;
    const auto can_follow = [&](std::string_view rest) {
      if (!first_follows[static_cast<uint8_t>(rest[0])]) return false;
      if (coarse) return true;
      if (!refused_text.empty() && SharedPrefix(refused_text, rest) > refused_at) {
        return false;
      }
      follow.RestoreState(follow_mark);
      for (size_t k = 0; k < rest.size(); ++k) {
        if (follow.FeedByte(static_cast<uint8_t>(rest[k])) !=
            GrammarMatcher::Step::kAccepted) {
          refused_text = rest;
          refused_at = k;
          return false;
        }
      }
      return true;
    };
    depends_on->clear();
    Walker walker(&m);
    EMBER_RETURN_IF_ERROR(walker.Begin());
    Status status;
    for (size_t n = 0; n < tokens.size(); ++n) {
      const uint32_t i = tokens[n];
      const int32_t id = order.order_[i];
      const std::string_view bytes = order.sorted(i);
      Walker::Result r;
      // The whole vocabulary: each token after the one before it.
      status = walker.Try(bytes, &r, whole ? (i > 0 ? order.shared_[i] : 0) : SIZE_MAX);
      if (!status.ok()) break;
      if (r.alone) {
        depends_on->push_back(i);
      } else if (r.accepted) {
        allowed[id >> 5] |= 1u << (id & 31);
      } else {
        bool ends = false, depends = false;
        for (size_t j = 1; j <= walker.dead() && !depends; ++j) {
          if (!walker.can_end_after(j)) continue;
          ends = true;
          depends = can_follow(bytes.substr(j));
        }
        if (depends) {
          depends_on->push_back(i);
        } else if (whole && !ends) {
          // The rule cannot end inside the refused prefix: no token that starts with
          // it runs past the rule either. Skip them (in byte order, they come next).
          while (n + 1 < tokens.size() && order.shared_[tokens[n + 1]] > walker.dead()) ++n;
        }
      }
    }
    walker.End();
    follow.DropStates(follow_mark);
    return status;
  };
  // Stores an entry of element e: `allowed` (shared when equal to another's), the
  // dependent tokens, `chain` (exact: nothing below its last frame).
  const auto store = [&](const std::vector<uint32_t>& depends_on, bool exact) {
    Entry entry;
    uint64_t key = 14695981039346656037ull;  // FNV-1a over the words
    for (const uint32_t w : allowed) key = (key ^ w) * 1099511628211ull;
    entry.allowed = kNoEntry;
    for (auto [at, end] = allowed_at.equal_range(key); at != end; ++at) {
      if (memcmp(words_.data() + at->second, allowed.data(), words * 4) == 0) {
        entry.allowed = at->second;
        break;
      }
    }
    if (entry.allowed == kNoEntry) {
      entry.allowed = static_cast<uint32_t>(words_.size());
      words_.insert(words_.end(), allowed.begin(), allowed.end());
      allowed_at.emplace(key, entry.allowed);
      ++allowed_sets_;
    }
    entry.dependent = static_cast<uint32_t>(words_.size());
    entry.count = static_cast<uint32_t>(depends_on.size());
    words_.insert(words_.end(), depends_on.begin(), depends_on.end());
    entry.chain = static_cast<uint32_t>(chains_.size());
    entry.chain_length = static_cast<uint32_t>(chain.size());
    entry.exact = exact;
    chains_.insert(chains_.end(), chain.begin(), chain.end());
    entries_.push_back(entry);
  };
  // Extends `chain` from rule `rule` while its frames can return to one place only;
  // returns the rule under the last frame.
  const auto extend = [&](uint32_t rule) {
    while (returns[rule].size() == 1 && returns[rule][0] != kRootEnd &&
           chain.size() < kMaxChain) {
      chain.push_back(returns[rule][0]);
      rule = owner[returns[rule][0]];
    }
    return rule;
  };

  std::vector<uint32_t> base_allowed(words), base_dependent, extended;
  for (uint32_t e = 0; e < program.num_elements(); ++e) {
    if (KindOf(program.element(e)) != ElementKind::kClass) continue;
    // The frames below the element while they can return to one place only: the
    // tables then hold for those frames, and only a token running past them depends
    // on the stack.
    entry_of_[e] = static_cast<uint32_t>(entries_.size());
    chain.clear();
    const uint32_t rule = extend(owner[e]);
    std::fill(allowed.begin(), allowed.end(), 0);
    const bool by_return = returns[rule].size() >= 2 && chain.size() < kMaxChain;
    EMBER_RETURN_IF_ERROR(classify(e, rule, all, true, by_return, &base_dependent));
    if (!by_return || base_dependent.empty()) {
      store(base_dependent, false);
      continue;
    }
    // Where the rule's frame can return to several places: an entry for each (each
    // step finds its stacks' by their frames), whose walk resolves the dependent
    // tokens that place decides.
    base_allowed = allowed;
    const size_t base_length = chain.size();
    for (const uint32_t to : returns[rule]) {
      chain.resize(base_length);
      allowed = base_allowed;
      uint32_t last = rule;
      if (to != kRootEnd) {
        chain.push_back(to);
        last = extend(owner[to]);
      }
      EMBER_RETURN_IF_ERROR(classify(e, last, base_dependent, false, false, &extended));
      if (to == kRootEnd) extended.clear();  // nothing follows the end of the text
      store(extended, to == kRootEnd);
    }
  }
  entry_end_.resize(program.num_elements());
  for (uint32_t e = 0; e < program.num_elements(); ++e) {
    if (entry_of_[e] == kNoEntry) continue;
    uint32_t next = e + 1;
    while (next < program.num_elements() && entry_of_[next] == kNoEntry) ++next;
    entry_end_[e] = next < program.num_elements() ? entry_of_[next]
                                                  : static_cast<uint32_t>(entries_.size());
  }
  seen_.assign(entries_.size(), 0);
  stamp_ = 0;
  return Status::Ok();
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
    Walker walker(m);
    status = walker.Begin();
    const bool walking = status.ok();
    for (size_t w = first; w < last; ++w) {
      for (uint32_t word = candidates_[w]; word != 0 && status.ok(); word &= word - 1) {
        const size_t i = w * 32 + static_cast<size_t>(__builtin_ctz(word));
        const int32_t id = order_->order_[i];
        if ((bits[id >> 5] >> (id & 31)) & 1) continue;
        Walker::Result r;
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
            chains_.size() * 4 + entry_end_.size() * 4 +
            candidates_.size() * 4 + seen_.size() * 4;
  return s;
}

}  // namespace ember::grammar
