// BertNormalizer and BertPreTokenizer on hand-picked code points, with the expected
// results written from Hugging Face's definitions (tokenizers' normalizers/bert.rs and
// pre_tokenizers/bert.rs): clean text, CJK ranges, accents, Rust's char::to_lowercase,
// punctuation. tests/hf_tokenizer_oracle_test.cc compares whole tokenizers with
// transformers.js.
#include "runtime/text/bert_normalizer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ember {
namespace {

std::string Normalize(const std::string& text, bool clean, bool chinese, bool strip,
                      bool lower) {
  BertNormalizerOptions options;
  options.clean_text = clean;
  options.handle_chinese_chars = chinese;
  options.strip_accents = strip;
  options.lowercase = lower;
  std::string out(kBertMaxGrowth * text.size() + 1, '\x7f');
  out.resize(BertNormalize(text, options, &out[0]));
  return out;
}

std::vector<std::string> Chunks(const std::string& text) {
  std::vector<std::string> chunks;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = BertChunkEnd(text, pos);
    EXPECT_GT(end, pos);
    chunks.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return chunks;
}

TEST(BertNormalizerTest, CleanTextDropsControlsAndMapsSpaces) {
  // U+0000, U+FFFD, a Cc (U+0007), a Cf (U+200B), a Co (U+E000) are dropped; \t \n \r,
  // U+00A0 and U+3000 (white space) become ' '; U+0085 is Cc: dropped before the
  // white-space test, as the Rust code does.
  const std::string text = std::string("a\0b", 3) +
                           "\xEF\xBF\xBD\x07\xE2\x80\x8B\xEE\x80\x80" + "c\td\ne\rf" +
                           "\xC2\xA0g\xE3\x80\x80h\xC2\x85i";
  EXPECT_EQ(Normalize(text, true, false, false, false), "abc d e f g hi");
  // Off: all of it is kept.
  EXPECT_EQ(Normalize(text, false, false, false, false), text);
}

TEST(BertNormalizerTest, ChineseCharsAreSpaced) {
  // U+4E2D U+6587 (CJK), U+3042 (Hiragana, not CJK), U+2B820 (extension E: outside
  // Hugging Face's ranges), U+2B920 (inside), U+F900 (compatibility ideograph).
  EXPECT_EQ(Normalize("a\xE4\xB8\xAD\xE6\x96\x87"
                      "b",
                      false, true, false, false),
            "a \xE4\xB8\xAD  \xE6\x96\x87 b");
  EXPECT_EQ(Normalize("\xE3\x81\x82", false, true, false, false), "\xE3\x81\x82");
  EXPECT_EQ(Normalize("\xF0\xAB\xA0\xA0", false, true, false, false), "\xF0\xAB\xA0\xA0");
  EXPECT_EQ(Normalize("\xF0\xAB\xA4\xA0", false, true, false, false),
            " \xF0\xAB\xA4\xA0 ");
  EXPECT_TRUE(IsBertChineseChar(0xF900));
  EXPECT_FALSE(IsBertChineseChar(0x2B820));
  EXPECT_FALSE(IsBertChineseChar(0xAC00));  // Hangul
}

TEST(BertNormalizerTest, StripAccentsAndLowercase) {
  // "Ébène" "Ångström" "naïve": decomposed, Mn dropped; precomposed or not.
  EXPECT_EQ(Normalize("\xC3\x89"
                      "b\xC3\xA8ne",
                      false, false, true, false),
            "Ebene");
  EXPECT_EQ(Normalize("e\xCC\x81", false, false, true, false), "e");
  EXPECT_EQ(Normalize("\xC3\x85ngstr\xC3\xB6m", false, false, true, true), "angstrom");
  // Lowercase alone keeps accents, precomposed.
  EXPECT_EQ(Normalize("\xC3\x89T\xC3\x89", false, false, false, true),
            "\xC3\xA9t\xC3\xA9");
  // Hangul decomposes to jamo (letters, kept).
  EXPECT_EQ(Normalize("\xEA\xB0\x80", false, false, true, false),
            "\xE1\x84\x80\xE1\x85\xA1");
  // A Mc mark stays (U+0903), an Mn goes (U+0901).
  EXPECT_EQ(Normalize("\xE0\xA4\x95\xE0\xA4\x83\xE0\xA4\x81", false, false, true, false),
            "\xE0\xA4\x95\xE0\xA4\x83");
}

TEST(BertNormalizerTest, LowercaseIsRustsCharToLowercase) {
  // Final sigma is not applied (char by char): "ΟΔΟΣ" -> "οδοσ".
  EXPECT_EQ(Normalize("\xCE\x9F\xCE\x94\xCE\x9F\xCE\xA3", false, false, false, true),
            "\xCE\xBF\xCE\xB4\xCE\xBF\xCF\x83");
  // U+0130 -> i U+0307 (SpecialCasing, unconditional); stripped: "i".
  EXPECT_EQ(Normalize("\xC4\xB0", false, false, false, true), "i\xCC\x87");
  EXPECT_EQ(Normalize("\xC4\xB0", false, false, true, true), "i");
  // Kelvin sign -> k; U+023A (2 bytes) -> U+2C65 (3 bytes); U+1E9E -> ß; ß stays.
  EXPECT_EQ(Normalize("\xE2\x84\xAA", false, false, false, true), "k");
  EXPECT_EQ(Normalize("\xC8\xBA", false, false, false, true), "\xE2\xB1\xA5");
  EXPECT_EQ(Normalize("\xE1\xBA\x9E\xC3\x9F", false, false, false, true),
            "\xC3\x9F\xC3\x9F");
  // Deseret (4 bytes) and ASCII.
  EXPECT_EQ(Normalize("\xF0\x90\x90\x80"
                      "Az",
                      false, false, false, true),
            "\xF0\x90\x90\xA8"
            "az");
}

TEST(BertNormalizerTest, GrowthStaysWithinTheBound) {
  // The longest outputs per byte: CJK spaced (3 -> 5), U+0130 lowered (2 -> 3).
  const std::string cjk = "\xE4\xB8\xAD\xF0\xAF\xA0\x80\xC4\xB0\xC8\xBA";
  for (int mask = 0; mask < 16; ++mask) {
    const std::string out = Normalize(cjk, mask & 1, mask & 2, mask & 4, mask & 8);
    EXPECT_LE(out.size(), kBertMaxGrowth * cjk.size());
  }
}

TEST(BertPreTokenizerTest, SplitsOnSpaceAndPunctuation) {
  EXPECT_EQ(
      Chunks("Hello, world!  (x)"),
      (std::vector<std::string>{"Hello", ",", " ", "world", "!", "  ", "(", "x", ")"}));
  // ASCII symbols count as punctuation ($ + < = > ^ ` | ~), as do Unicode P* (U+3002,
  // U+00BF); U+00A9 (So) and U+2260 (Sm) do not.
  EXPECT_EQ(Chunks("a$b+c^d`e|f~g"),
            (std::vector<std::string>{"a", "$", "b", "+", "c", "^", "d", "`", "e", "|",
                                      "f", "~", "g"}));
  EXPECT_EQ(Chunks("x\xE3\x80\x82\xC2\xBFy\xC2\xA9\xE2\x89\xA0z"),
            (std::vector<std::string>{"x", "\xE3\x80\x82", "\xC2\xBF",
                                      "y\xC2\xA9\xE2\x89\xA0z"}));
  // Runs of punctuation are one code point each; white space of any kind splits.
  EXPECT_EQ(Chunks("..."), (std::vector<std::string>{".", ".", "."}));
  EXPECT_EQ(Chunks("a\xE2\x80\x83"
                   "b\tc"),
            (std::vector<std::string>{"a", "\xE2\x80\x83", "b", "\t", "c"}));
  EXPECT_TRUE(IsBertPunctuation('#'));
  EXPECT_TRUE(IsBertPunctuation(0x2014));   // em dash (Pd)
  EXPECT_FALSE(IsBertPunctuation(0x20AC));  // euro sign (Sc)
  EXPECT_TRUE(IsBertSpace(0x85));
  EXPECT_FALSE(IsBertSpace(0xFEFF));
}

}  // namespace
}  // namespace ember
