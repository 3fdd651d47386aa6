// Byte-level BPE encoding on hand-made tables: merge order by rank (Hugging Face's: the
// lowest rank, the leftmost of equals, new pairs competing at once), chunk boundaries,
// the work-buffer contract, and Init's checks; and the O(m log m) merge against a
// quadratic one written from that definition (testing/bpe_reference.h) on hand-made
// tables with random ranks. OpenAI's GPT-2 vocabulary: tests/gpt2_tokenizer_test.cc.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/text/tokenizer.h"
#include "testing/bpe_reference.h"

namespace ember {
namespace {

using testing::EncodeExact;
using testing::ReferenceEncodeByteLevel;

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
    std::vector<int32_t> ids(tok.EncodeCapacity(text.size()) + 1, -7);
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
  // 20000 letters in one chunk: many merges, as the definition gives them.
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

// Hugging Face's BPE (and llama.cpp's): after each merge the pairs it makes compete at
// once, even with a rank lower than the merge's (Llama 3's and Gemma 3's lists have such
// merges), where GPT-2's encoder.py would first merge every occurrence of its pair.
TEST(ByteLevelBpeTest, NewPairsCompeteAtOnce) {
  const Vocab v({"aa", "aaa", "aaaa"}, {{"a", "a", 5}, {"aa", "a", 1}, {"aa", "aa", 9}});
  EXPECT_EQ(v.Encode("aaaa"), (V{"aaa", "a"}));  // aa a a, then aaa a (encoder.py: aaaa)
  const Vocab w({"ab", "ca"}, {{"a", "b", 1}, {"c", "a", 1}});
  EXPECT_EQ(w.Encode("abcab"), (V{"ab", "ca", "b"}));  // equal ranks: leftmost first
  EXPECT_EQ(w.Encode("bcab"), (V{"b", "ca", "b"}));
}

// Random merges over a few letters, built up from shorter pieces, with random ranks
// (repeats included, and results that take part in lower-ranked merges).
TEST(ByteLevelBpeTest, MatchesTheQuadraticMergeWithRandomRanks) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    std::mt19937 rng(seed);
    std::vector<std::string> pieces = {"a", "b", "c", " "}, extra;
    std::vector<std::tuple<std::string, std::string, uint32_t>> merges;
    for (int i = 0; i < 40; ++i) {
      const std::string l = pieces[rng() % pieces.size()],
                        r = pieces[rng() % pieces.size()];
      bool known = false;
      for (const auto& m : merges) known |= std::get<0>(m) == l && std::get<1>(m) == r;
      if (known || l.size() + r.size() > 8) continue;
      merges.emplace_back(l, r, rng() % 30);
      if (std::find(pieces.begin(), pieces.end(), l + r) == pieces.end()) {
        pieces.push_back(l + r);
        extra.push_back(l + r);
      }
    }
    const Vocab v(extra, merges);
    Tokenizer tok;
    ASSERT_TRUE(tok.Init(v.Tables()).ok());
    for (int i = 0; i < 40; ++i) {
      std::string text;
      for (size_t units = rng() % 200; units > 0; --units) {
        const char c = "abc \n"[rng() % 5];
        text.append(rng() % 6 == 0 ? 1 + rng() % 40 : 1, c);
      }
      ASSERT_EQ(EncodeExact(tok, text, false), ReferenceEncodeByteLevel(tok, text))
          << "seed " << seed << ", text '" << text << "'";
    }
  }
}

}  // namespace
}  // namespace ember
