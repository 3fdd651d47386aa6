// GPT-2 pre-tokenizer and Unicode classes: chunks worked out by hand from the pattern.
#include "runtime/pretokenizer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/unicode.h"

namespace ember {
namespace {

std::vector<std::string> Chunks(const std::string& text) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = Gpt2ChunkEnd(text, pos);
    EXPECT_GT(end, pos);
    EXPECT_LE(end, text.size());
    out.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

using V = std::vector<std::string>;

TEST(Gpt2PretokenizerTest, WordsAndSpaces) {
  EXPECT_EQ(Chunks("Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(Chunks("  Hello"), (V{" ", " Hello"}));
  EXPECT_EQ(Chunks("    Hello\n    Hello"), (V{"   ", " Hello", "\n   ", " Hello"}));
  EXPECT_EQ(Chunks("a  "), (V{"a", "  "}));
  EXPECT_EQ(Chunks(" "), (V{" "}));
  EXPECT_EQ(Chunks("\t\n"), (V{"\t\n"}));
  EXPECT_EQ(Chunks("\n ="), (V{"\n", " ="}));
  EXPECT_EQ(Chunks("x \t y"), (V{"x", " \t", " y"}));
  EXPECT_EQ(Chunks("x\ty"), (V{"x", "\t", "y"}));
}

TEST(Gpt2PretokenizerTest, Contractions) {
  EXPECT_EQ(Chunks("I've 'RE"), (V{"I", "'ve", " '", "RE"}));
  EXPECT_EQ(Chunks("'s'"), (V{"'s", "'"}));
  EXPECT_EQ(Chunks("y'all"), (V{"y", "'", "all"}));
  EXPECT_EQ(Chunks("she'll'd"), (V{"she", "'ll", "'d"}));
  EXPECT_EQ(Chunks("''s"), (V{"''", "s"}));
}

TEST(Gpt2PretokenizerTest, NumbersPunctuationAndUnicode) {
  EXPECT_EQ(Chunks("3.3 3...3"), (V{"3", ".", "3", " 3", "...", "3"}));
  EXPECT_EQ(Chunks("ied 4 \xC2\xBD months"), (V{"ied", " 4", " \xC2\xBD", " months"}));
  EXPECT_EQ(Chunks("F\xC3\xBChrer"), (V{"F\xC3\xBChrer"}));
  // CJK ideographs and Latin letters are all \p{L}: one chunk.
  EXPECT_EQ(Chunks("\xE6\x88\x91\xE6\x83\xB3"
                   "apple1314"),
            (V{"\xE6\x88\x91\xE6\x83\xB3"
               "apple",
               "1314"}));
  // Emoji, zero-width joiner and variation selector are all "other": one chunk.
  EXPECT_EQ(Chunks(" \xF0\x9F\x98\xB6\xE2\x80\x8D\xF0\x9F\x8C\xAB\xEF\xB8\x8F ("),
            (V{" \xF0\x9F\x98\xB6\xE2\x80\x8D\xF0\x9F\x8C\xAB\xEF\xB8\x8F", " ("}));
  // No-break space is white space but not the optional ' ' prefix.
  EXPECT_EQ(Chunks("a\xC2\xA0"
                   "b"),
            (V{"a", "\xC2\xA0", "b"}));
}

TEST(UnicodeTest, Classes) {
  EXPECT_EQ(ClassifyCodePoint('a'), CharClass::kLetter);
  EXPECT_EQ(ClassifyCodePoint('7'), CharClass::kNumber);
  EXPECT_EQ(ClassifyCodePoint('\v'), CharClass::kSpace);
  EXPECT_EQ(ClassifyCodePoint(0x1C), CharClass::kOther);  // not White_Space
  EXPECT_EQ(ClassifyCodePoint('_'), CharClass::kOther);
  EXPECT_EQ(ClassifyCodePoint(0x85), CharClass::kSpace);
  EXPECT_EQ(ClassifyCodePoint(0xA0), CharClass::kSpace);
  EXPECT_EQ(ClassifyCodePoint(0xBD), CharClass::kNumber);   // 1/2, No
  EXPECT_EQ(ClassifyCodePoint(0xFC), CharClass::kLetter);   // u umlaut
  EXPECT_EQ(ClassifyCodePoint(0x663), CharClass::kNumber);  // Arabic-Indic three
  EXPECT_EQ(ClassifyCodePoint(0x17B6), CharClass::kOther);  // Khmer vowel sign, Mc
  EXPECT_EQ(ClassifyCodePoint(0x200D), CharClass::kOther);
  EXPECT_EQ(ClassifyCodePoint(0x2028), CharClass::kSpace);
  EXPECT_EQ(ClassifyCodePoint(0x3000), CharClass::kSpace);
  EXPECT_EQ(ClassifyCodePoint(0x4E00), CharClass::kLetter);  // a First/Last range
  EXPECT_EQ(ClassifyCodePoint(0x9FA0), CharClass::kLetter);  // inside it
  EXPECT_EQ(ClassifyCodePoint(0xAC01), CharClass::kLetter);  // Hangul syllables
  EXPECT_EQ(ClassifyCodePoint(0x1F680), CharClass::kOther);  // rocket
  EXPECT_EQ(ClassifyCodePoint(0x10FFFF), CharClass::kOther);
  EXPECT_EQ(ClassifyCodePoint(0x110000), CharClass::kOther);
  EXPECT_EQ(ClassifyCodePoint(0xFFFFFFFF), CharClass::kOther);
}

}  // namespace
}  // namespace ember
