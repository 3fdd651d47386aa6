// Byte-level BPE encoding on hand-made tables: merge order by rank, every occurrence of
// a pair per pass, chunk boundaries, the work-buffer contract, and Init's checks.
#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/tokenizer.h"

namespace ember {
namespace {

// A byte-level vocabulary: ids 0..255 are the bytes, then `extra` pieces, then merges
// (left piece, right piece, rank) resolved by piece text.
struct Vocab {
  std::vector<std::string> pieces;
  std::vector<uint8_t> piece_bytes, types;
  std::vector<uint32_t> offsets, sorted, merges;

  Vocab(const std::vector<std::string>& extra,
        const std::vector<std::tuple<std::string, std::string, uint32_t>>& merge_list) {
    for (int b = 0; b < 256; ++b) pieces.push_back(std::string(1, static_cast<char>(b)));
    pieces.insert(pieces.end(), extra.begin(), extra.end());
    auto id = [&](const std::string& p) {
      return static_cast<uint32_t>(std::find(pieces.begin(), pieces.end(), p) -
                                   pieces.begin());
    };
    offsets.push_back(0);
    for (const std::string& p : pieces) {
      piece_bytes.insert(piece_bytes.end(), p.begin(), p.end());
      offsets.push_back(static_cast<uint32_t>(piece_bytes.size()));
      types.push_back(static_cast<uint8_t>(TokenType::kNormal));
    }
    for (uint32_t i = 0; i < pieces.size(); ++i) sorted.push_back(i);
    std::sort(sorted.begin(), sorted.end(),
              [&](uint32_t a, uint32_t b) { return pieces[a] < pieces[b]; });
    std::vector<std::vector<uint32_t>> m;
    for (const auto& [l, r, rank] : merge_list)
      m.push_back({id(l), id(r), id(l + r), rank});
    std::sort(m.begin(), m.end());
    for (const auto& q : m) merges.insert(merges.end(), q.begin(), q.end());
  }

  TokenizerTables Tables() const {
    TokenizerTables t;
    t.kind = TokenizerKind::kByteLevelBpe;
    t.vocab_size = static_cast<uint32_t>(pieces.size());
    t.piece_bytes = piece_bytes.data();
    t.piece_bytes_size = piece_bytes.size();
    t.piece_offsets = offsets.data();
    t.types = types.data();
    t.sorted_ids = sorted.data();
    t.num_sorted = sorted.size();
    t.merges = merges.data();
    t.num_merges = merges.size() / 4;
    t.add_bos = false;
    t.max_piece_bytes = 16;
    return t;
  }

  std::vector<std::string> Encode(const std::string& text) const {
    Tokenizer tok;
    const Status init = tok.Init(Tables());
    EXPECT_TRUE(init.ok()) << init.message();
    // The exact capacity the contract promises is enough, with a canary after it.
    std::vector<int32_t> ids(Tokenizer::EncodeCapacity(text.size()) + 1, -7);
    size_t n = 0;
    const Status s = tok.Encode(text, false, ids.data(), ids.size() - 1, &n);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(ids.back(), -7) << "wrote past the capacity";
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) out.push_back(pieces[ids[i]]);
    return out;
  }
};

using V = std::vector<std::string>;

TEST(ByteLevelBpeTest, LowestRankFirst) {
  const Vocab v({"ab", "bc"}, {{"b", "c", 0}, {"a", "b", 1}});
  EXPECT_EQ(v.Encode("abc"), (V{"a", "bc"}));
  const Vocab w({"ab", "bc"}, {{"a", "b", 0}, {"b", "c", 1}});
  EXPECT_EQ(w.Encode("abc"), (V{"ab", "c"}));
}

TEST(ByteLevelBpeTest, RepeatedPairsMergeLeftToRight) {
  const Vocab v({"aa", "aaaa"}, {{"a", "a", 0}, {"aa", "aa", 1}});
  EXPECT_EQ(v.Encode("aaa"), (V{"aa", "a"}));
  EXPECT_EQ(v.Encode("aaaaa"), (V{"aaaa", "a"}));
  EXPECT_EQ(v.Encode("aaaaaaaaaa"), (V{"aaaa", "aaaa", "aa"}));
}

TEST(ByteLevelBpeTest, MergesStayInsideChunks) {
  // " a" may merge, but "a" and " " never: they are in different chunks.
  const Vocab v({" a", "a "}, {{"a", " ", 0}, {" ", "a", 1}});
  EXPECT_EQ(v.Encode("a a"), (V{"a", " a"}));
  EXPECT_EQ(v.Encode("\xC3\xA9"), (V{"\xC3", "\xA9"}));  // bytes of one character
  EXPECT_EQ(v.Encode(""), V{});
}

TEST(ByteLevelBpeTest, LongChunk) {
  // 20000 letters in one chunk: many passes, output as GPT-2's loop would give it.
  const Vocab v({"ab", "abab"}, {{"a", "b", 0}, {"ab", "ab", 1}});
  std::string text;
  for (int i = 0; i < 10000; ++i) text += "ab";
  const V out = v.Encode(text + "a");
  ASSERT_EQ(out.size(), 5001u);
  EXPECT_EQ(out.front(), "abab");
  EXPECT_EQ(out.back(), "a");
}

TEST(ByteLevelBpeTest, InitChecks) {
  Vocab missing_byte({"ab"}, {{"a", "b", 0}});
  missing_byte.types['z'] = static_cast<uint8_t>(TokenType::kControl);
  missing_byte.sorted.erase(
      std::find(missing_byte.sorted.begin(), missing_byte.sorted.end(), uint32_t{'z'}));
  Tokenizer tok;
  Status s = tok.Init(missing_byte.Tables());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("no piece for byte 0x7a"), std::string::npos);

  Vocab bad_result({"ab", "xy"}, {{"a", "b", 0}});
  bad_result.merges[2] = 257;  // "a" + "b" -> "xy"
  s = tok.Init(bad_result.Tables());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("is not tokens"), std::string::npos);

  Vocab unsorted({"ab", "bc"}, {{"a", "b", 0}, {"b", "c", 1}});
  std::swap_ranges(unsorted.merges.begin(), unsorted.merges.begin() + 4,
                   unsorted.merges.begin() + 4);
  s = tok.Init(unsorted.Tables());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("out of order"), std::string::npos);
}

}  // namespace
}  // namespace ember
