// Tokenizer: SentencePiece-style encoding on stories260K's vocabulary, decoding back to
// the same text, byte fallback, refusal of bad input, and the O(n log n) merge against
// llama2.c's quadratic one on random and long texts.
#include "runtime/text/tokenizer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/text/utf8.h"
#include "testing/testing.h"
#include "tools/convert/llama2c/llama2c_import.h"
#include "tools/util/files.h"

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

// The reference: llama2.c's encoder as it was written here before the heap (one scan of
// every pair per merge, O(n^2)), through the public API only.
std::vector<int32_t> ReferenceEncodeSentencePiece(const Tokenizer& tok,
                                                  const std::string& text, bool bos) {
  const TokenizerTables& t = tok.tables();
  int32_t byte_ids[256];
  std::fill(byte_ids, byte_ids + 256, -1);
  for (uint32_t id = 0; id < tok.vocab_size(); ++id) {
    const std::string_view p = tok.piece(id);
    if (tok.type(id) == TokenType::kByte) {
      byte_ids[std::stoi(std::string(p.substr(3, 2)), nullptr, 16)] = int32_t(id);
    }
  }
  std::vector<int32_t> ids;
  if (bos) ids.push_back(tok.bos_id());
  const size_t first = ids.size();
  if (!text.empty() && t.add_dummy_prefix) ids.push_back(tok.Find(" "));
  uint32_t cp;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = DecodeUtf8(text, pos, &cp);
    const int32_t id = tok.Find(std::string_view(text).substr(pos, len));
    if (id >= 0) {
      ids.push_back(id);
    } else {
      for (size_t i = 0; i < len; ++i) {
        const int32_t byte_id = byte_ids[static_cast<uint8_t>(text[pos + i])];
        if (byte_id >= 0) {
          ids.push_back(byte_id);
        } else {
          ids.push_back(t.unk_id);
          break;
        }
      }
    }
    pos += len;
  }
  while (ids.size() - first > 1) {
    float best_score = 0;
    int32_t best_id = -1;
    size_t best_idx = 0;
    for (size_t i = first; i + 1 < ids.size(); ++i) {
      const std::string joined =
          std::string(tok.piece(ids[i])) + std::string(tok.piece(ids[i + 1]));
      const int32_t id = tok.Find(joined);
      if (id >= 0 && (best_id < 0 || tok.score(id) > best_score)) {
        best_score = tok.score(id);
        best_id = id;
        best_idx = i;
      }
    }
    if (best_id < 0) break;
    ids[best_idx] = best_id;
    ids.erase(ids.begin() + best_idx + 1);
  }
  return ids;
}

// Encodes with exactly EncodeCapacity ids of buffer, and a canary after them.
std::vector<int32_t> EncodeExact(const Tokenizer& tok, const std::string& text,
                                 bool bos) {
  std::vector<int32_t> ids(tok.EncodeCapacity(text.size()) + 1, -7);
  size_t n = 0;
  const Status s = tok.Encode(text, bos, ids.data(), ids.size() - 1, &n);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ids.back(), -7) << "wrote past the capacity";
  ids.resize(n);
  return ids;
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

TEST_F(TokenizerTest, EncodesLongTexts) { ExpectEncodesLongTexts(tok(), 256 * 1024); }

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
