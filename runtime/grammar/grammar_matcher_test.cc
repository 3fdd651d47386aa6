// GrammarMatcher on grammars written here in GBNF: each text is complete (a sentence),
// prefix (the start of one) or reject, as the grammar's definition says; limits are
// errors that leave the state as it was; reclaiming frames changes nothing.
// tests/grammar/check_grammar.py compares it with an independent Earley recognizer
// on random grammars and llama.cpp's.
#include "runtime/grammar/grammar_matcher.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/grammar/gbnf.h"

namespace ember::grammar {
namespace {

class Matcher {
 public:
  explicit Matcher(const std::string& gbnf, MatcherLimits limits = MatcherLimits()) {
    const Status s = CompileGbnf(gbnf, "root", &words_);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(program_.Bind(words_.data(), words_.size()).ok());
    memory_.resize(GrammarMatcher::RequiredBytes(limits) / 8 + 1);
    EXPECT_TRUE(matcher_.Init(&program_, limits, memory_.data(), memory_.size() * 8).ok());
  }
  std::string Classify(const std::string& text) {
    EXPECT_TRUE(matcher_.Reset().ok());
    const Status s = matcher_.AcceptText(text);
    if (s.code() == StatusCode::kInvalidArgument) return "reject";
    if (!s.ok()) return std::string("error: ") + s.message();
    return matcher_.CanEnd() ? "complete" : "prefix";
  }
  GrammarMatcher& matcher() { return matcher_; }

 private:
  std::vector<uint32_t> words_;
  Program program_;
  std::vector<uint64_t> memory_;
  GrammarMatcher matcher_;
};

struct Case {
  const char* text;
  const char* want;
};

void ExpectAll(Matcher& m, std::initializer_list<Case> cases) {
  for (const Case& c : cases) EXPECT_EQ(m.Classify(c.text), c.want) << '"' << c.text << '"';
}

// JSON as a GBNF grammar (written here from RFC 8259).
constexpr char kJson[] = R"g(root ::= value
value ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)? ws
ws ::= [ \t\n]*
)g";

TEST(GrammarMatcherTest, Json) {
  Matcher m(kJson);
  ExpectAll(m, {{"", "prefix"},
                {"{\"a\": [1, 2.5e3, true, null, \"\\u00e9x\"]}", "complete"},
                {"{\"a\": ", "prefix"},
                {"{]", "reject"},
                {"[01]", "reject"},
                {"-", "prefix"},
                {"-0.5E+10 ", "complete"},
                {"\"caf\xc3\xa9\"", "complete"},
                {"\"tab\there\"", "reject"},
                {"\"\\u12", "prefix"},
                {"\"\\u12g", "reject"},
                {"\xff", "reject"}});
  const std::string deep = std::string(100, '[') + "1" + std::string(100, ']');
  EXPECT_EQ(m.Classify(deep), "complete");
  EXPECT_EQ(m.Classify(deep.substr(0, 150)), "prefix");
  EXPECT_EQ(m.Classify(deep + "]"), "reject");
}

TEST(GrammarMatcherTest, RepetitionsCountExactly) {
  Matcher m("root ::= \"a\"{2,4} \"b\"{3} \"c\"{1,} \"d\"{0,2} [xy]?");
  ExpectAll(m, {{"abbbc", "reject"},
                {"aabbbc", "complete"},
                {"aaaabbbccccddy", "complete"},
                {"aaaaa", "reject"},
                {"aabbbcdddd", "reject"},
                {"aabb", "prefix"},
                {"aabbbcxy", "reject"}});
}

TEST(GrammarMatcherTest, ClassesAnyAndUnicode) {
  Matcher m("root ::= [^a-c\\n] . [\\u00e0-\\u00ff] [ぁ-ゟ]+ \"\\U0001F600\"");
  ExpectAll(m, {{"dz\xc3\xa9\xe3\x81\x82\xe3\x81\x84\xf0\x9f\x98\x80", "complete"},
                {"az", "reject"},
                {"d\n\xc3\xa0\xe3\x81\x82", "prefix"},
                {"dzz", "reject"}});
}

// A grammar that can end or go on, empty alternatives, rules used in several places,
// recursion on the right: arithmetic.
TEST(GrammarMatcherTest, Arithmetic) {
  Matcher m(R"g(root ::= (expr "=" ws term "\n")+
expr ::= term ([-+*/] term)*
term ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num ::= [0-9]+ ws
ws ::= [ \t\n]*
)g");
  ExpectAll(m, {{"a+(b*3)=x\n", "complete"},
                {"a+(b*3)=x\n1=2\n", "complete"},
                {"a+(b*3)=x", "prefix"},
                {"a+(b*3=x\n", "reject"},
                {"((((((((((a))))))))))=b\n", "complete"}});
}

// An ambiguous grammar (x? x? ... as the GBNF guide warns) keeps one stack per distinct
// parse, not one per path: interned frames make equal stacks one.
TEST(GrammarMatcherTest, AmbiguityIsDeduplicated) {
  std::string gbnf = "root ::= ";
  for (int i = 0; i < 40; ++i) gbnf += "\"x\"? ";
  Matcher m(gbnf);
  EXPECT_EQ(m.Classify(std::string(40, 'x')), "complete");
  EXPECT_EQ(m.Classify(std::string(41, 'x')), "reject");
  EXPECT_EQ(m.Classify(std::string(20, 'x')), "complete");
  EXPECT_LE(m.matcher().num_stacks(), 40u);
}

// Past a limit: ResourceExhausted naming it, and the state as it was before.
TEST(GrammarMatcherTest, LimitsAreErrorsThatKeepTheState) {
  MatcherLimits small;
  small.max_frames = 64;
  Matcher deep(kJson, small);
  ASSERT_TRUE(deep.matcher().Reset().ok());
  ASSERT_TRUE(deep.matcher().AcceptText("[[").ok());
  Status s;
  for (int i = 0; i < 100 && s.ok(); ++i) s = deep.matcher().Accept('[');
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(s.message()).find("frames"), std::string::npos) << s.message();
  const size_t stacks = deep.matcher().num_stacks();
  EXPECT_EQ(deep.matcher().Accept('[').code(), s.code());  // still refused, unchanged
  EXPECT_EQ(deep.matcher().num_stacks(), stacks);
  EXPECT_TRUE(deep.matcher().Accept(']').ok());

  MatcherLimits few;
  few.max_stacks = 4;
  std::string gbnf = "root ::= \"a\" (";
  for (int i = 0; i < 8; ++i) gbnf += std::string(i ? " | " : "") + "[" + char('0' + i) + "]";
  Matcher wide(gbnf + ")", few);
  EXPECT_NE(wide.Classify("a").find("more than 4 parse stacks"), std::string::npos);
  EXPECT_EQ(GrammarMatcher::RequiredBytes(MatcherLimits{0, 1, 1}), 0u);
}

// Long texts of deep nesting reclaim frames many times over; the answers are those of a
// matcher with room for every frame.
TEST(GrammarMatcherTest, ReclaimedFramesChangeNothing) {
  MatcherLimits tight;
  tight.max_frames = 200;
  MatcherLimits roomy;
  roomy.max_frames = 1 << 16;
  Matcher a(kJson, tight), b(kJson, roomy);
  std::string text;
  for (int round = 0; round < 50; ++round) {
    text += "[{\"k\": [" + std::to_string(round) + ", {\"z\": [[[]]]}]}], ";
  }
  text = "[" + text + "0]";
  for (size_t n = 0; n <= text.size(); n += 41) {
    EXPECT_EQ(a.Classify(text.substr(0, n)), b.Classify(text.substr(0, n))) << n;
  }
  EXPECT_EQ(a.Classify(text), "complete");
  EXPECT_LT(a.matcher().num_frames(), 200u);
}

}  // namespace
}  // namespace ember::grammar
