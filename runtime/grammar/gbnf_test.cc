// The GBNF compiler: what it refuses (with line and column), and the program it writes
// checked by Program::Bind, which refuses any damaged copy.
#include "runtime/grammar/gbnf.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/grammar/grammar_program.h"

namespace ember::grammar {
namespace {

Status Compile(const std::string& text, std::vector<uint32_t>* words = nullptr) {
  std::vector<uint32_t> scratch;
  return CompileGbnf(text, "root", words ? words : &scratch);
}

TEST(GbnfTest, MalformedGrammarsNameWhereAndWhat) {
  const struct {
    const char* text;
    const char* message;
  } kCases[] = {
      {"root ::= \"abc", "line 1, column 10: unterminated string"},
      {"root ::= [a-z", "line 1, column 10: unterminated character class"},
      {"root ::= x\n", "line 1, column 10: undefined rule 'x'"},
      {"root ::= \"a\"\nroot ::= \"b\"", "line 2, column 1: rule 'root' is defined twice"},
      {"rot ::= \"a\"", "no rule 'root' to start from"},
      {"root ::= \"\\q\"", "line 1, column 11: unknown escape"},
      {"root ::= \"\\x4\"", "line 1, column 13: expected 2 hex digits"},
      {"root ::= [\\U00110000]", "code point past U+10FFFF"},
      {"root ::= [z-a]", "line 1, column 11: a range whose end is before its start"},
      {"root ::= \"a\"{3,2}", "line 1, column 13: {m,n} with n < m"},
      {"root ::= \"a\"{99999}", "repetition count over 10000"},
      {"root ::= * \"a\"", "line 1, column 10: a repetition with nothing before it"},
      {"root ::= (\"a\"", "expected ')'"},
      {"root = \"a\"", "line 1, column 6: expected '::='"},
      {"root ::= \"a\" )", "line 1, column 14: expected the end of the rule"},
      {"root ::= \"\xff\"", "line 1, column 11: invalid UTF-8"},
      {"root ::= root \"a\" | \"b\"", "rule 'root' (line 1, column 1) is left-recursive"},
      {"root ::= x | \"c\"\nx ::= y? root \"a\"\ny ::= \"b\"",
       "rule 'root' (line 1, column 1) is left-recursive"},
      {"root ::= [^\\x00-\\U0010FFFF]", "rule 'root' (line 1, column 1) matches no text"},
      {"root ::= \"a\" root", "rule 'root' (line 1, column 1) matches no text"},
  };
  for (const auto& c : kCases) {
    const Status s = Compile(c.text);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos)
        << c.text << "\n  got: " << s.message();
  }
}

TEST(GbnfTest, NestingAndGrowthAreBounded) {
  // 64 groups deep compile; 65 are refused, as are 100,000 (no stack overflow).
  for (int depth : {64, 65, 100000}) {
    const std::string text =
        "root ::= " + std::string(depth, '(') + "\"a\"" + std::string(depth, ')');
    const Status s = Compile(text);
    if (depth <= kMaxNesting) {
      EXPECT_TRUE(s.ok()) << s.message();
    } else {
      EXPECT_NE(std::string(s.message()).find("groups nested deeper than 64"),
                std::string::npos)
          << s.message();
    }
  }
  // Repetitions copy their item: 20 bytes of text may ask for millions of symbols, which
  // are refused before they are built.
  const Status s = Compile("root ::= \"" + std::string(500, 'a') + "\"{10000}");
  EXPECT_NE(std::string(s.message()).find("grows past"), std::string::npos) << s.message();
}

TEST(GbnfTest, TheFormatsSyntaxCompiles) {
  const char* const kGrammars[] = {
      // Comments, newlines after ::= and |, inside groups; empty alternatives.
      "# a comment\nroot ::=\n  item+ # trailing\n\nitem ::= \"- \" [^\\r\\n]+ \"\\n\" |\n"
      "  \"* \" (\n    [a-z]\n    | [0-9]\n  )* \"\\n\"\n",
      "root ::= ws \"x\"{2} \"y\"{1,} \"z\"{0,3} [\\u00e9\\U0001F600-\\U0001F64F] .\n"
      "ws ::= | \" \" | \"\\n\" [ \\t]{0,20}",
      "root ::= [-a] [a-] [\\[\\]\\\\\"] [^\"\\\\\\x7F\\x00-\\x1F] \"\\\"\"",
      "Root-2 ::= \"a\"\nroot ::= Root-2 camelCase\ncamelCase ::= \"b\"",
      "root ::= [ぁ-ゟ]+ ([ \\t\\n] [一-鿿]+)*",
  };
  for (const char* text : kGrammars) {
    std::vector<uint32_t> words;
    const Status s = Compile(text, &words);
    ASSERT_TRUE(s.ok()) << text << "\n  " << s.message();
    Program program;
    EXPECT_TRUE(program.Bind(words.data(), words.size()).ok()) << text;
  }
}

// Every single-word change to a program is refused by Bind or binds a program whose
// tables stay in range (the matcher's limits bound the rest).
TEST(GbnfTest, BindRefusesDamagedPrograms) {
  std::vector<uint32_t> words;
  ASSERT_TRUE(Compile("root ::= (\"ab\" | [x-z]+ r)? \"c\"\nr ::= [0-9]{2}", &words).ok());
  Program program;
  ASSERT_TRUE(program.Bind(words.data(), words.size()).ok());
  EXPECT_FALSE(program.Bind(words.data(), words.size() - 1).ok());
  EXPECT_FALSE(program.Bind(nullptr, 0).ok());
  size_t refused = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    for (uint32_t flip : {1u, 0x80u, 0x10000000u, 0xFFFFFFFFu}) {
      std::vector<uint32_t> damaged = words;
      damaged[i] ^= flip;
      if (!program.Bind(damaged.data(), damaged.size()).ok()) ++refused;
    }
  }
  EXPECT_GT(refused, words.size());  // most damage is seen
  ASSERT_TRUE(program.Bind(words.data(), words.size()).ok());
}

}  // namespace
}  // namespace ember::grammar
