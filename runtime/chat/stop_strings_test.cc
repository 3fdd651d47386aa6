// StopStrings: the text before a stop string is released exactly once, in order, and
// nothing from the stop string on, wherever the token boundaries fall; text that only
// looked like a stop string's beginning comes out later; limits are enforced.
#include "runtime/chat/stop_strings.h"

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ember {
namespace {

// Feeds `text` in pieces at the given cut points; returns what was released and
// whether a stop string ended it.
std::string FeedAll(StopStrings& stop, const std::string& text,
                    const std::vector<size_t>& cuts, bool* stopped) {
  std::string out;
  size_t at = 0;
  *stopped = false;
  for (size_t i = 0; i <= cuts.size() && !*stopped; ++i) {
    const size_t end = i < cuts.size() ? cuts[i] : text.size();
    std::string_view release;
    *stopped = stop.Feed(std::string_view(text).substr(at, end - at), &release);
    out.append(release.data(), release.size());
    at = end;
  }
  if (!*stopped) {
    const std::string_view rest = stop.Flush();
    out.append(rest.data(), rest.size());
  }
  return out;
}

TEST(StopStringsTest, ReleasesTheTextBeforeTheFirstStopString) {
  StopStrings stop;
  const std::string_view strings[] = {"<|end|>", "\n\nUser:", "ab"};
  ASSERT_TRUE(stop.Set(strings, 3).ok());
  struct Case {
    std::string text, want;
    bool stops;
  };
  const Case cases[] = {
      {"Hello there<|end|> and more", "Hello there", true},
      {"Hello<|en", "Hello<|en", false},  // held back, then flushed
      {"x\n\nUser: hi", "x", true},
      {"a a b <|end", "a a b <|end", false},
      {"xxab", "xx", true},
      {"<|end|", "<|end|", false},
      {"a<|end|>ab", "a", true},  // the earliest stop string wins
      {"\n\nUser<|end|>", "\n\nUser", true},
      {"", "", false},
  };
  std::mt19937 rng(5);
  for (const Case& c : cases) {
    // Every split into single bytes, one piece, and random pieces.
    std::vector<std::vector<size_t>> splits = {{}};
    std::vector<size_t> bytes;
    for (size_t i = 1; i < c.text.size(); ++i) bytes.push_back(i);
    splits.push_back(bytes);
    for (int r = 0; r < 20; ++r) {
      std::vector<size_t> cuts;
      for (size_t i = 1; i < c.text.size(); ++i) {
        if (rng() % 3 == 0) cuts.push_back(i);
      }
      splits.push_back(cuts);
    }
    for (const auto& cuts : splits) {
      stop.Reset();
      bool stopped = false;
      EXPECT_EQ(FeedAll(stop, c.text, cuts, &stopped), c.want) << c.text;
      EXPECT_EQ(stopped, c.stops) << c.text;
    }
  }
}

// Text is released as soon as it cannot begin a stop string.
TEST(StopStringsTest, HoldsBackOnlyAPossibleBeginning) {
  StopStrings stop;
  const std::string_view strings[] = {"STOP"};
  ASSERT_TRUE(stop.Set(strings, 1).ok());
  std::string_view release;
  EXPECT_FALSE(stop.Feed("abcST", &release));
  EXPECT_EQ(release, "abc");
  EXPECT_FALSE(stop.Feed("x", &release));
  EXPECT_EQ(release, "STx");
  EXPECT_FALSE(stop.Feed("S", &release));
  EXPECT_EQ(release, "");
  EXPECT_TRUE(stop.Feed("TOP!", &release));
  EXPECT_EQ(release, "");
  // No strings: everything passes through.
  StopStrings none;
  EXPECT_FALSE(none.Feed("STOP", &release));
  EXPECT_EQ(release, "STOP");
}

TEST(StopStringsTest, LimitsAreEnforced) {
  StopStrings stop;
  const std::string_view good[] = {"x"};
  ASSERT_TRUE(stop.Set(good, 1).ok());
  const std::string_view empty[] = {"a", ""};
  EXPECT_EQ(stop.Set(empty, 2).code(), StatusCode::kInvalidArgument);
  const std::string long_string(StopStrings::kMaxStringBytes + 1, 'a');
  const std::string_view too_long[] = {long_string};
  EXPECT_EQ(stop.Set(too_long, 1).code(), StatusCode::kInvalidArgument);
  std::vector<std::string_view> many(StopStrings::kMaxStrings + 1, "a");
  EXPECT_EQ(stop.Set(many.data(), many.size()).code(), StatusCode::kInvalidArgument);
  const std::string big(StopStrings::kMaxStringBytes, 'b');
  std::vector<std::string_view> total(5, big);
  EXPECT_EQ(stop.Set(total.data(), total.size()).code(), StatusCode::kInvalidArgument);
  // A refused set leaves the previous strings.
  ASSERT_EQ(stop.size(), 1u);
  EXPECT_EQ(stop.string(0), "x");
}

}  // namespace
}  // namespace ember
