// TokenMask::Build: the tables of allowed, refused and dependent tokens per class element
// (see token_mask.h; the per-step mask is token_mask.cc).
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/grammar/token_mask.h"
#include "runtime/grammar/token_walker.h"

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

}  // namespace

Status TokenMask::Build(const Program& program, const TokenOrder& order,
                        const MatcherLimits& limits) {
  order_ = nullptr;  // until the tables are whole
  heap_ = Heap();
  heap_.entry_of.assign(program.num_elements(), kNoEntry);
  heap_.entries.clear();
  heap_.words.clear();
  allowed_sets_ = 0;
  const size_t words = order.mask_words();
  heap_.candidates.assign((order.size() + 31) / 32, 0);
  const std::vector<uint32_t> owner = OwnerOfElements(program);
  const std::vector<std::vector<uint32_t>> returns = ReturnsOfRules(program, owner);
  heap_.chains.clear();

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
  std::vector<uint32_t> allowed(words), dependent, all(order.size()), chain;
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint32_t>(i);

  // Walks `tokens` (order indices, ascending) from element e over frames returning to
  // `chain`, then nothing: each token the walk accepts joins `allowed`; one it refuses
  // goes to `dependent` if the rule under the last frame (`rule`) could end before the
  // refused byte and the bytes from there on can follow `rule` somewhere in the grammar.
  // `coarse`: a token can follow when its first byte can (a later walk per return
  // place resolves the rest: where a rule returns to many places, the whole check
  // would walk most of a vocabulary through all of them at once).
  const auto classify = [&](uint32_t e, uint32_t rule,
                            const std::vector<uint32_t>& tokens, bool whole, bool coarse,
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
    TokenWalker walker(&m);
    EMBER_RETURN_IF_ERROR(walker.Begin());
    Status status;
    for (size_t n = 0; n < tokens.size(); ++n) {
      const uint32_t i = tokens[n];
      const int32_t id = order.order_[i];
      const std::string_view bytes = order.sorted(i);
      TokenWalker::Result r;
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
          while (n + 1 < tokens.size() && order.shared_[tokens[n + 1]] > walker.dead())
            ++n;
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
      if (memcmp(heap_.words.data() + at->second, allowed.data(), words * 4) == 0) {
        entry.allowed = at->second;
        break;
      }
    }
    if (entry.allowed == kNoEntry) {
      entry.allowed = static_cast<uint32_t>(heap_.words.size());
      heap_.words.insert(heap_.words.end(), allowed.begin(), allowed.end());
      allowed_at.emplace(key, entry.allowed);
      ++allowed_sets_;
    }
    entry.dependent = static_cast<uint32_t>(heap_.words.size());
    entry.count = static_cast<uint32_t>(depends_on.size());
    heap_.words.insert(heap_.words.end(), depends_on.begin(), depends_on.end());
    entry.chain = static_cast<uint32_t>(heap_.chains.size());
    entry.chain_length = static_cast<uint32_t>(chain.size());
    entry.exact = exact;
    heap_.chains.insert(heap_.chains.end(), chain.begin(), chain.end());
    heap_.entries.push_back(entry);
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
    heap_.entry_of[e] = static_cast<uint32_t>(heap_.entries.size());
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
  heap_.entry_end.resize(program.num_elements());
  for (uint32_t e = 0; e < program.num_elements(); ++e) {
    if (heap_.entry_of[e] == kNoEntry) continue;
    uint32_t next = e + 1;
    while (next < program.num_elements() && heap_.entry_of[next] == kNoEntry) ++next;
    heap_.entry_end[e] = next < program.num_elements()
                             ? heap_.entry_of[next]
                             : static_cast<uint32_t>(heap_.entries.size());
  }
  heap_.seen.assign(heap_.entries.size(), 0);
  stamp_ = 0;
  Point();
  order_ = &order;
  return Status::Ok();
}

}  // namespace ember::grammar
