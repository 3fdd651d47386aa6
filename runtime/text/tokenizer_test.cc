// Tokenizer on hand-made SentencePiece vocabularies: the O(n log n) merge against
// llama2.c's quadratic one with tied scores, NaN scores refused, what stops generation in
// files not from llama2.c, and the encode capacity. Real vocabularies (stories260K's,
// Llama 2's) are end-to-end tests: tests/llama2c_tokenizer_test.cc.
#include "runtime/text/tokenizer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "testing/bpe_reference.h"
#include "testing/testing.h"

namespace ember {
namespace {

using testing::EncodeExact;
using testing::ReferenceEncodeSentencePiece;

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

// A hand-made vocabulary with many equal scores (so the leftmost-first rule decides),
// byte tokens for some bytes only, <unk> for the rest, and a normal piece made of two
// byte tokens' text.
struct SmallVocab {
  std::vector<std::string> pieces;
  std::vector<uint8_t> piece_bytes, types;
  std::vector<uint32_t> offsets, sorted;
  std::vector<float> scores;

  explicit SmallVocab(uint32_t seed) {
    std::mt19937 rng(seed);
    auto add = [&](const std::string& p, TokenType type, float score) {
      if (std::find(pieces.begin(), pieces.end(), p) != pieces.end()) return;
      pieces.push_back(p);
      types.push_back(static_cast<uint8_t>(type));
      scores.push_back(score);
    };
    const float kScores[] = {-0.0f, 0.0f, -1.0f, 1.0f, 2.0f, -3.5f};
    auto score = [&] { return kScores[rng() % 6]; };
    add("<unk>", TokenType::kUnknown, 0);
    add("<s>", TokenType::kControl, 0);
    for (const char* b : {"<0xC3>", "<0xA9>", "<0x0A>", "<0x61>"}) {
      add(b, TokenType::kByte, 0);
    }
    add("<0xC3><0xA9>", TokenType::kNormal, score());
    for (const char* c : {" ", "a", "b", "c", "\xc3\xa9"})
      add(c, TokenType::kNormal, score());
    const std::string alphabet[] = {" ", "a", "b", "c", "\xc3\xa9"};
    for (int i = 0; i < 60; ++i) {
      std::string p;
      for (size_t len = 2 + rng() % 4; len > 0; --len) p += alphabet[rng() % 5];
      add(p, TokenType::kNormal, score());
    }
    offsets.push_back(0);
    for (const std::string& p : pieces) {
      piece_bytes.insert(piece_bytes.end(), p.begin(), p.end());
      offsets.push_back(static_cast<uint32_t>(piece_bytes.size()));
    }
    for (uint32_t i = 0; i < pieces.size(); ++i) {
      const auto type = static_cast<TokenType>(types[i]);
      if (type == TokenType::kNormal) sorted.push_back(i);
    }
    std::sort(sorted.begin(), sorted.end(),
              [&](uint32_t a, uint32_t b) { return pieces[a] < pieces[b]; });
  }

  TokenizerTables Tables() const {
    TokenizerTables t;
    t.kind = TokenizerKind::kSentencePieceBpe;
    t.vocab_size = static_cast<uint32_t>(pieces.size());
    t.piece_bytes = piece_bytes.data();
    t.piece_bytes_size = piece_bytes.size();
    t.piece_offsets = offsets.data();
    t.scores = scores.data();
    t.types = types.data();
    t.sorted_ids = sorted.data();
    t.num_sorted = sorted.size();
    t.bos_id = 1;
    t.unk_id = 0;
    t.max_piece_bytes = 16;
    return t;
  }
};

TEST(TokenizerSmallVocabTest, MatchesTheQuadraticMergeWithTiedScores) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const SmallVocab vocab(seed);
    Tokenizer tok;
    const Status s = tok.Init(vocab.Tables());
    ASSERT_TRUE(s.ok()) << s.message();
    std::mt19937 rng(seed);
    const char* const kUnits[] = {" ",        "a",  "b", "c",
                                  "\xc3\xa9", "\n", "d", "\xe4\xb8\xad"};
    for (int i = 0; i < 40; ++i) {
      std::string text;
      const size_t units = rng() % 300;
      for (size_t u = 0; u < units; ++u) {
        const char* unit = kUnits[rng() % 8];
        for (size_t r = rng() % 5 == 0 ? rng() % 30 : 1; r > 0; --r) text += unit;
      }
      ASSERT_EQ(EncodeExact(tok, text, true),
                ReferenceEncodeSentencePiece(tok, text, true))
          << "seed " << seed << ", text '" << text << "'";
    }
  }
}

TEST(TokenizerSmallVocabTest, RefusesNaNScores) {
  SmallVocab vocab(1);
  vocab.scores[7] = std::nanf("");
  Tokenizer tok;
  const Status s = tok.Init(vocab.Tables());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("score 7 is NaN"), std::string::npos);
}

TEST(TokenizerSmallVocabTest, AnEmbeddedTextEndsWithTheEndToken) {
  const SmallVocab vocab(3);
  TokenizerTables tables = vocab.Tables();
  tables.end_id = 2;
  Tokenizer tok;
  ASSERT_TRUE(tok.Init(tables).ok());
  EncodeOptions options;
  std::vector<int32_t> ids(tok.EncodeCapacity(4));
  size_t plain = 0, ended = 0;
  ASSERT_TRUE(tok.Encode("abc", options, ids.data(), ids.size(), &plain).ok());
  options.append_end = true;
  ASSERT_TRUE(tok.Encode("abc", options, ids.data(), ids.size(), &ended).ok());
  ASSERT_EQ(ended, plain + 1);
  EXPECT_EQ(ids[ended - 1], 2);
  tables.end_id = static_cast<int32_t>(tables.vocab_size);  // outside the vocabulary
  EXPECT_FALSE(tok.Init(tables).ok());
}

TEST(TokenizerCapacityTest, TooLongTextsNeedMoreThanAnyBuffer) {
  const SmallVocab vocab(1);
  Tokenizer tok;
  ASSERT_TRUE(tok.Init(vocab.Tables()).ok());
  EXPECT_EQ(tok.EncodeCapacity(0), 6u);
  EXPECT_EQ(tok.max_text_bytes(), Tokenizer::kMaxTextBytes);
  EXPECT_EQ(tok.EncodeCapacity(Tokenizer::kMaxTextBytes),
            5 * Tokenizer::kMaxTextBytes + 6);
  EXPECT_EQ(tok.EncodeCapacity(Tokenizer::kMaxTextBytes + 1), SIZE_MAX);
  // NFC text may grow threefold: 16 ids a byte, a quarter of the longest text.
  TokenizerTables t = vocab.Tables();
  t.normalizer = Normalization::kNfc;
  ASSERT_TRUE(tok.Init(t).ok());
  EXPECT_EQ(tok.EncodeCapacity(0), 8u);
  EXPECT_EQ(tok.max_text_bytes(), Tokenizer::kMaxNfcTextBytes);
  EXPECT_EQ(tok.EncodeCapacity(Tokenizer::kMaxNfcTextBytes),
            16 * Tokenizer::kMaxNfcTextBytes + 8);
  EXPECT_EQ(tok.EncodeCapacity(Tokenizer::kMaxNfcTextBytes + 1), SIZE_MAX);
  int32_t ids[8];
  size_t n = 0;
  const std::string text(Tokenizer::kMaxNfcTextBytes + 1, 'a');
  const Status s = tok.Encode(text, false, ids, 8, &n);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
}

}  // namespace
}  // namespace ember
