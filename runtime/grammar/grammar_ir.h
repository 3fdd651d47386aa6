// The grammar between a parser (GBNF, and JSON Schema's translation) and the program:
// rules of alternatives of symbols, each a character class or a rule. Internal to
// runtime/grammar/.
#ifndef EMBER_RUNTIME_GRAMMAR_GRAMMAR_IR_H_
#define EMBER_RUNTIME_GRAMMAR_GRAMMAR_IR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/status.h"

namespace ember::grammar {

struct Symbol {
  bool is_rule = false;
  uint32_t id = 0;  // a class, or a rule
  bool operator==(const Symbol& o) const { return is_rule == o.is_rule && id == o.id; }
};
using Sequence = std::vector<Symbol>;

struct IrRule {
  std::string name;         // a user's rule's name, or its group's "name (group N)"
  std::vector<Sequence> alternatives;
  bool defined = false;
  size_t where = 0;         // the definition's offset in the text (or first reference)
};

// Sorted, disjoint ranges of code points, matched or (negated) not matched.
struct CharClass {
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  bool negated = false;
  bool operator<(const CharClass& o) const {
    return negated != o.negated ? negated < o.negated : ranges < o.ranges;
  }
};

class IrGrammar {
 public:
  // The id of a class (ranges in any order, overlapping): equal classes share one.
  uint32_t Class(std::vector<std::pair<uint32_t, uint32_t>> ranges, bool negated);
  uint32_t Rule(const std::string& name, size_t where);  // by name, made if new
  uint32_t NewRule(const std::string& name);             // an unnamed helper rule

  std::vector<IrRule>& rules() { return rules_; }
  const std::vector<CharClass>& classes() const { return classes_; }
  const std::map<std::string, uint32_t>& names() const { return names_; }

 private:
  std::vector<IrRule> rules_;
  std::vector<CharClass> classes_;
  std::map<CharClass, uint32_t> class_ids_;
  std::map<std::string, uint32_t> names_;
};

// "line L, column C" of an offset into a grammar's text (columns count code points).
std::string LineColumn(std::string_view text, size_t offset);

// Checks and writes the program: drops alternatives that can never finish, refuses left
// recursion and a start rule without text (naming the rule and where `text` defines
// it), then lays out the words.
Status EmitProgram(IrGrammar& grammar, uint32_t root, std::string_view text,
                   std::vector<uint32_t>* program);

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_GRAMMAR_IR_H_
