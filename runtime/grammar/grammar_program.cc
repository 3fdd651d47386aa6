// Program: see grammar_program.h.
#include "runtime/grammar/grammar_program.h"

namespace ember::grammar {

bool Program::InRanges(const uint32_t* k, uint32_t cp) const {
  const uint32_t* r = ranges_ + 2 * size_t{k[4]};
  uint32_t lo = 0, hi = k[5] >> 1;  // ranges [lo, hi) may hold cp
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (cp < r[2 * mid]) {
      hi = mid;
    } else if (cp > r[2 * mid + 1]) {
      lo = mid + 1;
    } else {
      return true;
    }
  }
  return false;
}

bool Program::MatchesSome(uint32_t c, uint32_t lo, uint32_t hi) const {
  const uint32_t* k = classes_ + size_t{c} * kClassWords;
  const uint32_t* r = ranges_ + 2 * size_t{k[4]};
  const uint32_t n = k[5] >> 1;
  if ((k[5] & 1) == 0) {  // some range meets [lo, hi]
    for (uint32_t i = 0; i < n; ++i) {
      if (r[2 * i] <= hi && r[2 * i + 1] >= lo) return true;
    }
    return false;
  }
  // Negated: some code point of [lo, hi] lies outside every range (they are sorted and
  // disjoint, so walk them while they cover [lo, next]).
  uint32_t next = lo;
  for (uint32_t i = 0; i < n && r[2 * i] <= next; ++i) {
    if (r[2 * i + 1] >= next) {
      if (r[2 * i + 1] >= hi) return false;
      next = r[2 * i + 1] + 1;
    }
  }
  return true;
}

Status Program::Bind(const uint32_t* words, size_t num_words) {
  *this = Program();
  if (words == nullptr || num_words < kHeaderWords || words[0] != kProgramMagic) {
    return InvalidArgument("grammar program: no header");
  }
  if (words[1] != kProgramVersion) {
    return InvalidArgument("grammar program: version %u (this build reads version %u)",
                           words[1], kProgramVersion);
  }
  const uint32_t rules = words[2], root = words[3], alts = words[4], elements = words[5],
                 classes = words[6], ranges = words[7];
  // The tables' sizes, in 64 bits: no count can wrap them.
  const uint64_t total = uint64_t{kHeaderWords} + rules + 1 + alts + elements +
                         uint64_t{classes} * kClassWords + uint64_t{ranges} * 2;
  if (rules == 0 || root >= rules || elements == 0 || total != num_words) {
    return InvalidArgument(
        "grammar program: %u rules (root %u), %u alternatives, %u elements, %u classes, "
        "%u ranges do not make its %zu words",
        rules, root, alts, elements, classes, ranges, num_words);
  }
  const uint32_t* rule_alts = words + kHeaderWords;
  const uint32_t* alt = rule_alts + rules + 1;
  const uint32_t* element = alt + alts;
  const uint32_t* klass = element + elements;
  const uint32_t* range = klass + size_t{classes} * kClassWords;
  if (rule_alts[0] != 0 || rule_alts[rules] != alts) {
    return InvalidArgument("grammar program: the rules' alternatives do not span them");
  }
  for (uint32_t r = 0; r < rules; ++r) {
    if (rule_alts[r + 1] < rule_alts[r]) {
      return InvalidArgument("grammar program: rule %u's alternatives run backwards", r);
    }
  }
  if (KindOf(element[elements - 1]) != ElementKind::kEnd) {
    return InvalidArgument("grammar program: the last alternative has no end");
  }
  for (uint32_t e = 0; e < elements; ++e) {
    const ElementKind kind = KindOf(element[e]);
    const uint32_t value = ValueOf(element[e]);
    if ((kind == ElementKind::kClass && value >= classes) ||
        (kind == ElementKind::kRule && value >= rules) ||
        (kind == ElementKind::kEnd && value != 0) || kind > ElementKind::kEnd) {
      return InvalidArgument("grammar program: element %u (%08x) is out of range", e,
                             element[e]);
    }
  }
  // An alternative starts at the first element or just after another's end.
  for (uint32_t a = 0; a < alts; ++a) {
    if (alt[a] >= elements ||
        (alt[a] > 0 && KindOf(element[alt[a] - 1]) != ElementKind::kEnd)) {
      return InvalidArgument("grammar program: alternative %u starts at %u", a, alt[a]);
    }
  }
  for (uint32_t c = 0; c < classes; ++c) {
    const uint32_t* k = klass + size_t{c} * kClassWords;
    const uint64_t first = k[4], count = k[5] >> 1;
    if (first + count > ranges) {
      return InvalidArgument("grammar program: class %u's ranges are out of range", c);
    }
    for (uint64_t i = 0; i < count; ++i) {
      const uint32_t lo = range[2 * (first + i)], hi = range[2 * (first + i) + 1];
      if (lo > hi || hi > kMaxCodePoint || (i > 0 && lo <= range[2 * (first + i) - 1])) {
        return InvalidArgument("grammar program: class %u's range %llu is not in order",
                               c, static_cast<unsigned long long>(i));
      }
    }
  }
  words_ = words;
  num_words_ = num_words;
  num_rules_ = rules;
  root_ = root;
  num_alts_ = alts;
  num_elements_ = elements;
  num_classes_ = classes;
  num_ranges_ = ranges;
  rule_alts_ = rule_alts;
  alts_ = alt;
  elements_ = element;
  classes_ = klass;
  ranges_ = range;
  return Status::Ok();
}

}  // namespace ember::grammar
