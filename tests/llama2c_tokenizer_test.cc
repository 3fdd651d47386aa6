// Tokenizer on llama2.c's vocabularies (stories260K's, converted with the llama2.c
// importer, and Llama 2's): SentencePiece-style encoding, decoding back to the same text,
// byte fallback, refusal of bad input, what stops generation, and the O(n log n) merge
// against llama2.c's quadratic one on random and long texts.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/text/tokenizer.h"
#include "testing/bpe_reference.h"
#include "testing/testing.h"
#include "tests/stories260k.h"
#include "tools/convert/llama2c/llama2c_import.h"
#include "tools/util/files.h"

namespace ember {
namespace {

using testing::EncodeExact;
using testing::ReferenceEncodeSentencePiece;

class TokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HaveModel("llama2c/stories260K/tok512.bin")) GTEST_SKIP();
    auto model = Model::Open(testing::Stories260KPath().c_str());
    ASSERT_TRUE(model.ok()) << model.status().message();
    model_ = std::move(*model);
  }

  std::vector<int32_t> Encode(const std::string& text, bool bos = true) {
    std::vector<int32_t> ids(tok().EncodeCapacity(text.size()));
    size_t n = 0;
    Status s = tok().Encode(text, bos, ids.data(), ids.size(), &n);
    EXPECT_TRUE(s.ok()) << s.message();
    ids.resize(n);
    return ids;
  }

  std::string Decode(const std::vector<int32_t>& ids) {
    std::string text;
    for (size_t i = 0; i < ids.size(); ++i) {
      text.append(tok().Decode(i ? ids[i - 1] : -1, ids[i]));
    }
    return text;
  }

  const Tokenizer& tok() { return model_->tokenizer(); }
  std::unique_ptr<Model> model_;
};

TEST_F(TokenizerTest, SpecialTokens) {
  EXPECT_EQ(tok().vocab_size(), 512u);
  EXPECT_EQ(tok().bos_id(), 1);
  EXPECT_EQ(tok().eos_id(), 2);
  EXPECT_EQ(Encode(""), std::vector<int32_t>{1});
  EXPECT_TRUE(Encode("", false).empty());
}

// llama2.c models end generation at EOS and at BOS (a new story), as run.c does.
TEST_F(TokenizerTest, Llama2cModelsStopAtEosAndBos) {
  EXPECT_TRUE(tok().tables().has_stop_ids);
  EXPECT_TRUE(tok().IsStop(2));
  EXPECT_TRUE(tok().IsStop(1));
  EXPECT_FALSE(tok().IsStop(0));
  EXPECT_FALSE(tok().IsStop(3));
}

// A file written before stop ids existed keeps its old behaviour: EOS and BOS.
TEST_F(TokenizerTest, FilesWithoutStopIdsStopAtEosAndBos) {
  TokenizerTables tables = tok().tables();
  tables.has_stop_ids = false;
  tables.stop_ids = nullptr;
  tables.num_stop_ids = 0;
  Tokenizer old;
  ASSERT_TRUE(old.Init(tables).ok());
  EXPECT_TRUE(old.IsStop(2));
  EXPECT_TRUE(old.IsStop(1));
  EXPECT_FALSE(old.IsStop(3));
  EXPECT_FALSE(old.IsStop(-1));
}

TEST_F(TokenizerTest, MergesToTheVocabularyPieces) {
  // The golden run's first tokens decode to "Once upon a time": encoding the text gives
  // the same ids, since every piece is the result of merging by score.
  const std::vector<int32_t> ids = Encode("Once upon a time");
  const std::vector<int32_t>& golden = testing::Stories260KGolden();
  ASSERT_GE(ids.size(), 2u);
  EXPECT_EQ(ids[0], 1);
  std::vector<int32_t> expected = {1};
  std::string text;
  for (int32_t id : golden) {
    text.append(tok().piece(id));
    expected.push_back(id);
    if (text == " Once upon a time") break;
  }
  ASSERT_EQ(text, " Once upon a time");
  EXPECT_EQ(ids, expected);
}

TEST_F(TokenizerTest, RoundTripsText) {
  for (const std::string text :
       {"Lily saw a big, red ball.", "  two leading spaces", "tabs\tand\nnewlines\n",
        "digits 0123456789",
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad\xe6\x96\x87"}) {
    EXPECT_EQ(Decode(Encode(text)), text) << text;
  }
}

TEST_F(TokenizerTest, UnknownCharactersFallBackToBytes) {
  // "中" is not in a 512-piece vocabulary: its three UTF-8 bytes become <0xE4> <0xB8>
  // <0xAD>.
  const std::vector<int32_t> ids = Encode("\xe4\xb8\xad", false);
  ASSERT_EQ(ids.size(), 4u);  // dummy-prefix space, then three byte tokens
  EXPECT_EQ(tok().piece(ids[1]), "<0xE4>");
  EXPECT_EQ(tok().type(ids[1]), TokenType::kByte);
  EXPECT_EQ(tok().Decode(ids[1], ids[2]), "\xb8");
}

TEST_F(TokenizerTest, DecodeStripsTheDummyPrefixAfterBosOnly) {
  const int32_t once = tok().Find(" Once");
  ASSERT_GE(once, 0);
  EXPECT_EQ(tok().Decode(1, once), "Once");
  EXPECT_EQ(tok().Decode(once, once), " Once");
  EXPECT_EQ(tok().Decode(-1, 1), "");  // control tokens print nothing
}

TEST_F(TokenizerTest, RejectsInvalidUtf8) {
  std::vector<int32_t> ids(64);
  size_t n = 0;
  for (const std::string bad :
       {"\xff", "abc\xc3", "\xc0\xaf", "\xed\xa0\x80", "x\xf4\x90\x80\x80"}) {
    Status s = tok().Encode(bad, true, ids.data(), ids.size(), &n);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(std::string(s.message()).find("not valid UTF-8"), std::string::npos);
  }
}

TEST_F(TokenizerTest, RejectsTooSmallBuffer) {
  std::vector<int32_t> ids(4);
  size_t n = 0;
  Status s = tok().Encode("a long enough text", true, ids.data(), ids.size(), &n);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
}

// Random texts up to a few thousand bytes encode as the reference does, id for id.
void ExpectSameAsReference(const Tokenizer& tok, int num_texts, size_t max_bytes,
                           uint32_t seed) {
  std::mt19937 rng(seed);
  for (int i = 0; i < num_texts; ++i) {
    const size_t bytes = std::uniform_int_distribution<size_t>(0, max_bytes)(rng);
    const std::string text = testing::RandomText(tok, bytes, &rng);
    const bool bos = i % 2 == 0;
    ASSERT_EQ(EncodeExact(tok, text, bos), ReferenceEncodeSentencePiece(tok, text, bos))
        << "text " << i << " of " << text.size() << " bytes: '" << text << "'";
  }
}

// Long prompts: story text, one letter and spaces (the benchmark
// tools/bench/tokenize_bench measures 1 MiB). Each decodes back to its text, and the
// story merges to far fewer tokens than bytes.
void ExpectEncodesLongTexts(const Tokenizer& tok, size_t bytes) {
  std::string story;
  while (story.size() < bytes) {
    story +=
        "Once upon a time, there was a little girl named Lily. She loved to play "
        "outside in the sunshine. One day, she saw a big, red ball in the park.\n";
  }
  for (const std::string& text :
       {story, std::string(bytes, 'a'), std::string(bytes, ' ')}) {
    const std::vector<int32_t> ids = EncodeExact(tok, text, true);
    ASSERT_GT(ids.size(), 1u);
    if (text == story) {
      EXPECT_LT(ids.size(), text.size() / 2) << "merged far too little";
    }
    std::string decoded;
    for (size_t i = 1; i < ids.size(); ++i) {
      decoded.append(tok.Decode(ids[i - 1], ids[i]));
    }
    EXPECT_EQ(decoded, text) << text.substr(0, 20);
  }
}

TEST_F(TokenizerTest, MatchesTheQuadraticMergeOnRandomTexts) {
  ExpectSameAsReference(tok(), 300, 600, 1);
  ExpectSameAsReference(tok(), 8, 4000, 2);
  // One letter, one character with no piece, white space: long runs of equal pairs.
  for (const std::string unit : {"a", "ab", " ", "\n", "\xe4\xb8\xad", "Once upon "}) {
    std::string text;
    while (text.size() < 3000) text += unit;
    EXPECT_EQ(EncodeExact(tok(), text, true),
              ReferenceEncodeSentencePiece(tok(), text, true))
        << unit;
  }
}

TEST(TokenizerLlamaTest, MatchesTheQuadraticMergeOnRandomTexts) {
  if (!testing::HaveModel("llama2c/tokenizer.bin")) return;
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(
      tools::ReadFile(testing::ModelsDir() + "/llama2c/tokenizer.bin", &bytes).ok());
  TokenizerSpec spec;
  const Status s = tools::ParseLlama2cTokenizer(bytes, 32000, &spec);
  ASSERT_TRUE(s.ok()) << s.message();
  auto model =
      Model::Open(testing::WriteModelAroundTokenizer(spec, "llama_vocab").c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Tokenizer& tok = (*model)->tokenizer();
  for (uint32_t id = 0; id < tok.vocab_size(); ++id) {  // the reference relies on Find
    if (tok.type(id) == TokenType::kNormal) {
      ASSERT_EQ(tok.Find(tok.piece(id)), int32_t(id));
    }
  }
  ExpectSameAsReference(tok, 100, 600, 3);
  ExpectSameAsReference(tok, 3, 3000, 4);
  ExpectEncodesLongTexts(tok, 256 * 1024);
}

TEST_F(TokenizerTest, EncodesLongTexts) { ExpectEncodesLongTexts(tok(), 256 * 1024); }

}  // namespace
}  // namespace ember
