// Attention recording: arena and caller memory agree, rows are probability rows with the
// mask's zeros, subsets are slices of the full record, batching and threads do not
// change a bit, and bad selections are refused. (PyTorch agreement: oracle_mha.)
#include "runtime/attention_record.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "testing/testing.h"

namespace ember {
namespace {

struct Loaded {
  testing::AlignedBytes bytes;
  std::unique_ptr<Model> model;
};

Loaded Load(AttentionMask mask) {
  ModelSpec spec = testing::TinyModelSpec(/*d_model=*/32, /*n_layers=*/3,
                                          /*n_heads=*/4, /*n_kv_heads=*/2);
  spec.config.mask = mask;
  Loaded l;
  std::vector<uint8_t> raw;
  Status s = SerializeModel(spec, &raw);
  EXPECT_TRUE(s.ok()) << s.message();
  l.bytes = testing::AlignedBytes(raw);
  auto model = Model::FromMemory(l.bytes.data(), l.bytes.size());
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (model.ok()) l.model = std::move(*model);
  return l;
}

const std::vector<int32_t> kTokens = {1, 17, 42, 42, 250, 3, 99, 128, 7, 200, 11};

AttentionRecordOptions All() {
  AttentionRecordOptions o;
  o.enabled = true;
  return o;
}

// Runs kTokens in prefill steps of `batch` and returns a copy of the arena record.
std::vector<float> RecordInArena(const Model& model, AttentionRecordOptions what,
                                 uint32_t batch, const ThreadPool* pool = nullptr,
                                 AttentionRecord* layout = nullptr) {
  SessionOptions options;
  options.max_context = static_cast<uint32_t>(kTokens.size());
  options.max_batch = batch;
  options.record_attention = what;
  auto session = Session::Create(model, options, pool);
  EXPECT_TRUE(session.ok()) << session.status().message();
  if (!session.ok()) return {};
  EXPECT_EQ(session->attention_record().rows, 0u);
  EXPECT_TRUE(session->Prefill(kTokens.data(), kTokens.size()).ok());
  const AttentionRecord r = session->attention_record();
  if (layout) *layout = r;
  EXPECT_NE(r.weights, nullptr);
  return std::vector<float>(r.weights, r.weights + r.num_floats());
}

TEST(AttentionRecordTest, CausalRowsAreProbabilitiesWithMaskedZeros) {
  Loaded l = Load(AttentionMask::kCausal);
  ASSERT_TRUE(l.model);
  AttentionRecord r;
  const std::vector<float> w = RecordInArena(*l.model, All(), 64, nullptr, &r);
  ASSERT_EQ(r.num_layers, 3u);
  ASSERT_EQ(r.num_heads, 4u);
  ASSERT_EQ(r.positions, kTokens.size());
  ASSERT_EQ(r.rows, kTokens.size());
  ASSERT_EQ(w.size(), 3u * 4 * kTokens.size() * kTokens.size());
  for (size_t l = 0; l < r.num_layers; ++l) {
    for (size_t h = 0; h < r.num_heads; ++h) {
      for (size_t q = 0; q < r.positions; ++q) {
        const float* row =
            w.data() + ((l * r.num_heads + h) * r.positions + q) * r.positions;
        double sum = 0;
        for (size_t k = 0; k < r.positions; ++k) {
          if (k > q) {
            EXPECT_EQ(row[k], 0.0f) << l << " " << h << " " << q << " " << k;
          } else {
            EXPECT_GE(row[k], 0.0f);
            sum += row[k];
          }
        }
        EXPECT_NEAR(sum, 1.0, 1e-5) << l << " " << h << " " << q;
      }
      // The first token sees only itself.
      EXPECT_EQ(w[(l * r.num_heads + h) * r.positions * r.positions], 1.0f);
    }
  }
}

TEST(AttentionRecordTest, BidirectionalRowsSeeEveryKey) {
  Loaded l = Load(AttentionMask::kBidirectional);
  ASSERT_TRUE(l.model);
  AttentionRecord r;
  const std::vector<float> w = RecordInArena(*l.model, All(), 64, nullptr, &r);
  ASSERT_EQ(r.rows, kTokens.size());
  size_t positive = 0;
  for (size_t i = 0; i < w.size(); i += r.positions) {
    double sum = 0;
    for (size_t k = 0; k < r.positions; ++k) {
      sum += w[i + k];
      positive += w[i + k] > 0.0f;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
  EXPECT_EQ(positive, w.size());  // softmax weights never underflow here
}

TEST(AttentionRecordTest, PrefillBatchingAndThreadsDoNotChangeABit) {
  Loaded l = Load(AttentionMask::kCausal);
  ASSERT_TRUE(l.model);
  const std::vector<float> one_step = RecordInArena(*l.model, All(), 64);
  // Steps of 4 tokens, then token by token (decode).
  EXPECT_EQ(RecordInArena(*l.model, All(), 4), one_step);
  EXPECT_EQ(RecordInArena(*l.model, All(), 1), one_step);
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(RecordInArena(*l.model, All(), 64, pool->get()), one_step);
}

TEST(AttentionRecordTest, CallerMemoryEqualsArenaAndStaysInBounds) {
  Loaded l = Load(AttentionMask::kCausal);
  ASSERT_TRUE(l.model);
  const std::vector<float> arena = RecordInArena(*l.model, All(), 64);

  SessionOptions options;
  options.max_context = static_cast<uint32_t>(kTokens.size());
  auto session = Session::Create(*l.model, options);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->attention_record().weights, nullptr);
  // Guard floats on both sides catch writes out of bounds.
  const size_t n = arena.size(), guard = 64;
  std::vector<float> memory(n + 2 * guard, -7.0f);
  ASSERT_TRUE(session->RecordAttention(All(), memory.data() + guard, n).ok());
  ASSERT_TRUE(session->Prefill(kTokens.data(), kTokens.size()).ok());
  EXPECT_EQ(std::vector<float>(memory.begin() + guard, memory.end() - guard), arena);
  for (size_t i = 0; i < guard; ++i) {
    EXPECT_EQ(memory[i], -7.0f);
    EXPECT_EQ(memory[guard + n + i], -7.0f);
  }
  // Recording does not change the logits.
  auto plain = Session::Create(*l.model, options);
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(plain->Prefill(kTokens.data(), kTokens.size()).ok());
  EXPECT_EQ(memcmp(plain->logits(), session->logits(),
                   l.model->config().vocab_size * sizeof(float)),
            0);
  // Stopping: later passes leave the memory alone.
  session->Reset();
  std::vector<float> before = memory;
  ASSERT_TRUE(session->RecordAttention(AttentionRecordOptions(), nullptr, 0).ok());
  EXPECT_EQ(session->attention_record().weights, nullptr);
  ASSERT_TRUE(session->Prefill(kTokens.data(), 5).ok());
  EXPECT_EQ(memory, before);
}

TEST(AttentionRecordTest, SubsetIsASliceOfTheFullRecord) {
  Loaded l = Load(AttentionMask::kCausal);
  ASSERT_TRUE(l.model);
  AttentionRecord full_layout;
  const std::vector<float> full =
      RecordInArena(*l.model, All(), 64, nullptr, &full_layout);
  AttentionRecordOptions what = All();
  what.first_layer = 1;
  what.num_layers = 2;
  what.first_head = 2;
  what.num_heads = 1;
  what.max_positions = 6;  // shorter than the prompt: later positions are not recorded
  AttentionRecord r;
  const std::vector<float> part = RecordInArena(*l.model, what, 3, nullptr, &r);
  ASSERT_EQ(r.num_layers, 2u);
  ASSERT_EQ(r.num_heads, 1u);
  ASSERT_EQ(r.positions, 6u);
  ASSERT_EQ(r.rows, 6u);
  ASSERT_EQ(part.size(), 2u * 1 * 6 * 6);
  for (size_t l2 = 0; l2 < 2; ++l2) {
    for (size_t q = 0; q < 6; ++q) {
      for (size_t k = 0; k < 6; ++k) {
        // full_layout.weights points into a freed session: index the copy instead.
        const size_t at = ((1 + l2) * full_layout.num_heads + 2) * full_layout.positions;
        EXPECT_EQ(part[(l2 * 6 + q) * 6 + k], full[(at + q) * full_layout.positions + k])
            << l2 << " " << q << " " << k;
      }
    }
  }
}

TEST(AttentionRecordTest, PlannerSizesTheBufferOnlyWhenAsked) {
  Loaded l = Load(AttentionMask::kCausal);
  ASSERT_TRUE(l.model);
  SessionOptions off;
  off.max_context = 32;
  SessionOptions on = off;
  on.record_attention = All();
  on.record_attention.num_layers = 1;
  on.record_attention.max_positions = 20;
  auto session_plan_off = PlanSession(*l.model, off);
  auto session_plan_on = PlanSession(*l.model, on);
  ASSERT_TRUE(session_plan_off.ok() && session_plan_on.ok());
  const ArenaPlan* plan_off = &session_plan_off->arena;
  const ArenaPlan* plan_on = &session_plan_on->arena;
  bool found = false;
  for (size_t i = 0; i < plan_on->num_buffers(); ++i) {
    const ArenaPlan::Buffer& b = plan_on->buffer(i);
    if (strcmp(b.name, "attn_record") != 0) continue;
    found = true;
    EXPECT_EQ(b.bytes, (1 * 4 * 20 * 20 * sizeof(float) + 63) / 64 * 64);
    EXPECT_EQ(plan_off->buffer(i).bytes, 0u);
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(plan_on->total_bytes() - plan_off->total_bytes(),
            (1 * 4 * 20 * 20 * sizeof(float) + 63) / 64 * 64);
}

TEST(AttentionRecordTest, BadSelectionsAreRefused) {
  Loaded l = Load(AttentionMask::kCausal);
  ASSERT_TRUE(l.model);
  const ModelConfig& c = l.model->config();
  struct Case {
    uint32_t first_layer, num_layers, first_head, num_heads, positions;
    const char* message;
  };
  const Case cases[] = {
      {3, 0, 0, 0, 0, "layers [3, 3)"},
      {1, 3, 0, 0, 0, "layers [1, 4)"},
      {0xFFFFFFFFu, 2, 0, 0, 0, "layers"},
      {0, 0, 4, 0, 0, "heads [4, 4)"},
      {0, 0, 1, 0xFFFFFFFFu, 0, "heads"},
      {0, 0, 0, 0, 65, "65 positions exceed the session's context of 64"},
  };
  for (const Case& k : cases) {
    AttentionRecordOptions o = All();
    o.first_layer = k.first_layer;
    o.num_layers = k.num_layers;
    o.first_head = k.first_head;
    o.num_heads = k.num_heads;
    o.max_positions = k.positions;
    AttentionRecord r;
    Status s = ResolveAttentionRecord(c, 64, o, &r);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << k.message;
    EXPECT_NE(strstr(s.message(), k.message), nullptr) << s.message();
    SessionOptions options;
    options.max_context = 64;
    options.record_attention = o;
    EXPECT_FALSE(PlanSession(*l.model, options).ok());
    EXPECT_EQ(RequiredArenaBytes(*l.model, options), 0u);
    EXPECT_FALSE(Session::Create(*l.model, options).ok());
  }
  // Too large to address: 2^31 positions squared.
  ModelConfig huge = c;
  AttentionRecordOptions o = All();
  o.max_positions = 0x80000000u;
  AttentionRecord r;
  EXPECT_EQ(ResolveAttentionRecord(huge, 0x80000000u, o, &r).code(),
            StatusCode::kResourceExhausted);

  SessionOptions options;
  options.max_context = 16;
  auto session = Session::Create(*l.model, options);
  ASSERT_TRUE(session.ok());
  std::vector<float> memory(3 * 4 * 16 * 16);
  Status s = session->RecordAttention(All(), memory.data(), memory.size() - 1);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.message();
  s = session->RecordAttention(All(), nullptr, memory.size());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  ASSERT_TRUE(session->Prefill(kTokens.data(), 2).ok());
  s = session->RecordAttention(All(), memory.data(), memory.size());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  EXPECT_NE(strstr(s.message(), "position 0"), nullptr) << s.message();
}

}  // namespace
}  // namespace ember
