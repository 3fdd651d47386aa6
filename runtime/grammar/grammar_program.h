// A compiled grammar: the flat program a GBNF grammar (or a JSON Schema) becomes, which
// the matcher runs over code points. Words of 32 bits, position-independent, so it can
// live in an arena, a file or flash:
//
//   header      kProgramMagic, kProgramVersion, rules, root rule, alternatives,
//               elements, classes, ranges (8 words)
//   rule_alts   rules + 1 offsets into alts: rule r's alternatives are
//               alts[rule_alts[r] .. rule_alts[r + 1])
//   alts        each alternative's first element (a position in elements)
//   elements    the alternatives' symbols, each alternative ended by kEnd:
//               kind << 28 | value, kind kClass (value: a class), kRule (a rule), kEnd
//   classes     kClassWords words each: a 128-bit map of the ASCII code points it
//               matches, then its ranges (offset, count) and whether it is negated
//   ranges      (first, last) code point pairs, sorted and disjoint within a class
//
// Every rule's alternatives can finish (the compiler drops those that cannot) and no
// rule reaches itself without consuming a code point (left recursion is refused), so a
// matcher's parse stacks are always completable and their expansion is finite.
#ifndef EMBER_RUNTIME_GRAMMAR_GRAMMAR_PROGRAM_H_
#define EMBER_RUNTIME_GRAMMAR_GRAMMAR_PROGRAM_H_

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"

namespace ember::grammar {

inline constexpr uint32_t kProgramMagic = 0x666e6267;  // "gbnf"
inline constexpr uint32_t kProgramVersion = 1;
inline constexpr size_t kHeaderWords = 8;
inline constexpr size_t kClassWords = 6;
inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;
inline constexpr size_t kMaxProgramWords = size_t{1} << 22;  // 16 MiB: a compiler's bound

enum class ElementKind : uint32_t { kClass = 0, kRule = 1, kEnd = 2 };

inline constexpr uint32_t Element(ElementKind kind, uint32_t value) {
  return static_cast<uint32_t>(kind) << 28 | value;
}
inline constexpr ElementKind KindOf(uint32_t element) {
  return static_cast<ElementKind>(element >> 28);
}
inline constexpr uint32_t ValueOf(uint32_t element) { return element & 0x0FFFFFFF; }

// A view of a program's words (which must outlive it).
class Program {
 public:
  // Checks every table against the others (sizes, offsets, kinds, ranges): words from a
  // file or a caller are refused with a message, never read past.
  Status Bind(const uint32_t* words, size_t num_words);

  uint32_t num_rules() const { return num_rules_; }
  uint32_t root() const { return root_; }
  size_t num_words() const { return num_words_; }
  uint32_t num_elements() const { return num_elements_; }
  uint32_t num_classes() const { return num_classes_; }
  uint32_t element(uint32_t position) const { return elements_[position]; }
  // Rule r's alternatives: their first positions.
  const uint32_t* alternatives(uint32_t rule, uint32_t* count) const {
    *count = rule_alts_[rule + 1] - rule_alts_[rule];
    return alts_ + rule_alts_[rule];
  }
  // Whether class c matches code point cp.
  bool Matches(uint32_t c, uint32_t cp) const {
    const uint32_t* k = classes_ + size_t{c} * kClassWords;
    if (cp < 128) return (k[cp >> 5] >> (cp & 31)) & 1;
    return InRanges(k, cp) != ((k[5] & 1) != 0);
  }
  // Whether class c matches some code point in [lo, hi] (lo >= 128: what the first
  // bytes of a longer UTF-8 sequence leave open).
  bool MatchesSome(uint32_t c, uint32_t lo, uint32_t hi) const;

 private:
  bool InRanges(const uint32_t* k, uint32_t cp) const;

  const uint32_t* words_ = nullptr;
  size_t num_words_ = 0;
  uint32_t num_rules_ = 0, root_ = 0, num_alts_ = 0, num_elements_ = 0;
  uint32_t num_classes_ = 0, num_ranges_ = 0;
  const uint32_t* rule_alts_ = nullptr;
  const uint32_t* alts_ = nullptr;
  const uint32_t* elements_ = nullptr;
  const uint32_t* classes_ = nullptr;
  const uint32_t* ranges_ = nullptr;
};

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_GRAMMAR_PROGRAM_H_
