// IrGrammar and EmitProgram: see grammar_ir.h.
#include <algorithm>

#include "runtime/grammar/grammar_ir.h"
#include "runtime/grammar/grammar_program.h"

namespace ember::grammar {

uint32_t IrGrammar::Class(std::vector<std::pair<uint32_t, uint32_t>> ranges, bool negated) {
  std::sort(ranges.begin(), ranges.end());
  CharClass c;
  c.negated = negated;
  for (const auto& r : ranges) {  // merged where they overlap or touch
    if (!c.ranges.empty() && r.first <= c.ranges.back().second + 1) {
      c.ranges.back().second = std::max(c.ranges.back().second, r.second);
    } else {
      c.ranges.push_back(r);
    }
  }
  auto [it, added] = class_ids_.emplace(c, static_cast<uint32_t>(classes_.size()));
  if (added) classes_.push_back(c);
  return it->second;
}

uint32_t IrGrammar::Rule(const std::string& name, size_t where) {
  auto [it, added] = names_.emplace(name, static_cast<uint32_t>(rules_.size()));
  if (added) {
    rules_.emplace_back();
    rules_.back().name = name;
    rules_.back().where = where;
  }
  return it->second;
}

uint32_t IrGrammar::NewRule(const std::string& name) {
  rules_.emplace_back();
  rules_.back().name = name;
  rules_.back().defined = true;
  return static_cast<uint32_t>(rules_.size() - 1);
}

std::string LineColumn(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<uint8_t>(text[i]) & 0xC0) != 0x80) {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

namespace {

bool ClassIsEmpty(const CharClass& c) {
  const bool all = c.ranges.size() == 1 && c.ranges[0].first == 0 &&
                   c.ranges[0].second >= kMaxCodePoint;
  return c.negated ? all : c.ranges.empty();
}

// Fixpoint over the rules: which can derive some text (productive) and which the empty
// text (nullable), given which symbols are.
std::vector<bool> Fixpoint(const std::vector<IrRule>& rules,
                           const std::vector<bool>& class_ok, bool empty_only) {
  std::vector<bool> ok(rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < rules.size(); ++r) {
      if (ok[r]) continue;
      for (const Sequence& alt : rules[r].alternatives) {
        bool all = true;
        for (const Symbol& s : alt) {
          all = all && (s.is_rule ? ok[s.id] : (!empty_only && class_ok[s.id]));
        }
        if (all) {
          ok[r] = changed = true;
          break;
        }
      }
    }
  }
  return ok;
}

// Whether rule r reaches itself through symbols that can all be empty (a left-corner
// cycle): depth-first over the left-corner edges, iteratively (no recursion on input).
bool FindLeftCycle(const std::vector<IrRule>& rules, const std::vector<bool>& nullable,
                   uint32_t* culprit) {
  enum : uint8_t { kNew, kOnPath, kDone };
  std::vector<uint8_t> state(rules.size(), kNew);
  std::vector<std::vector<uint32_t>> edges(rules.size());
  for (size_t r = 0; r < rules.size(); ++r) {
    for (const Sequence& alt : rules[r].alternatives) {
      for (const Symbol& s : alt) {
        if (!s.is_rule) break;
        edges[r].push_back(s.id);
        if (!nullable[s.id]) break;
      }
    }
  }
  std::vector<std::pair<uint32_t, size_t>> path;  // (rule, next edge)
  for (uint32_t start = 0; start < rules.size(); ++start) {
    if (state[start] != kNew) continue;
    path.push_back({start, 0});
    state[start] = kOnPath;
    while (!path.empty()) {
      auto& [r, next] = path.back();
      if (next == edges[r].size()) {
        state[r] = kDone;
        path.pop_back();
        continue;
      }
      const uint32_t to = edges[r][next++];
      if (state[to] == kOnPath) {
        *culprit = to;
        return true;
      }
      if (state[to] == kNew) {
        state[to] = kOnPath;
        path.push_back({to, 0});
      }
    }
  }
  return false;
}

}  // namespace

Status EmitProgram(IrGrammar& grammar, uint32_t root, std::string_view text,
                   std::vector<uint32_t>* program) {
  std::vector<IrRule>& rules = grammar.rules();
  const std::vector<CharClass>& classes = grammar.classes();
  std::vector<bool> class_ok(classes.size());
  for (size_t c = 0; c < classes.size(); ++c) class_ok[c] = !ClassIsEmpty(classes[c]);
  // Alternatives that can never finish are dropped: every parse stack the matcher keeps
  // is then one some text completes.
  const std::vector<bool> productive = Fixpoint(rules, class_ok, false);
  if (!productive[root]) {
    return InvalidArgument("grammar: rule '%s' (%s) matches no text",
                           rules[root].name.c_str(),
                           LineColumn(text, rules[root].where).c_str());
  }
  for (IrRule& rule : rules) {
    auto& alts = rule.alternatives;
    alts.erase(std::remove_if(alts.begin(), alts.end(),
                              [&](const Sequence& alt) {
                                for (const Symbol& s : alt) {
                                  if (s.is_rule ? !productive[s.id] : !class_ok[s.id]) {
                                    return true;
                                  }
                                }
                                return false;
                              }),
               alts.end());
  }
  uint32_t culprit = 0;
  if (FindLeftCycle(rules, Fixpoint(rules, class_ok, true), &culprit)) {
    return InvalidArgument(
        "grammar: rule '%s' (%s) is left-recursive: it reaches itself before matching "
        "a character",
        rules[culprit].name.c_str(), LineColumn(text, rules[culprit].where).c_str());
  }

  size_t num_alts = 0, num_elements = 0, num_ranges = 0;
  for (const IrRule& rule : rules) {
    num_alts += rule.alternatives.size();
    for (const Sequence& alt : rule.alternatives) num_elements += alt.size() + 1;
  }
  for (const CharClass& c : classes) num_ranges += c.ranges.size();
  const size_t total = kHeaderWords + rules.size() + 1 + num_alts + num_elements +
                       classes.size() * kClassWords + 2 * num_ranges;
  if (total > kMaxProgramWords || num_elements == 0) {
    return InvalidArgument("grammar: %zu words of program (at most %zu)", total,
                           kMaxProgramWords);
  }
  std::vector<uint32_t>& w = *program;
  w.assign(kHeaderWords, 0);
  w.reserve(total);
  w[0] = kProgramMagic;
  w[1] = kProgramVersion;
  w[2] = static_cast<uint32_t>(rules.size());
  w[3] = root;
  w[4] = static_cast<uint32_t>(num_alts);
  w[5] = static_cast<uint32_t>(num_elements);
  w[6] = static_cast<uint32_t>(classes.size());
  w[7] = static_cast<uint32_t>(num_ranges);
  uint32_t at = 0;
  for (const IrRule& rule : rules) {
    w.push_back(at);
    at += static_cast<uint32_t>(rule.alternatives.size());
  }
  w.push_back(at);
  uint32_t position = 0;
  for (const IrRule& rule : rules) {
    for (const Sequence& alt : rule.alternatives) {
      w.push_back(position);
      position += static_cast<uint32_t>(alt.size() + 1);
    }
  }
  for (const IrRule& rule : rules) {
    for (const Sequence& alt : rule.alternatives) {
      for (const Symbol& s : alt) {
        w.push_back(Element(s.is_rule ? ElementKind::kRule : ElementKind::kClass, s.id));
      }
      w.push_back(Element(ElementKind::kEnd, 0));
    }
  }
  uint32_t range_at = 0;
  for (const CharClass& c : classes) {
    uint32_t ascii[4] = {0, 0, 0, 0};
    for (const auto& [lo, hi] : c.ranges) {
      for (uint32_t cp = lo; cp <= hi && cp < 128; ++cp) ascii[cp >> 5] |= 1u << (cp & 31);
    }
    for (uint32_t& word : ascii) {
      if (c.negated) word = ~word;
      w.push_back(word);
    }
    w.push_back(range_at);
    w.push_back(static_cast<uint32_t>(c.ranges.size()) << 1 | (c.negated ? 1 : 0));
    range_at += static_cast<uint32_t>(c.ranges.size());
  }
  for (const CharClass& c : classes) {
    for (const auto& [lo, hi] : c.ranges) {
      w.push_back(lo);
      w.push_back(hi);
    }
  }
  return Status::Ok();
}

}  // namespace ember::grammar
