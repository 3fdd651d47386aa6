// ArenaPlan: buffers live at the same time never overlap; buffers that are never live
// together share bytes; the session plan for a real model satisfies both.
#include "runtime/arena.h"

#include <cstdint>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "runtime/session.h"
#include "testing/testing.h"

namespace ember {
namespace {

void ExpectNoLiveOverlap(const ArenaPlan& plan) {
  for (size_t i = 0; i < plan.num_buffers(); ++i) {
    const auto& a = plan.buffer(i);
    EXPECT_EQ(a.offset % kArenaAlignment, 0u) << a.name;
    EXPECT_LE(a.offset + a.bytes, plan.total_bytes()) << a.name;
    for (size_t j = i + 1; j < plan.num_buffers(); ++j) {
      const auto& b = plan.buffer(j);
      const bool live_together =
          a.first_step <= b.last_step && b.first_step <= a.last_step;
      const bool overlap = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      EXPECT_FALSE(live_together && overlap && a.bytes && b.bytes)
          << a.name << " and " << b.name << " overlap while both live";
    }
  }
}

TEST(ArenaTest, DisjointLifetimesShareBytes) {
  ArenaPlan plan;
  const ArenaBuffer<uint8_t> a = plan.Add<uint8_t>("a", 1000, 0, 1);
  const ArenaBuffer<float> b = plan.Add<float>("b", 250, 2, 3);
  const ArenaBuffer<int32_t> c = plan.Add<int32_t>("c", 16, 0, 3);
  const ArenaBuffer<float> empty = plan.Add<float>("empty", 0, 0, 3);
  ASSERT_TRUE(plan.Plan().ok());
  EXPECT_EQ(plan.buffer(0).offset, plan.buffer(1).offset);
  EXPECT_EQ(plan.total_bytes(), 1024u + 64u);
  ExpectNoLiveOverlap(plan);

  // Bind: each id's memory at its offset, typed; an empty buffer is null.
  alignas(kArenaAlignment) static uint8_t arena[1024 + 64];
  EXPECT_EQ(static_cast<void*>(plan.Bind(a, arena)), arena + plan.buffer(0).offset);
  EXPECT_EQ(static_cast<void*>(plan.Bind(b, arena)), arena + plan.buffer(1).offset);
  EXPECT_EQ(static_cast<void*>(plan.Bind(c, arena)), arena + plan.buffer(2).offset);
  EXPECT_EQ(plan.Bind(empty, arena), nullptr);
  EXPECT_EQ(plan.Bind(ArenaBuffer<float>(), arena), nullptr);  // never added
}

TEST(ArenaTest, RefusesTooManyOrTooLargeBuffers) {
  ArenaPlan many;
  for (size_t i = 0; i <= ArenaPlan::kMaxBuffers; ++i) many.Add<float>("buf", 1, 0, 0);
  EXPECT_EQ(many.Plan().code(), StatusCode::kInternal);

  ArenaPlan huge;
  huge.Add<float>("small", 10, 0, 0);
  huge.Add<double>("huge", SIZE_MAX / 4, 0, 0);  // SIZE_MAX / 4 * 8 bytes overflow
  Status s = huge.Plan();
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(s.message()).find("huge"), std::string::npos) << s.message();

  // Each fits, the sum does not.
  ArenaPlan sum;
  sum.Add<uint8_t>("first", SIZE_MAX / 2 - 64, 0, 0);
  sum.Add<uint8_t>("second", SIZE_MAX / 2 - 64, 0, 0);
  sum.Add<uint8_t>("third", SIZE_MAX / 2 - 64, 0, 0);
  EXPECT_EQ(sum.Plan().code(), StatusCode::kResourceExhausted);
}

TEST(ArenaTest, RandomPlansNeverOverlapLiveBuffers) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    ArenaPlan plan;
    size_t sum = 0;
    const int n = 1 + rng() % 20;
    for (int i = 0; i < n; ++i) {
      const int first = rng() % 6;
      const int last = first + rng() % 3;
      const size_t bytes = rng() % 5000;
      plan.Add<uint8_t>("buf", bytes, first, last);
      sum += (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    }
    ASSERT_TRUE(plan.Plan().ok());
    ExpectNoLiveOverlap(plan);
    EXPECT_LE(plan.total_bytes(), sum);
  }
}

TEST(ArenaTest, SessionPlanIsConsistentAndExact) {
  const testing::AlignedBytes bytes(testing::TinyModelBytes());
  auto model = Model::FromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status().message();
  SessionOptions options;
  auto plan = PlanSession(**model, options);
  ASSERT_TRUE(plan.ok());
  ExpectNoLiveOverlap(plan->arena);
  const size_t needed = RequiredArenaBytes(**model, options);
  EXPECT_EQ(needed, plan->arena.total_bytes() + kArenaAlignment - 1);

  // The exact number works with a caller buffer at any alignment; one byte less fails.
  std::vector<uint8_t> arena(needed + 3);
  for (size_t shift : {0, 1, 3}) {
    auto session =
        Session::Create(**model, options, nullptr, arena.data() + shift, needed);
    ASSERT_TRUE(session.ok()) << session.status().message();
    const int32_t tokens[] = {1, 299, 298};
    Status s = session->Prefill(tokens, 3);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  auto small = Session::Create(**model, options, nullptr, arena.data(), needed - 1);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(small.status().message()).find(std::to_string(needed)),
            std::string::npos);
}

}  // namespace
}  // namespace ember
