// Sliding layers keep only their window: on a Gemma 3-style model (sliding, global,
// sliding; window 6 of a context of 96) a session whose steps are short keeps a ring per
// sliding layer, and its logits equal, bit for bit, those of a session whose steps are as
// long as the context (every layer then keeps every position), through a prefill and
// decoding far past the window, and through a context shift; with f32, f16 and q8 caches.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "testing/testing.h"

namespace ember {
namespace {

constexpr size_t kContext = 96, kWindow = 6;

std::vector<int32_t> Tokens(size_t n) { return testing::SpreadTokens(n, 53); }

class KvRingTest : public ::testing::TestWithParam<KvType> {
 protected:
  // A session of kContext positions in steps of max_batch tokens.
  Session Make(const Model& model, uint32_t max_batch, bool shift) {
    auto s = Session::Create(
        model, testing::FamiliesSessionOptions(kContext, max_batch, GetParam(), shift));
    EXPECT_TRUE(s.ok()) << s.status().message();
    return std::move(*s);
  }
};

// The plan: sliding layers hold window + max_batch - 1 positions (after the shift's kept
// ones), the global layer all of them; the cache shrinks by that much.
TEST_P(KvRingTest, SlidingLayersPlanARing) {
  const testing::LoadedModel m =
      testing::LoadSpec(testing::FamiliesModelSpec(kWindow, kContext));
  ASSERT_NE(m.model, nullptr);
  const ModelConfig& c = m.model->config();
  for (size_t sink : {size_t{0}, size_t{4}}) {
    const KvLayer sliding = KvLayerPositions(c, 0, kContext, 4, sink);
    EXPECT_EQ(sliding.ring, kWindow + 3);
    EXPECT_EQ(sliding.sink, sink);
    EXPECT_EQ(sliding.capacity, sink + kWindow + 3);
    const KvLayer global = KvLayerPositions(c, 1, kContext, 4, sink);
    EXPECT_EQ(global.ring, 0u);
    EXPECT_EQ(global.capacity, kContext);
  }
  // A step as long as the context: the ring would be no smaller.
  EXPECT_EQ(KvLayerPositions(c, 0, kContext, kContext, 0).ring, 0u);
  SessionOptions options;
  options.max_context = kContext;
  options.kv_type = GetParam();
  options.max_batch = 4;
  auto ring = PlanSession(*m.model, options);
  options.max_batch = kContext;
  auto full = PlanSession(*m.model, options);
  ASSERT_TRUE(ring.ok() && full.ok());
  const size_t row = KvRowBytes(GetParam(), c.n_kv_heads, c.head_dim);
  // Two sliding layers x keys and values x (96 - 9) positions fewer (within alignment).
  const size_t saved = 2 * 2 * (kContext - kWindow - 3) * row;
  EXPECT_NEAR(
      static_cast<double>(testing::KvRowsBytes(*full) - testing::KvRowsBytes(*ring)),
      static_cast<double>(saved), 2.0 * kArenaAlignment);
}

// Prefill of 40 tokens (steps of 4: windows wrap around the rings), then 50 decode
// steps (position 90), the logits after each bitwise those of the full cache.
TEST_P(KvRingTest, PrefillAndDecodePastTheWindowEqualTheFullCache) {
  const testing::LoadedModel m =
      testing::LoadSpec(testing::FamiliesModelSpec(kWindow, kContext));
  ASSERT_NE(m.model, nullptr);
  const size_t vocab = m.model->config().vocab_size;
  Session ring = Make(*m.model, 4, false);
  Session full = Make(*m.model, kContext, false);
  ASSERT_GT(ring.kv_cache().layers[0].ring, 0u);
  ASSERT_EQ(full.kv_cache().layers[0].ring, 0u);
  const std::vector<int32_t> tokens = Tokens(90);
  ASSERT_TRUE(ring.Prefill(tokens.data(), 40).ok());
  ASSERT_TRUE(full.Prefill(tokens.data(), 40).ok());
  ASSERT_EQ(0, memcmp(ring.logits(), full.logits(), vocab * sizeof(float)));
  for (size_t i = 40; i < tokens.size(); ++i) {
    ASSERT_TRUE(ring.Decode(tokens[i]).ok());
    ASSERT_TRUE(full.Decode(tokens[i]).ok());
    ASSERT_EQ(0, memcmp(ring.logits(), full.logits(), vocab * sizeof(float)))
        << "position " << i << ", " << KvTypeName(GetParam()) << " cache";
  }
}

// A context shift keeps the first 4 positions apart from the ring and rotates the
// ring's slots: the logits after it, and after more decoding, bitwise those of the full
// cache's shift.
TEST_P(KvRingTest, AContextShiftEqualsTheFullCaches) {
  const testing::LoadedModel m =
      testing::LoadSpec(testing::FamiliesModelSpec(kWindow, kContext));
  ASSERT_NE(m.model, nullptr);
  const size_t vocab = m.model->config().vocab_size;
  Session ring = Make(*m.model, 4, true);
  Session full = Make(*m.model, kContext, true);
  ASSERT_EQ(ring.kv_cache().layers[0].sink, 4u);
  const std::vector<int32_t> tokens = Tokens(140);
  ASSERT_TRUE(ring.Prefill(tokens.data(), 50).ok());
  ASSERT_TRUE(full.Prefill(tokens.data(), 50).ok());
  // A ring keeps context_keep positions: another count is refused.
  EXPECT_FALSE(ring.ShiftContext(3, 10).ok());
  for (size_t i = 50; i < tokens.size(); ++i) {
    // Past the context, generation's MakeRoom shifts (keep 4, drop half the rest).
    ASSERT_TRUE(ring.MakeRoom(1).ok());
    ASSERT_TRUE(full.MakeRoom(1).ok());
    ASSERT_TRUE(ring.Decode(tokens[i]).ok());
    ASSERT_TRUE(full.Decode(tokens[i]).ok());
    ASSERT_EQ(ring.position(), full.position());
    ASSERT_EQ(0, memcmp(ring.logits(), full.logits(), vocab * sizeof(float)))
        << "token " << i << ", position " << ring.position() << ", "
        << KvTypeName(GetParam()) << " cache";
  }
  EXPECT_GE(ring.shifts(), 1u);
  EXPECT_EQ(ring.shifts(), full.shifts());
}

INSTANTIATE_TEST_SUITE_P(Types, KvRingTest,
                         ::testing::Values(KvType::kF32, KvType::kF16, KvType::kQ8),
                         [](const ::testing::TestParamInfo<KvType>& info) {
                           return std::string(KvTypeName(info.param));
                         });

}  // namespace
}  // namespace ember
