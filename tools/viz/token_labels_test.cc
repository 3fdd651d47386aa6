// Token labels: special tokens by name, characters split over byte-fallback or byte-level
// tokens reassembled with each token's share, visible whitespace, truncation by columns.
#include "tools/viz/token_labels.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "testing/testing.h"

namespace ember::tools {
namespace {

using Labels = std::vector<std::string>;

// TinyModelSpec's SentencePiece vocabulary: 0 <unk>, 1 <s>, 2 </s>, 3 + b the byte b,
// 259 + k the ASCII character ' ' + k.
struct SentencePiece {
  SentencePiece() {
    std::vector<uint8_t> raw;
    EXPECT_TRUE(SerializeModel(testing::TinyModelSpec(), &raw).ok());
    bytes = testing::AlignedBytes(raw);
    auto m = Model::FromMemory(bytes.data(), bytes.size());
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (m.ok()) model = std::move(*m);
  }
  static int32_t Byte(int b) { return 3 + b; }
  static int32_t Char(char c) { return 259 + (c - ' '); }
  testing::AlignedBytes bytes;
  std::unique_ptr<Model> model;
};

TEST(TokenLabelsTest, SentencePieceSpecialsBytesAndWhitespace) {
  SentencePiece sp;
  ASSERT_TRUE(sp.model);
  const Tokenizer& t = sp.model->tokenizer();
  // "中" as three byte-fallback tokens, a character, a newline byte, a space, <unk>, a
  // stray byte that is no UTF-8, </s>, an id outside the vocabulary.
  const std::vector<int32_t> ids = {1,
                                    SentencePiece::Byte(0xE4),
                                    SentencePiece::Byte(0xB8),
                                    SentencePiece::Byte(0xAD),
                                    SentencePiece::Char('A'),
                                    SentencePiece::Byte('\n'),
                                    SentencePiece::Char(' '),
                                    0,
                                    SentencePiece::Byte(0xFF),
                                    SentencePiece::Byte(0x01),
                                    SentencePiece::Char('&'),
                                    2,
                                    100000};
  EXPECT_EQ(TokenLabels(t, ids),
            (Labels{"<s>", "中1/3", "中2/3", "中3/3", "A", "\u21B5", "\u2423", "<unk>",
                    "<FF>", "<01>", "&", "</s>", "[100000]"}));
  // Right after BOS the dummy-prefix space is dropped from the text; the label still
  // shows the piece.
  EXPECT_EQ(TokenLabels(t, {1, SentencePiece::Char(' ')}), (Labels{"<s>", "\u2423"}));
  EXPECT_EQ(TokenLabels(t, {SentencePiece::Byte('\t')}), (Labels{"\u21E5"}));
}

// A byte-level vocabulary: ids 0..255 the bytes, then `extra` pieces (normal), then one
// control token.
struct ByteLevel {
  explicit ByteLevel(const std::vector<std::string>& extra) {
    for (int b = 0; b < 256; ++b) pieces.push_back(std::string(1, static_cast<char>(b)));
    pieces.insert(pieces.end(), extra.begin(), extra.end());
    pieces.push_back("<|endoftext|>");
    offsets.push_back(0);
    for (const std::string& p : pieces) {
      piece_bytes.insert(piece_bytes.end(), p.begin(), p.end());
      offsets.push_back(static_cast<uint32_t>(piece_bytes.size()));
      types.push_back(static_cast<uint8_t>(TokenType::kNormal));
    }
    types.back() = static_cast<uint8_t>(TokenType::kControl);
    for (uint32_t i = 0; i + 1 < pieces.size(); ++i) sorted.push_back(i);
    std::sort(sorted.begin(), sorted.end(),
              [&](uint32_t a, uint32_t b) { return pieces[a] < pieces[b]; });
    TokenizerTables tables;
    tables.kind = TokenizerKind::kByteLevelBpe;
    tables.vocab_size = static_cast<uint32_t>(pieces.size());
    tables.piece_bytes = piece_bytes.data();
    tables.piece_bytes_size = piece_bytes.size();
    tables.piece_offsets = offsets.data();
    tables.types = types.data();
    tables.sorted_ids = sorted.data();
    tables.num_sorted = sorted.size();
    tables.eos_id = static_cast<int32_t>(pieces.size() - 1);
    tables.add_bos = false;
    tables.max_piece_bytes = 32;
    Status s = tokenizer.Init(tables);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  std::vector<std::string> pieces;
  std::vector<uint8_t> piece_bytes, types;
  std::vector<uint32_t> offsets, sorted;
  Tokenizer tokenizer;
};

TEST(TokenLabelsTest, ByteLevelPiecesEndingInsideACharacter) {
  // "中" split after two of its bytes; "文" whole in the second piece.
  ByteLevel bl({"\xE4\xB8", "\xAD\xE6\x96\x87", " a&b", "  ", "\xF0\x9F\x98"});
  const int32_t first = 256, second = 257, word = 258, spaces = 259, emoji3 = 260,
                eot = 261;
  EXPECT_EQ(TokenLabels(bl.tokenizer, {first, second, word, spaces, eot}),
            (Labels{"中1/2", "中2/2文", "a&b", "\u2423\u2423", "<|endoftext|>"}));
  // A character cut short by the end of the text, and one finished by a byte token.
  EXPECT_EQ(TokenLabels(bl.tokenizer, {emoji3}), (Labels{"<F0><9F><98>"}));
  EXPECT_EQ(TokenLabels(bl.tokenizer, {emoji3, 0x80}), (Labels{"\U0001F600"
                                                               "1/2",
                                                               "\U0001F600"
                                                               "2/2"}));
}

TEST(TokenLabelsTest, LongLabelsAreCutByDisplayColumns) {
  ByteLevel bl({"abcdefghijklmnopqrstuvwxyz", "中文中文中文中文"});
  EXPECT_EQ(TokenLabels(bl.tokenizer, {256, 257}),
            (Labels{"abcdefghijklm\u2026", "中文中文中文\u2026"}));
  EXPECT_EQ(TokenLabels(bl.tokenizer, {256}, 5), (Labels{"abcd\u2026"}));
}

TEST(TokenLabelsTest, DisplayColumns) {
  EXPECT_EQ(DisplayColumns(""), 0u);
  EXPECT_EQ(DisplayColumns("a\u00E9"), 2u);
  EXPECT_EQ(DisplayColumns("中文"), 4u);
  EXPECT_EQ(DisplayColumns("\uAC00\uFF21"), 4u);  // Hangul, fullwidth A
  EXPECT_EQ(DisplayColumns("\xFF\xFE"), 2u);      // invalid bytes: one each
}

}  // namespace
}  // namespace ember::tools
