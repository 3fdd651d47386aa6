// Pre-tokenizers (GPT-2's, Llama 3's, Qwen2's, SmolLM's) and Unicode classes: chunks
// worked out by hand from each pattern.
#include "runtime/text/pretokenizer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/text/unicode.h"

namespace ember {
namespace {

std::vector<std::string> Chunks(const std::string& text,
                                PreTokenizerKind kind = PreTokenizerKind::kGpt2) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = ChunkEnd(kind, text, pos);
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

std::vector<std::string> Llama3(const std::string& text) {
  return Chunks(text, PreTokenizerKind::kLlama3);
}
std::vector<std::string> Qwen2(const std::string& text) {
  return Chunks(text, PreTokenizerKind::kQwen2);
}
std::vector<std::string> SmolLm(const std::string& text) {
  return Chunks(text, PreTokenizerKind::kSmolLm);
}

TEST(Llama3PretokenizerTest, ContractionsInEitherCase) {
  EXPECT_EQ(Llama3("I'M you'LL we'Re"), (V{"I", "'M", " you", "'LL", " we", "'Re"}));
  EXPECT_EQ(Llama3("'s'S 'd"), (V{"'s", "'S", " '", "d"}));
  // Not a contraction: an apostrophe before a letter run joins it (one "other" prefix).
  EXPECT_EQ(Llama3("'sup y'all"), (V{"'s", "up", " y", "'all"}));
  EXPECT_EQ(Llama3("''s"), (V{"''", "s"}));  // the first ' is not followed by s
}

TEST(Llama3PretokenizerTest, LettersTakeOnePrefix) {
  // [^\r\n\p{L}\p{N}]?\p{L}+: a space, tab, punctuation or other white space before a
  // word joins it; CR, LF and digits do not.
  EXPECT_EQ(Llama3("(word \tx \xE3\x80\x80y"),
            (V{"(word", " ", "\tx", " ", "\xE3\x80\x80y"}));
  EXPECT_EQ(Llama3("\nword 1word"), (V{"\n", "word", " ", "1", "word"}));
  EXPECT_EQ(Llama3("((word"), (V{"((", "word"}));
}

TEST(Llama3PretokenizerTest, DigitsInRunsOfThree) {
  EXPECT_EQ(Llama3("1234567 12"), (V{"123", "456", "7", " ", "12"}));
  EXPECT_EQ(Qwen2("1234 x1"), (V{"1", "2", "3", "4", " x", "1"}));
  // \p{N} is any number: Arabic-Indic digits, one half, Roman twelve.
  EXPECT_EQ(Llama3("\xD9\xA1\xD9\xA2\xD9\xA3\xD9\xA4\xC2\xBD\xE2\x85\xAB"),
            (V{"\xD9\xA1\xD9\xA2\xD9\xA3", "\xD9\xA4\xC2\xBD\xE2\x85\xAB"}));
}

TEST(Llama3PretokenizerTest, PunctuationTakesItsLineBreaks) {
  // " ?[^\s\p{L}\p{N}]+[\r\n]*"
  EXPECT_EQ(Llama3("a, b!!\n\nc"), (V{"a", ",", " b", "!!\n\n", "c"}));
  EXPECT_EQ(Llama3(" ...\r\n x"), (V{" ...\r\n", " x"}));
  EXPECT_EQ(Llama3("\t!"), (V{"\t", "!"}));  // only an ASCII space is the optional prefix
}

TEST(Llama3PretokenizerTest, WhiteSpace) {
  // \s*[\r\n]+: up to and with the run's last line break.
  EXPECT_EQ(Llama3("a  \n \n  b"), (V{"a", "  \n \n", " ", " b"}));
  EXPECT_EQ(Llama3("\r\n\r\n"), (V{"\r\n\r\n"}));
  // \s+(?!\S): the run less its last character before a non-space; all of it at the end.
  EXPECT_EQ(Llama3("a    b   "), (V{"a", "   ", " b", "   "}));
  EXPECT_EQ(Llama3("a \t!"), (V{"a", " ", "\t", "!"}));
  EXPECT_EQ(Llama3(" "), (V{" "}));
}

TEST(SmolLmPretokenizerTest, DigitsAloneThenGpt2) {
  EXPECT_EQ(SmolLm("abc123 4x"), (V{"abc", "1", "2", "3", " ", "4", "x"}));
  // The pattern's "end of text" is the next digit: a space before it stands alone.
  EXPECT_EQ(SmolLm("a  1"), (V{"a", "  ", "1"}));
  EXPECT_EQ(SmolLm("it's 3's"), (V{"it", "'s", " ", "3", "'s"}));
  EXPECT_EQ(Chunks("a  1"), (V{"a", " ", " 1"}));  // GPT-2's own pattern
}

// JavaScript's \s differs from the White_Space property on two code points; ember
// follows the property, as Oniguruma (Hugging Face tokenizers) and llama.cpp do, and the
// oracle corpus leaves them out.
TEST(Llama3PretokenizerTest, NextLineIsWhiteSpaceByteOrderMarkIsNot) {
  EXPECT_EQ(Llama3("a\xC2\x85"
                   "b"),
            (V{"a",
               "\xC2\x85"
               "b"}));  // U+0085, letter
  EXPECT_EQ(Llama3("a\xEF\xBB\xBF"
                   "b"),
            (V{"a",
               "\xEF\xBB\xBF"
               "b"}));                                             // U+FEFF: other
  EXPECT_EQ(Llama3("\xC2\x85\xC2\x85"), (V{"\xC2\x85\xC2\x85"}));  // white space
  EXPECT_EQ(Llama3("\xEF\xBB\xBF\xEF\xBB\xBF!"), (V{"\xEF\xBB\xBF\xEF\xBB\xBF!"}));
}

TEST(PretokenizerTest, NoneIsTheWholeText) {
  EXPECT_EQ(Chunks("a b 1", PreTokenizerKind::kNone), (V{"a b 1"}));
  EXPECT_STREQ(PreTokenizerName(PreTokenizerKind::kLlama3), "llama3");
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
