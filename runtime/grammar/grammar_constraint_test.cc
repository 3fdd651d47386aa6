// GrammarConstraint's memory: built on the heap, then placed in a region (the session's
// arena) whose bytes it tells beforehand; too small a region is refused naming the bytes,
// and the parse stacks stay within the limits the region was planned for.
#include "runtime/grammar/grammar_constraint.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/grammar/gbnf.h"
#include "testing/testing.h"

namespace ember::grammar {
namespace {

class GrammarConstraintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loaded_ = testing::LoadSpec(testing::TinyModelSpec(32, 1, 2, 1, 64, 300, 64, 3));
    ASSERT_TRUE(loaded_.model);
  }
  const Tokenizer& tok() const { return loaded_.model->tokenizer(); }
  std::vector<uint32_t> Compile(const char* gbnf) {
    std::vector<uint32_t> words;
    const Status s = CompileGbnf(gbnf, "root", &words);
    EXPECT_TRUE(s.ok()) << s.message();
    return words;
  }
  // A 16-byte aligned region of `bytes`.
  void* Region(size_t bytes) {
    memory_.assign(bytes / 8 + 3, 0);
    const uintptr_t at = reinterpret_cast<uintptr_t>(memory_.data());
    return memory_.data() + ((16 - at % 16) % 16) / 8;
  }
  testing::LoadedModel loaded_;
  std::vector<uint64_t> memory_;
};

TEST_F(GrammarConstraintTest, PlacedInTheRegionItsBytesSay) {
  GrammarConstraint g;
  ASSERT_TRUE(g.Build(Compile(kJsonGrammar), tok()).ok());
  const GrammarBytes b = g.bytes();
  EXPECT_GT(b.program, 0u);
  EXPECT_EQ(b.matcher % 16, 0u);
  EXPECT_GE(b.matcher, GrammarMatcher::RequiredBytes(MatcherLimits()));
  EXPECT_GT(b.vocabulary, 0u);
  EXPECT_GT(b.tables, 0u);
  EXPECT_EQ(b.total, b.program + b.matcher + b.vocabulary + b.tables + b.mask);
  // Not placed yet: refused, not a crash.
  const uint32_t* bits = nullptr;
  EXPECT_FALSE(g.Allowed(&bits).ok());
  void* region = Region(b.total);
  ASSERT_TRUE(g.Place(region, b.total).ok());
  ASSERT_TRUE(g.Allowed(&bits).ok());
  const auto* start = static_cast<const uint8_t*>(region);
  const auto* at = reinterpret_cast<const uint8_t*>(bits);
  EXPECT_TRUE(at >= start && at + (tok().vocab_size() + 31) / 32 * 4 <= start + b.total);
  EXPECT_TRUE(g.Accept(0, "{").ok());
  EXPECT_FALSE(g.Accept(0, "]").ok());
}

TEST_F(GrammarConstraintTest, TooSmallARegionIsRefusedNamingTheBytes) {
  GrammarConstraint g;
  ASSERT_TRUE(g.Build(Compile(kJsonGrammar), tok()).ok());
  const size_t need = g.bytes().total;
  const Status s = g.Place(Region(need), need - 1);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(s.message()).find("needs " + std::to_string(need) + " bytes"),
            std::string::npos)
      << s.message();
  EXPECT_NE(std::string(s.message()).find("planned " + std::to_string(need - 1)),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(g.Fits(nullptr, need).ok());  // no region at all
  const uint32_t* bits = nullptr;
  EXPECT_FALSE(g.Allowed(&bits).ok());
  // Then one that fits.
  EXPECT_TRUE(g.Place(Region(need), need).ok());
  EXPECT_TRUE(g.Allowed(&bits).ok());
}

TEST_F(GrammarConstraintTest, AMisalignedRegionIsRefused) {
  GrammarConstraint g;
  ASSERT_TRUE(g.Build(Compile("root ::= \"a\"+"), tok()).ok());
  const size_t need = g.bytes().total;
  auto* region = static_cast<uint8_t*>(Region(need + 16));
  EXPECT_EQ(g.Place(region + 4, need).code(), StatusCode::kInvalidArgument);
}

// Nesting past the frames the region was planned for is ResourceExhausted, the state
// kept; smaller limits take fewer bytes.
TEST_F(GrammarConstraintTest, TheParseStackIsBoundedByThePlannedLimits) {
  MatcherLimits limits;
  limits.max_frames = 8;
  GrammarConstraint small, large;
  ASSERT_TRUE(
      small.Build(Compile("root ::= \"[\" root? \"]\""), tok(), nullptr, 0, limits).ok());
  ASSERT_TRUE(large.Build(Compile("root ::= \"[\" root? \"]\""), tok()).ok());
  EXPECT_LT(small.bytes().matcher, large.bytes().matcher);
  ASSERT_TRUE(small.Place(Region(small.bytes().total), small.bytes().total).ok());
  Status s;
  size_t depth = 0;
  for (; depth < 64 && s.ok(); ++depth) {
    const uint32_t* bits = nullptr;
    s = small.Allowed(&bits);
    if (s.ok()) s = small.Accept(0, "[");
  }
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.message();
  EXPECT_LE(depth, 10u);
  EXPECT_TRUE(small.Accept(0, "]").ok());  // the state as it was: it can close
}

}  // namespace
}  // namespace ember::grammar
