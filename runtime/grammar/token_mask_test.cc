// TokenMask's walk of a vocabulary in byte order against trying every token alone from a
// fresh matcher: the same tokens at every state of a JSON text, across UTF-8 split over
// tokens, shared prefixes, duplicates and control tokens; the matcher's state unchanged.
#include "runtime/grammar/token_mask.h"

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/grammar/gbnf.h"

namespace ember::grammar {
namespace {

constexpr char kJson[] = R"g(root ::= value
value ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)? ws
ws ::= [ \t\n]*
)g";

// Single bytes, pieces of JSON, UTF-8 split over tokens, duplicates, a control token
// (empty), and random strings over JSON's characters: about 3,300 tokens.
std::vector<std::string> Vocabulary() {
  std::vector<std::string> v = {"",      "{\"",   "\":",   "\": ",  "true", "tr",  "ue",
                                "null",  "12",    "1.5",   "e+",    "\xc3", "\xa9", "\xc3\xa9",
                                "caf",   "\xe2\x9c", "\x93", "\xe2\x9c\x93", "ab", "ab",
                                "\\u00", "\\\"",  "],",    "},\n",  " ",    "  ",  "\n\t"};
  for (int b = 1; b < 256; ++b) v.push_back(std::string(1, static_cast<char>(b)));
  const std::string chars = "{}[]\",: \n0123456789.-+eEtrufalsn\\abc\xc3\xa9";
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    for (size_t n = 1 + rng() % 6; n > 0; --n) s += chars[rng() % chars.size()];
    v.push_back(s);
  }
  return v;
}

class TokenMaskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(CompileGbnf(kJson, "root", &words_).ok());
    ASSERT_TRUE(program_.Bind(words_.data(), words_.size()).ok());
    memory_.resize(GrammarMatcher::RequiredBytes(MatcherLimits()) / 8 + 1);
    vocab_ = Vocabulary();
    order_.Build(vocab_.size(), [this](int32_t id) { return std::string_view(vocab_[id]); });
  }
  // A matcher at the state after `prefix` (its bytes one at a time).
  void Start(GrammarMatcher* m, std::vector<uint64_t>* memory, const std::string& prefix) {
    memory->resize(memory_.size());
    ASSERT_TRUE(m->Init(&program_, MatcherLimits(), memory->data(), memory->size() * 8).ok());
    for (char c : prefix) ASSERT_TRUE(m->AcceptByte(static_cast<uint8_t>(c)).ok()) << prefix;
  }

  std::vector<uint32_t> words_;
  Program program_;
  std::vector<uint64_t> memory_;
  std::vector<std::string> vocab_;
  TokenOrder order_;
};

TEST_F(TokenMaskTest, TheWalkAllowsWhatEachTokenAloneWould) {
  const std::string text = "{\"caf\xc3\xa9\": [1.5e+3, true, \"\xe2\x9c\x93\\u00e9\"], \"n\": null}";
  GrammarMatcher m;
  std::vector<uint64_t> memory;
  Start(&m, &memory, "");
  std::vector<uint8_t> allowed(vocab_.size());
  size_t total = 0;
  for (size_t at = 0; at <= text.size(); ++at) {
    size_t count = 0;
    ASSERT_TRUE(TokenMask::Allowed(&m, order_, allowed.data(), &count).ok()) << at;
    // Each token alone, from a matcher of its own at the same text (restored before
    // each: the walk's sorting and sharing is what is checked).
    GrammarMatcher alone;
    std::vector<uint64_t> alone_memory;
    Start(&alone, &alone_memory, text.substr(0, at));
    size_t mark = 0, want_count = 0;
    ASSERT_TRUE(alone.SaveState(&mark).ok());
    for (size_t id = 0; id < vocab_.size(); ++id) {
      alone.RestoreState(mark);
      bool ok = !vocab_[id].empty();
      for (char c : vocab_[id]) ok = ok && alone.AcceptByte(static_cast<uint8_t>(c)).ok();
      want_count += ok;
      ASSERT_EQ(allowed[id] != 0, ok) << "at byte " << at << ", token " << id << " '"
                                      << vocab_[id] << "'";
    }
    EXPECT_EQ(count, want_count);
    EXPECT_GT(count, 0u) << at;
    total += count;
    // The mask left the state as it was: the text goes on.
    if (at < text.size()) {
      ASSERT_TRUE(m.AcceptByte(static_cast<uint8_t>(text[at])).ok()) << at;
    }
  }
  EXPECT_TRUE(m.CanEnd());
  EXPECT_GT(total, 0u);
}

TEST_F(TokenMaskTest, ATokenLongerThanTheWalkIsAnError) {
  vocab_.push_back(std::string(300, ' '));
  TokenOrder order;
  order.Build(vocab_.size(), [this](int32_t id) { return std::string_view(vocab_[id]); });
  GrammarMatcher m;
  std::vector<uint64_t> memory;
  Start(&m, &memory, "[");
  std::vector<uint8_t> allowed(vocab_.size());
  size_t count = 0;
  const Status s = TokenMask::Allowed(&m, order, allowed.data(), &count);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(s.message()).find("300 bytes"), std::string::npos) << s.message();
  EXPECT_TRUE(m.AcceptByte(']').ok());  // the state is still "["
  EXPECT_TRUE(m.CanEnd());
}

}  // namespace
}  // namespace ember::grammar
