// WordPiece encoding and decoding on a hand-made vocabulary: greedy longest match with
// continuations, [UNK] for words that cannot be split or are too long, [CLS] ... [SEP],
// added tokens, invalid UTF-8, the work-buffer contract, and Init's checks of the
// WordPiece fields.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/loaded_tokenizer.h"
#include "runtime/text/tokenizer.h"

namespace ember {
namespace {

// Ids: 0 [PAD], 1 [UNK], 2 [CLS], 3 [SEP], 4 [MASK], then the vocabulary as a BERT
// vocab.txt spells it ("##" continuations).
const char* const kVocab[] = {"un",
                              "##aff",
                              "##able",
                              "aff",
                              "able",
                              "the",
                              "##s",
                              "cat",
                              ",",
                              "!",
                              "a",
                              "##b",
                              "b",
                              "\xC3\xA9t\xC3\xA9",
                              "ete",
                              "\xE4\xB8\xAD",
                              "##\xE4\xB8\xAD",
                              "x",
                              "##x"};
constexpr int32_t kFirst = 5;

TokenizerSpec Spec(bool lowercase, bool strip) {
  TokenizerSpec spec;
  spec.kind = TokenizerKind::kWordPiece;
  for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    spec.added.push_back({static_cast<uint32_t>(spec.pieces.size()), special, 0});
    spec.pieces.push_back(special);
    spec.types.push_back(TokenType::kControl);
  }
  for (const char* piece : kVocab) {
    const std::string p = piece;
    spec.pieces.push_back(p.rfind("##", 0) == 0 ? p.substr(2) : " " + p);
    spec.types.push_back(TokenType::kNormal);
  }
  spec.pad_id = 0;
  spec.unk_id = 1;
  spec.bos_id = 2;
  spec.eos_id = 3;
  spec.add_bos = true;
  spec.append_eos = true;
  spec.add_dummy_prefix = false;
  spec.normalizer = Normalization::kBert;
  spec.bert = {true, true, strip, lowercase};
  spec.wordpiece_prefix = "##";
  spec.max_input_chars_per_word = 10;
  return spec;
}

class WordPieceTest : public ::testing::Test {
 protected:
  void Load(const TokenizerSpec& spec) {
    const Status s = LoadTokenizerSpec(spec, "wordpiece test", &loaded_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  std::vector<int32_t> Encode(const std::string& text, bool add_bos = false,
                              bool parse_special = false) {
    const Tokenizer& tok = loaded_.tokenizer;
    std::vector<int32_t> ids(tok.EncodeCapacity(text.size()) + 1, -7);
    size_t n = 0;
    EncodeOptions options;
    options.add_bos = add_bos;
    options.parse_special = parse_special;
    const Status s = tok.Encode(text, options, ids.data(), ids.size() - 1, &n);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(ids.back(), -7) << "wrote past EncodeCapacity";
    ids.resize(n);
    return ids;
  }
  std::string Decode(const std::vector<int32_t>& ids) {
    std::string text;
    int32_t prev = -1;
    for (int32_t id : ids) {
      text += std::string(loaded_.tokenizer.Decode(prev, id));
      prev = id;
    }
    return text;
  }
  LoadedTokenizer loaded_;
};

// Vocabulary index -> id.
int32_t V(int i) { return kFirst + i; }

TEST_F(WordPieceTest, GreedyLongestMatch) {
  Load(Spec(true, true));
  // "unaffable" = un ##aff ##able; "Cats," = cat ##s ,; "ab" = a ##b.
  EXPECT_EQ(Encode("unaffable"), (std::vector<int32_t>{V(0), V(1), V(2)}));
  EXPECT_EQ(Encode("The Cats, ab!"),
            (std::vector<int32_t>{V(5), V(7), V(6), V(8), V(10), V(11), V(9)}));
  // "ba": b then no "##a": the whole word is [UNK]; words around it are not.
  EXPECT_EQ(Encode("a ba a"), (std::vector<int32_t>{V(10), 1, V(10)}));
  // Strip accents and lowercase: "ÉTÉ" -> "ete"; not stripped: "été".
  EXPECT_EQ(Encode("\xC3\x89T\xC3\x89"), (std::vector<int32_t>{V(14)}));
  Load(Spec(true, false));
  EXPECT_EQ(Encode("\xC3\x89T\xC3\x89"), (std::vector<int32_t>{V(13)}));
  // CJK characters are words of their own: never a continuation.
  EXPECT_EQ(Encode("\xE4\xB8\xAD\xE4\xB8\xAD"), (std::vector<int32_t>{V(15), V(15)}));
}

TEST_F(WordPieceTest, LongWordsAreUnknown) {
  Load(Spec(true, true));
  std::vector<int32_t> ten(10, V(18));
  ten[0] = V(17);
  EXPECT_EQ(Encode(std::string(10, 'x')), ten);
  // 11 code points > max_input_chars_per_word (10); counted in code points, not bytes.
  EXPECT_EQ(Encode(std::string(11, 'x') + " x"), (std::vector<int32_t>{1, V(17)}));
  std::string accented;
  for (int i = 0; i < 5; ++i) accented += "\xC3\xA9t";  // 10 code points, 15 bytes
  Load(Spec(false, false));
  EXPECT_EQ(Encode(accented).size(), 1u);  // [UNK]: "é" is not a piece, but not too long
}

TEST_F(WordPieceTest, ClsAndSepAndAddedTokens) {
  Load(Spec(true, true));
  const Tokenizer& tok = loaded_.tokenizer;
  EXPECT_TRUE(tok.append_eos());
  EXPECT_EQ(tok.pad_id(), 0);
  EXPECT_EQ(tok.unk_id(), 1);
  EXPECT_EQ(Encode("the cat", true), (std::vector<int32_t>{2, V(5), V(7), 3}));
  EXPECT_EQ(Encode("", true), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(Encode("the [MASK] cat", false, true), (std::vector<int32_t>{V(5), 4, V(7)}));
  // Without special-token parsing "[MASK]" is text: [ and ] are not pieces, "mask" is
  // not either.
  EXPECT_EQ(Encode("[MASK]", false, false), (std::vector<int32_t>{1, 1, 1}));
}

TEST_F(WordPieceTest, DecodeJoinsContinuations) {
  Load(Spec(true, true));
  EXPECT_EQ(Decode({2, V(5), V(7), V(6), V(8), V(0), V(1), V(2), 3}),
            "the cats , unaffable");
  EXPECT_EQ(Decode({V(0), V(1)}), "unaff");
  EXPECT_EQ(Decode({V(1)}), "aff");  // a continuation first: its bytes
}

TEST_F(WordPieceTest, InvalidUtf8AndSmallBuffers) {
  Load(Spec(true, true));
  const Tokenizer& tok = loaded_.tokenizer;
  int32_t ids[64];
  size_t n = 0;
  EXPECT_FALSE(tok.Encode("ab\xC3", false, ids, 64, &n).ok());
  EXPECT_FALSE(tok.Encode("\xED\xA0\x80", false, ids, 64, &n).ok());  // a surrogate
  EXPECT_EQ(tok.Encode("the cat", false, ids, tok.EncodeCapacity(7) - 1, &n).code(),
            StatusCode::kResourceExhausted);
  // The worst cases of the capacity: every byte a word of its own (punctuation), and
  // text that grows three times (U+0130 lowered, spaced CJK).
  EXPECT_EQ(Encode(std::string(1000, ',')).size(), 1000u);
  std::string grows;
  for (int i = 0; i < 300; ++i) grows += "\xE4\xB8\xAD\xC4\xB0,";
  EXPECT_EQ(Encode(grows, true).size(), 902u);
}

TEST_F(WordPieceTest, InitChecksTheFields) {
  auto refused = [](TokenizerSpec spec) {
    LoadedTokenizer loaded;
    return !LoadTokenizerSpec(spec, "bad", &loaded).ok();
  };
  TokenizerSpec spec = Spec(true, true);
  spec.unk_id = -1;
  EXPECT_TRUE(refused(spec));
  spec = Spec(true, true);
  spec.wordpiece_prefix = std::string(17, '#');
  EXPECT_TRUE(refused(spec));
  spec = Spec(true, true);
  spec.max_input_chars_per_word = 0;
  EXPECT_TRUE(refused(spec));
  spec = Spec(true, true);
  spec.pad_id = 1000;
  EXPECT_TRUE(refused(spec));
  spec = Spec(true, true);
  spec.normalizer = Normalization::kNfc;
  EXPECT_TRUE(refused(spec));
  spec = Spec(true, true);
  spec.pre_tokenizer = PreTokenizerKind::kGpt2;
  EXPECT_TRUE(refused(spec));
  spec = Spec(true, true);
  spec.eos_id = -1;  // append_eos without EOS
  EXPECT_TRUE(refused(spec));
  spec = Spec(true, true);
  spec.kind = TokenizerKind::kSentencePieceBpe;  // BERT's steps without WordPiece
  EXPECT_TRUE(refused(spec));
  spec = Spec(true, true);
  spec.normalizer = Normalization::kNone;  // options without the normalizer
  EXPECT_TRUE(refused(spec));
  spec.bert = {};
  EXPECT_FALSE(refused(spec));
}

}  // namespace
}  // namespace ember
