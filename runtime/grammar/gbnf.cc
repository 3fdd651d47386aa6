// The GBNF parser: text to IrGrammar (then EmitProgram). Recursive descent over groups,
// bounded by kMaxNesting; every error names its line and column.
#include "runtime/grammar/gbnf.h"

#include <string>

#include "runtime/grammar/grammar_ir.h"
#include "runtime/grammar/grammar_program.h"
#include "runtime/text/utf8.h"

namespace ember::grammar {
namespace {

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '-';
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Status Parse() {
    SkipSpace(true);
    while (status_.ok() && at_ < text_.size()) {
      ParseRule();
      SkipSpace(true);
    }
    return status_;
  }
  IrGrammar& grammar() { return grammar_; }

 private:
  char Peek(size_t ahead = 0) const {
    return at_ + ahead < text_.size() ? text_[at_ + ahead] : '\0';
  }
  bool AtEnd() const { return at_ >= text_.size(); }

  // The first error wins; parsing stops at it (every loop checks status_).
  void Fail(const char* what, size_t where) {
    if (!status_.ok()) return;
    status_ = InvalidArgument("grammar %s: %s", LineColumn(text_, where).c_str(), what);
    at_ = text_.size();
  }
  void Fail(const std::string& what, size_t where) { Fail(what.c_str(), where); }

  // Symbols and rules made so far, bounded before they are: a short text of nested
  // repetitions must not grow without end on its way to the program's size check.
  bool Spend(uint64_t n, size_t where) {
    spent_ += n;
    if (spent_ > kMaxProgramWords) {
      Fail("the grammar grows past " + std::to_string(kMaxProgramWords) +
               " symbols (repetitions of repetitions?)",
           where);
    }
    return status_.ok();
  }

  // Spaces, tabs and comments; newlines too where the format allows them.
  void SkipSpace(bool newlines) {
    while (!AtEnd()) {
      const char c = Peek();
      if (c == ' ' || c == '\t' || (newlines && (c == '\r' || c == '\n'))) {
        ++at_;
      } else if (c == '#') {
        while (!AtEnd() && Peek() != '\r' && Peek() != '\n') ++at_;
      } else {
        break;
      }
    }
  }

  std::string ParseName() {
    const size_t start = at_;
    while (IsWordChar(Peek())) ++at_;
    if (at_ == start) Fail("expected a rule name", start);
    return std::string(text_.substr(start, at_ - start));
  }

  uint32_t ParseHex(int digits) {
    uint32_t value = 0;
    const size_t start = at_;
    for (int i = 0; i < digits; ++i) {
      const char c = Peek();
      int v = -1;
      if (c >= '0' && c <= '9') v = c - '0';
      if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
      if (v < 0) {
        Fail("expected " + std::to_string(digits) + " hex digits", start);
        return 0;
      }
      value = value << 4 | static_cast<uint32_t>(v);
      ++at_;
    }
    if (value > kMaxCodePoint) Fail("code point past U+10FFFF", start);
    return value;
  }

  // One character of a literal or a class: an escape or a UTF-8 sequence.
  uint32_t ParseChar() {
    const size_t start = at_;
    if (AtEnd()) {
      Fail("unexpected end of grammar", start);
      return 0;
    }
    if (Peek() == '\\') {
      const char e = Peek(1);
      at_ += 2;
      switch (e) {
        case 'x': return ParseHex(2);
        case 'u': return ParseHex(4);
        case 'U': return ParseHex(8);
        case 't': return '\t';
        case 'r': return '\r';
        case 'n': return '\n';
        case '\\': case '"': case '[': case ']': return static_cast<uint8_t>(e);
        default:
          Fail("unknown escape", start);
          return 0;
      }
    }
    uint32_t cp = 0;
    const size_t n = DecodeUtf8(text_, at_, &cp);
    if (n == 0) {
      Fail("invalid UTF-8", start);
      return 0;
    }
    at_ += n;
    return cp;
  }

  uint32_t ParseInt() {
    const size_t start = at_;
    uint64_t value = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      value = value * 10 + static_cast<uint64_t>(Peek() - '0');
      if (value > kMaxRepeat) {
        Fail("repetition count over " + std::to_string(kMaxRepeat), start);
        return 0;
      }
      ++at_;
    }
    if (at_ == start) Fail("expected a number", start);
    return static_cast<uint32_t>(value);
  }

  void ParseRule() {
    const size_t start = at_;
    const std::string name = ParseName();
    SkipSpace(false);
    if (text_.substr(at_, 3) != "::=") return Fail("expected '::='", at_);
    at_ += 3;
    SkipSpace(true);
    const uint32_t id = grammar_.Rule(name, start);
    IrRule& rule = grammar_.rules()[id];
    if (rule.defined) {
      return Fail("rule '" + name + "' is defined twice (first at " +
                      LineColumn(text_, rule.where) + ")",
                  start);
    }
    rule.defined = true;
    rule.where = start;
    std::vector<Sequence> alternatives;
    ParseAlternatives(name, 0, &alternatives);
    grammar_.rules()[id].alternatives = std::move(alternatives);
    SkipSpace(false);
    if (AtEnd()) return;
    if (Peek() != '\r' && Peek() != '\n') {
      return Fail("expected the end of the rule (a newline)", at_);
    }
  }

  void ParseAlternatives(const std::string& rule, int depth, std::vector<Sequence>* out) {
    out->emplace_back();
    ParseSequence(rule, depth, &out->back());
    while (status_.ok() && Peek() == '|') {
      ++at_;
      SkipSpace(true);
      out->emplace_back();
      ParseSequence(rule, depth, &out->back());
    }
  }

  void ParseSequence(const std::string& rule, int depth, Sequence* seq) {
    const bool nested = depth > 0;
    // Where the last item's symbols start (a literal's are several, an empty one's
    // none); a repetition applies to them, and a repetition of it to its result.
    size_t item = seq->size();
    bool have_item = false;
    while (status_.ok() && !AtEnd()) {
      const char c = Peek();
      const size_t start = at_;
      if (!Spend(1, start)) return;  // the item's symbol (a literal's: one each)
      if (c == '"') {
        ++at_;
        item = seq->size();
        while (status_.ok() && Peek() != '"') {
          if (AtEnd()) return Fail("unterminated string", start);
          const uint32_t cp = ParseChar();
          if (!Spend(1, start)) return;
          seq->push_back({false, grammar_.Class({{cp, cp}}, false)});
        }
        ++at_;
      } else if (c == '[') {
        ++at_;
        item = seq->size();
        ParseClass(start, seq);
      } else if (c == '.') {
        ++at_;
        item = seq->size();
        seq->push_back({false, grammar_.Class({}, true)});
      } else if (IsWordChar(c)) {
        item = seq->size();
        const std::string name = ParseName();
        seq->push_back({true, grammar_.Rule(name, start)});
      } else if (c == '(') {
        if (depth + 1 > kMaxNesting) {
          return Fail("groups nested deeper than " + std::to_string(kMaxNesting), start);
        }
        ++at_;
        SkipSpace(true);
        const uint32_t group = grammar_.NewRule(rule);
        grammar_.rules()[group].where = start;
        std::vector<Sequence> alternatives;
        ParseAlternatives(rule, depth + 1, &alternatives);
        grammar_.rules()[group].alternatives = std::move(alternatives);
        if (!status_.ok()) return;
        if (Peek() != ')') return Fail("expected ')'", at_);
        ++at_;
        item = seq->size();
        seq->push_back({true, group});
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (!have_item) return Fail("a repetition with nothing before it", start);
        ++at_;
        uint32_t min = c == '+' ? 1 : 0, max = c == '?' ? 1 : UINT32_MAX;
        if (c == '{') {
          SkipSpace(false);
          min = max = ParseInt();
          SkipSpace(false);
          if (Peek() == ',') {
            ++at_;
            SkipSpace(false);
            max = Peek() == '}' ? UINT32_MAX : ParseInt();
            SkipSpace(false);
          }
          if (!status_.ok()) return;
          if (Peek() != '}') return Fail("expected '}'", at_);
          ++at_;
          if (max < min) return Fail("{m,n} with n < m", start);
        }
        // The copies and the rules a repetition makes (three symbols each at most).
        const uint64_t copies = seq->size() - item;
        const uint64_t rules = max == UINT32_MAX ? 1 : uint64_t{max - min};
        if (!Spend(uint64_t{min} * copies + 3 * rules + copies, start)) return;
        if (seq->size() > item) Repeat(rule, item, min, max, seq);  // "" repeated: ""
      } else {
        break;
      }
      if (c != '*' && c != '+' && c != '?' && c != '{') have_item = true;
      SkipSpace(nested);
    }
  }

  void ParseClass(size_t start, Sequence* seq) {
    bool negated = false;
    if (Peek() == '^') {
      negated = true;
      ++at_;
    }
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    while (status_.ok() && Peek() != ']') {
      if (AtEnd()) return Fail("unterminated character class", start);
      const size_t at = at_;
      const uint32_t lo = ParseChar();
      uint32_t hi = lo;
      if (Peek() == '-' && Peek(1) != ']' && at_ + 1 < text_.size()) {
        ++at_;
        hi = ParseChar();
        if (hi < lo) return Fail("a range whose end is before its start", at);
      }
      ranges.push_back({lo, hi});
    }
    if (!status_.ok()) return;
    ++at_;
    seq->push_back({false, grammar_.Class(std::move(ranges), negated)});
  }

  // seq[item..] repeated min to max times (max UINT32_MAX: without bound), as rules:
  // x* is R ::= x R | (empty); x{m,n} is m copies of x, then n - m nested optionals.
  void Repeat(const std::string& rule, size_t item, uint32_t min, uint32_t max,
              Sequence* seq) {
    Symbol x{};
    if (seq->size() - item == 1) {
      x = (*seq)[item];
    } else {  // a literal of several characters: one rule of them
      x = {true, grammar_.NewRule(rule)};
      grammar_.rules()[x.id].alternatives.push_back(
          Sequence(seq->begin() + static_cast<ptrdiff_t>(item), seq->end()));
    }
    seq->resize(item);
    for (uint32_t i = 0; i < min; ++i) seq->push_back(x);
    if (max == UINT32_MAX) {
      const uint32_t star = grammar_.NewRule(rule);
      grammar_.rules()[star].alternatives = {{x, {true, star}}, {}};
      seq->push_back({true, star});
    } else if (max > min) {
      Symbol tail{};
      bool has_tail = false;
      for (uint32_t i = min; i < max; ++i) {
        const uint32_t opt = grammar_.NewRule(rule);
        Sequence once{x};
        if (has_tail) once.push_back(tail);
        grammar_.rules()[opt].alternatives = {once, {}};
        tail = {true, opt};
        has_tail = true;
      }
      seq->push_back(tail);
    }
  }

  std::string_view text_;
  size_t at_ = 0;
  uint64_t spent_ = 0;
  Status status_;
  IrGrammar grammar_;
};

}  // namespace

Status CompileGbnf(std::string_view text, std::string_view root,
                   std::vector<uint32_t>* program) {
  program->clear();
  Parser parser(text);
  EMBER_RETURN_IF_ERROR(parser.Parse());
  IrGrammar& g = parser.grammar();
  for (const IrRule& rule : g.rules()) {
    if (!rule.defined) {
      return InvalidArgument("grammar %s: undefined rule '%s'",
                             LineColumn(text, rule.where).c_str(), rule.name.c_str());
    }
  }
  const auto it = g.names().find(std::string(root));
  if (it == g.names().end()) {
    return InvalidArgument("grammar: no rule '%.*s' to start from",
                           static_cast<int>(root.size()), root.data());
  }
  return EmitProgram(g, it->second, text, program);
}

}  // namespace ember::grammar
