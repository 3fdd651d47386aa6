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

bool Has(const std::vector<uint32_t>& bits, size_t id) {
  return (bits[id >> 5] >> (id & 31)) & 1;
}

TEST_F(TokenMaskTest, BothMasksAllowWhatEachTokenAloneWould) {
  const std::string text = "{\"caf\xc3\xa9\": [1.5e+3, true, \"\xe2\x9c\x93\\u00e9\"], \"n\": null}";
  GrammarMatcher m;
  std::vector<uint64_t> memory;
  Start(&m, &memory, "");
  TokenMask mask;
  ASSERT_TRUE(mask.Build(program_, order_, MatcherLimits()).ok());
  EXPECT_GT(mask.stats().dependent, 0u);  // the walk at each step is exercised
  std::vector<uint32_t> walked(order_.mask_words()), tabled(order_.mask_words());
  size_t total = 0;
  for (size_t at = 0; at <= text.size(); ++at) {
    size_t count = 0, tabled_count = 0;
    ASSERT_TRUE(TokenMask::AllowedByWalk(&m, order_, walked.data(), &count).ok()) << at;
    ASSERT_TRUE(mask.Allowed(&m, tabled.data(), &tabled_count).ok()) << at;
    // Each token alone, from a matcher of its own at the same text (restored before
    // each: the walk's sorting and sharing, and the tables, are what is checked).
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
      ASSERT_EQ(Has(walked, id), ok) << "walk at byte " << at << ", token " << id << " '"
                                     << vocab_[id] << "'";
      ASSERT_EQ(Has(tabled, id), ok) << "tables at byte " << at << ", token " << id
                                     << " '" << vocab_[id] << "'";
    }
    EXPECT_EQ(count, want_count);
    EXPECT_EQ(tabled_count, want_count);
    EXPECT_GT(count, 0u) << at;
    total += count;
    // The masks left the state as they found it: the text goes on.
    if (at < text.size()) {
      ASSERT_TRUE(m.AcceptByte(static_cast<uint8_t>(text[at])).ok()) << at;
    }
  }
  EXPECT_TRUE(m.CanEnd());
  EXPECT_GT(total, 0u);
}

// Grammars whose rules end in many places (nested, recursive, ambiguous, a rule that
// can be empty, non-ASCII classes): the tables' mask equals the walk's at each byte of
// texts the grammar generates, drawn at random.
TEST_F(TokenMaskTest, TheTablesAgreeWithTheWalkOnOtherGrammars) {
  const char* grammars[] = {
      R"g(root ::= expr
expr ::= term (("+" | "-") term)*
term ::= factor (("*" | "/") factor)*
factor ::= num | "(" ws expr ws ")" | "-" factor
num ::= [0-9]+ ("." [0-9]+)?
ws ::= " "?)g",
      R"g(root ::= item ("," item)* "."
item ::= a | b
a ::= "ab" [a-c]* | "a" [^,.]{0,3}
b ::= "é" | "✓" [é✓]? | [\u0100-\u01FF]+)g",
      R"g(root ::= line+
line ::= word (" " word)* "\n"
word ::= [a-z]+ | "\"" [^"\n]* "\"" | opt "x"
opt ::= "y"?)g",
  };
  // The texts' characters, as tokens alone and in random runs.
  std::vector<std::string> vocab = {"", "\xc3", "\xa9", "\xc3\xa9", "\xe2\x9c\x93", "\xc4",
                                    "\xc4\x80", "\xc5\xbf", "\xe2", "\xe2\x9c"};
  for (int b = 1; b < 128; ++b) vocab.push_back(std::string(1, static_cast<char>(b)));
  const std::string chars[] = {"a", "b", "c", "x", "y", "0", "1", "9", ".", ",", "+",
                               "-", "*", "(", ")", " ", "\n", "\"", "\xc3\xa9",
                               "\xe2\x9c\x93", "\xc4\x80", "\xc3"};
  std::mt19937 rng(11);
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    for (size_t n = 1 + rng() % 5; n > 0; --n) s += chars[rng() % std::size(chars)];
    vocab.push_back(s);
  }
  TokenOrder order;
  order.Build(vocab.size(), [&](int32_t id) { return std::string_view(vocab[id]); });
  for (const char* text : grammars) {
    std::vector<uint32_t> words;
    ASSERT_TRUE(CompileGbnf(text, "root", &words).ok()) << text;
    Program program;
    ASSERT_TRUE(program.Bind(words.data(), words.size()).ok());
    TokenMask mask;
    ASSERT_TRUE(mask.Build(program, order, MatcherLimits()).ok());
    std::vector<uint64_t> memory(GrammarMatcher::RequiredBytes(MatcherLimits()) / 8 + 1);
    GrammarMatcher m;
    ASSERT_TRUE(m.Init(&program, MatcherLimits(), memory.data(), memory.size() * 8).ok());
    std::vector<uint32_t> walked(order.mask_words()), tabled(order.mask_words());
    size_t steps = 0;
    for (int run = 0; run < 20; ++run) {
      ASSERT_TRUE(m.Reset().ok());
      // A random walk: each step takes a random allowed token, up to 40 of them.
      for (int step = 0; step < 40; ++step, ++steps) {
        size_t count = 0, tabled_count = 0;
        ASSERT_TRUE(TokenMask::AllowedByWalk(&m, order, walked.data(), &count).ok());
        ASSERT_TRUE(mask.Allowed(&m, tabled.data(), &tabled_count).ok());
        ASSERT_EQ(walked, tabled) << text << " run " << run << " step " << step;
        ASSERT_EQ(count, tabled_count);
        if (count == 0) break;
        size_t pick = rng() % count;
        for (size_t id = 0; id < vocab.size(); ++id) {
          if (Has(walked, id) && pick-- == 0) {
            for (char c : vocab[id]) ASSERT_TRUE(m.AcceptByte(static_cast<uint8_t>(c)).ok());
            break;
          }
        }
      }
    }
    EXPECT_GT(steps, 60u) << text;
  }
}

// A token that starts a code point no stack allows is refused at its first byte, so a
// generation never ends inside a code point nothing can finish.
TEST_F(TokenMaskTest, AFirstByteNoAllowedCodePointHasIsRefused) {
  GrammarMatcher m;
  std::vector<uint64_t> memory;
  Start(&m, &memory, "[");
  EXPECT_EQ(m.AcceptByte(0xC3).code(), StatusCode::kInvalidArgument);  // numbers only
  EXPECT_FALSE(m.holding());
  ASSERT_TRUE(m.AcceptByte('"').ok());  // in a string, é is allowed
  EXPECT_TRUE(m.AcceptByte(0xC3).ok());
  EXPECT_TRUE(m.holding());
}

TEST_F(TokenMaskTest, ATokenLongerThanTheWalkIsTriedAlone) {
  vocab_.push_back(std::string(300, ' '));
  vocab_.push_back(std::string(300, 'x'));
  TokenOrder order;
  order.Build(vocab_.size(), [this](int32_t id) { return std::string_view(vocab_[id]); });
  GrammarMatcher m;
  std::vector<uint64_t> memory;
  Start(&m, &memory, "[");
  TokenMask mask;
  ASSERT_TRUE(mask.Build(program_, order, MatcherLimits()).ok());
  std::vector<uint32_t> bits(order.mask_words());
  size_t count = 0;
  for (int tables = 0; tables < 2; ++tables) {
    ASSERT_TRUE((tables ? mask.Allowed(&m, bits.data(), &count)
                        : TokenMask::AllowedByWalk(&m, order, bits.data(), &count)).ok());
    EXPECT_TRUE(Has(bits, vocab_.size() - 2));   // spaces after "["
    EXPECT_FALSE(Has(bits, vocab_.size() - 1));  // x is not JSON
  }
  EXPECT_TRUE(m.AcceptByte(']').ok());  // the state is still "["
  EXPECT_TRUE(m.CanEnd());
}

}  // namespace
}  // namespace ember::grammar
