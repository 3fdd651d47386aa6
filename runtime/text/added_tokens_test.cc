// Sections of the text between added tokens, on hand-made tables through the writer and
// the loader: the longest match, control tokens only with parse_special, lstrip and
// rstrip, the dummy prefix per section (each scheme), "normalized" tokens inside a
// section, U+2581 as a space, Hugging Face's byte fallback, ignore_merges, NFC per
// section; and the loader's checks of the added-token table.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/loaded_tokenizer.h"
#include "runtime/model/model.h"
#include "runtime/text/tokenizer.h"

namespace ember {
namespace {

using V = std::vector<std::string>;

// SentencePiece-style: bytes (all but 0xA9), a few pieces with merges by rank, and added
// tokens of every kind.
TokenizerSpec SentencePieceSpec() {
  TokenizerSpec t;
  t.kind = TokenizerKind::kSentencePieceBpe;
  t.add_dummy_prefix = true;
  t.metaspace_is_space = true;
  auto add = [&](const std::string& piece, TokenType type) {
    t.pieces.push_back(piece);
    t.types.push_back(type);
    return static_cast<uint32_t>(t.pieces.size() - 1);
  };
  t.unk_id = static_cast<int32_t>(add("<unk>", TokenType::kUnknown));
  t.bos_id = static_cast<int32_t>(add("<s>", TokenType::kControl));
  for (int b = 0; b < 256; ++b) {
    char name[8];
    snprintf(name, sizeof(name), "<0x%02X>", b);
    if (b != 0xA9) add(name, TokenType::kByte);
  }
  const uint32_t space = add(" ", TokenType::kNormal), a = add("a", TokenType::kNormal),
                 b = add("b", TokenType::kNormal),
                 space_a = add(" a", TokenType::kNormal),
                 ab = add("ab", TokenType::kNormal),
                 space_ab = add(" ab", TokenType::kNormal);
  add("c", TokenType::kNormal);
  t.merges = {{space, a, space_a, 0}, {a, b, ab, 1}, {space_a, b, space_ab, 2}};
  const uint32_t user = add("<|user|>", TokenType::kControl),
                 lstrip = add("<|l|>", TokenType::kUserDefined),
                 x = add("<x>", TokenType::kControl),
                 xy = add("<xy>", TokenType::kControl),
                 spaces = add("  ", TokenType::kUserDefined);
  t.added = {{user, "<|user|>", kAddedRstrip},
             {lstrip, "<|l|>", kAddedLstrip},
             {x, "<x>", kAddedNormalized},
             {xy, "<xy>", 0},
             {spaces, "\xE2\x96\x81\xE2\x96\x81", 0}};  // "▁▁" as written, "  " decoded
  return t;
}

class AddedTokensTest : public ::testing::Test {
 protected:
  void Load(const TokenizerSpec& spec) {
    const Status s = LoadTokenizerSpec(spec, "test", &loaded_);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // The pieces of the ids (bytes as <0xNN>), with exactly EncodeCapacity of buffer.
  V Encode(const std::string& text, bool parse_special = true) {
    const Tokenizer& tok = loaded_.tokenizer;
    std::vector<int32_t> ids(tok.EncodeCapacity(text.size()) + 1, -7);
    EncodeOptions options;
    options.parse_special = parse_special;
    size_t n = 0;
    const Status s = tok.Encode(text, options, ids.data(), ids.size() - 1, &n);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(ids.back(), -7) << "wrote past EncodeCapacity";
    V out;
    for (size_t i = 0; i < n; ++i) out.emplace_back(tok.piece(ids[i]));
    return out;
  }
  LoadedTokenizer loaded_;
};

TEST_F(AddedTokensTest, LongestMatchAndControlTokensOnRequest) {
  Load(SentencePieceSpec());
  EXPECT_EQ(Encode("<xy>"), (V{"<xy>"}));
  EXPECT_EQ(Encode("<x>y"), (V{"<x>", "<0x79>"}));
  EXPECT_EQ(Encode("<xz>"), (V{" ", "<0x3C>", "<0x78>", "<0x7A>", "<0x3E>"}));
  // Without parse_special control tokens are text; other added tokens still match.
  EXPECT_EQ(Encode("<x>", false), (V{" ", "<0x3C>", "<0x78>", "<0x3E>"}));
  EXPECT_EQ(Encode("a<|l|>b", false), (V{" a", "<|l|>", " ", "b"}));
  EXPECT_EQ(Encode("\xE2\x96\x81\xE2\x96\x81", false), (V{"  "}));  // "▁▁" added token
}

TEST_F(AddedTokensTest, StripAndTheDummyPrefixPerSection) {
  Load(SentencePieceSpec());
  // A section after a token gets its own dummy prefix (llama.cpp, Prepend("▁")).
  EXPECT_EQ(Encode("ab<xy>ab"), (V{" ab", "<xy>", " ab"}));
  // rstrip takes the white space after the token, lstrip the white space before it.
  EXPECT_EQ(Encode("ab<|user|> \t ab"), (V{" ab", "<|user|>", " ab"}));
  EXPECT_EQ(Encode("ab  <|l|>  ab"), (V{" ab", "<|l|>", " ", " ", " ab"}));
  // A "normalized" token is found inside its section: no prefix restarts after it.
  EXPECT_EQ(Encode("ab<x>ab"), (V{" ab", "<x>", "ab"}));
  EXPECT_EQ(Encode("<xy><xy>"), (V{"<xy>", "<xy>"}));  // empty sections: nothing
}

TEST_F(AddedTokensTest, MetaspacePrefixSchemes) {
  TokenizerSpec spec = SentencePieceSpec();
  spec.dummy_prefix = DummyPrefix::kFirstUnlessSpace;
  Load(spec);
  EXPECT_EQ(Encode("ab<xy>ab"), (V{" ab", "<xy>", "ab"}));
  EXPECT_EQ(Encode(" ab"), (V{" ab"}));  // starts with a space already
  EXPECT_EQ(Encode("\xE2\x96\x81"
                   "ab"),
            (V{" ab"}));                           // ... or with U+2581
  EXPECT_EQ(Encode("<xy>ab"), (V{"<xy>", "ab"}));  // not the section at offset 0
  spec.dummy_prefix = DummyPrefix::kEveryUnlessSpace;
  Load(spec);
  EXPECT_EQ(Encode("ab<xy>ab<xy> a"), (V{" ab", "<xy>", " ab", "<xy>", " a"}));
}

TEST_F(AddedTokensTest, MetaspaceIsASpaceAndByteFallbackIsAllOrUnk) {
  TokenizerSpec spec = SentencePieceSpec();
  spec.add_dummy_prefix = false;
  Load(spec);
  EXPECT_EQ(Encode("\xE2\x96\x81"
                   "ab \xE2\x96\x81"
                   "a"),
            (V{" ab", " ", " a"}));
  // U+00E9 is C3 A9, and A9 has no byte token: <unk>, not <0xC3> <unk>.
  EXPECT_EQ(Encode("a\xC3\xA9"
                   "b"),
            (V{"a", "<unk>", "b"}));
  EXPECT_EQ(Encode("\xC3\xA8"), (V{"<0xC3>", "<0xA8>"}));
}

TEST_F(AddedTokensTest, ByteLevelIgnoreMergesAndNfcPerSection) {
  TokenizerSpec t;
  t.kind = TokenizerKind::kByteLevelBpe;
  t.pre_tokenizer = PreTokenizerKind::kQwen2;
  for (int b = 0; b < 256; ++b) {
    t.pieces.push_back(std::string(1, static_cast<char>(b)));
    t.types.push_back(TokenType::kNormal);
  }
  auto add = [&](const std::string& piece, TokenType type) {
    t.pieces.push_back(piece);
    t.types.push_back(type);
    return static_cast<uint32_t>(t.pieces.size() - 1);
  };
  const uint32_t xy = add("xy", TokenType::kNormal), xyz = add("xyz", TokenType::kNormal);
  add("\xC3\xA9", TokenType::kNormal);  // é (no merge makes it)
  const uint32_t end = add("<|end|>", TokenType::kControl);
  t.merges = {{'x', 'y', xy, 0}};
  t.added = {{end, "<|end|>", 0}};
  Load(t);
  EXPECT_EQ(Encode("xyz"), (V{"xy", "z"}));
  t.ignore_merges = true;  // a chunk that is a piece is that piece
  Load(t);
  EXPECT_EQ(Encode("xyz xyz"), (V{"xyz", " ", "xy", "z"}));
  EXPECT_EQ(loaded_.tokenizer.piece(xyz), "xyz");
  // NFC per section: e + U+0301 becomes U+00E9; a token between them keeps them apart.
  t.normalizer = Normalization::kNfc;
  Load(t);
  EXPECT_EQ(Encode("e\xCC\x81"), (V{"\xC3\xA9"}));
  EXPECT_EQ(Encode("e<|end|>\xCC\x81"), (V{"e", "<|end|>", "\xCC", "\x81"}));
  EXPECT_EQ(Encode("\xE2\x84\xAB"), (V{"\xC3", "\x85"}));  // Angstrom sign -> U+00C5
}

TEST_F(AddedTokensTest, TheLoaderChecksTheTable) {
  TokenizerSpec spec = SentencePieceSpec();
  spec.added.push_back({1, "<s>", 8});  // an unknown flag
  Status s = LoadTokenizerSpec(spec, "test", &loaded_);
  EXPECT_FALSE(s.ok());
  spec = SentencePieceSpec();
  spec.added.push_back({spec.added[0].id, "<|user|>", 0});  // the same text twice
  s = LoadTokenizerSpec(spec, "test", &loaded_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("added tokens out of order"), std::string::npos)
      << s.message();
  spec = SentencePieceSpec();
  spec.added.push_back({3, "\xC3", 0});  // not UTF-8, and a byte token
  s = LoadTokenizerSpec(spec, "test", &loaded_);
  EXPECT_FALSE(s.ok());
  spec = SentencePieceSpec();
  spec.added.push_back({999999, "<big>", 0});
  s = LoadTokenizerSpec(spec, "test", &loaded_);
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace ember
