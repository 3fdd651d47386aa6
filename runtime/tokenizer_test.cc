// Tokenizer: SentencePiece-style encoding on stories260K's vocabulary, decoding back to
// the same text, byte fallback, and refusal of bad input.
#include "runtime/tokenizer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model.h"
#include "tests/testing.h"

namespace ember {
namespace {

class TokenizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HaveModel("llama2c/stories260K/tok512.bin")) GTEST_SKIP();
    auto model = Model::Open(testing::Stories260KPath().c_str());
    ASSERT_TRUE(model.ok()) << model.status().message();
    model_ = std::move(*model);
  }

  std::vector<int32_t> Encode(const std::string& text, bool bos = true) {
    std::vector<int32_t> ids(Tokenizer::EncodeCapacity(text.size()));
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

// Other models end at EOS only: BOS is just a token there.
TEST(TokenizerStopTest, OtherModelsStopAtEosOnly) {
  const testing::AlignedBytes bytes(testing::TinyModelBytes());
  auto model = Model::FromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Tokenizer& tok = (*model)->tokenizer();
  ASSERT_GE(tok.eos_id(), 0);
  ASSERT_GE(tok.bos_id(), 0);
  EXPECT_TRUE(tok.IsStop(tok.eos_id()));
  EXPECT_FALSE(tok.IsStop(tok.bos_id()));
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

}  // namespace
}  // namespace ember
