// Long context in small memory, end to end: every KV cache type gives bitwise the same
// logits for prefill and decode and any thread count; a context shift equals a fresh
// prefill of the kept tokens where that is exact (one layer: plain RoPE, a sliding layer
// on its own base, YaRN on part of each head), moves and rotates every layer's keys as
// RoPE would have, and lets generation run past the context; the
// longest context a budget holds is the one ember_arena_bytes then asks for.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "gtest/gtest.h"
#include "runtime/generate.h"
#include "runtime/model/model.h"
#include "runtime/model/tensor_names.h"
#include "runtime/session.h"
#include "testing/testing.h"
#include "tests/stories260k.h"
#include "tools/util/parse.h"

namespace ember {
namespace {

class KvTypeTest : public ::testing::TestWithParam<KvType> {};

// Logits after one prefill of the golden sequence equal those after feeding it one
// token at a time, bit for bit, and equal for 1, 2 and 3 threads (the f32 cache's
// golden_test pattern, for each type).
TEST_P(KvTypeTest, PrefillDecodeAndThreadsAgreeBitwise) {
  if (GetParam() == KvType::kF32) GTEST_SKIP() << "golden_test checks the f32 cache";
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  auto model = Model::Open(testing::Stories260KPath().c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  std::vector<int32_t> tokens = {1};  // 65 positions: 5 spans of 16
  tokens.insert(tokens.end(), testing::Stories260KGolden().begin(),
                testing::Stories260KGolden().begin() + 64);
  SessionOptions options;
  options.max_batch = 24;  // several prefill steps
  options.kv_type = GetParam();
  testing::ExpectPrefillDecodeAndThreadsAgreeBitwise(**model, options, tokens);
}

// The arena's cache shrinks with the type: rows of kv_dim values of 4, 2 or 1 byte(s)
// (q8 with an f32 scale per group of 32 of each head).
TEST_P(KvTypeTest, ArenaHoldsTheCacheOfItsType) {
  const testing::LoadedModel m = testing::LoadSpec(testing::TinyModelSpec(64, 2, 4, 2));
  ASSERT_NE(m.model, nullptr);
  SessionOptions options;
  options.max_context = 64;
  options.kv_type = GetParam();
  auto plan = PlanSession(*m.model, options);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const size_t kv_bytes = testing::KvRowsBytes(*plan);
  // 2 layers x 2 x 64 positions, rows of 2 KV heads of head_dim 16.
  const size_t row_bytes = GetParam() == KvType::kF32   ? 32 * 4
                           : GetParam() == KvType::kF16 ? 32 * 2
                                                        : 32 + 2 * 4;
  EXPECT_EQ(KvRowBytes(GetParam(), 2, 16), row_bytes);
  EXPECT_GE(kv_bytes, 2 * 2 * 64 * row_bytes);
  EXPECT_LT(kv_bytes, 2 * 2 * 64 * row_bytes + 2 * kArenaAlignment);
}

// (The f32 cache's bitwise agreement is golden_test's.)
INSTANTIATE_TEST_SUITE_P(Types, KvTypeTest,
                         ::testing::Values(KvType::kF32, KvType::kF16, KvType::kQ8),
                         [](const ::testing::TestParamInfo<KvType>& info) {
                           return std::string(KvTypeName(info.param));
                         });

// The logits after prefilling `tokens` into a fresh session of this type.
std::vector<float> FreshLogits(const Model& model, KvType type,
                               const std::vector<int32_t>& tokens) {
  SessionOptions options;
  options.max_context = static_cast<uint32_t>(tokens.size());
  options.kv_type = type;
  auto s = Session::Create(model, options);
  EXPECT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->Prefill(tokens.data(), tokens.size()).ok());
  return std::vector<float>(s->logits(), s->logits() + model.config().vocab_size);
}

// After prefilling 48 tokens, dropping 20 after the first 5 and decoding one more, the
// logits equal a fresh prefill of the kept tokens and that one (`what` names the model).
// A one-layer model's keys and values depend on the token and its position alone, so
// after a shift its cache is exactly the one the fresh prefill makes: the logits agree
// within rounding (f32 cache; f16 rounds rotated keys once more, q8 quantizes them
// again: looser, and printed).
void ExpectShiftEqualsFreshPrefill(const Model& model, const char* what) {
  const size_t vocab = model.config().vocab_size;
  std::vector<int32_t> tokens;
  for (int i = 0; i < 48; ++i) tokens.push_back(3 + (i * 37) % 290);
  const size_t keep = 5, discard = 20;
  for (KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8}) {
    SessionOptions options;
    options.max_context = 48;
    options.kv_type = type;
    auto s = Session::Create(model, options);
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE(s->Prefill(tokens.data(), tokens.size()).ok());
    ASSERT_TRUE(s->ShiftContext(keep, discard).ok());
    ASSERT_EQ(s->position(), 48 - discard);
    ASSERT_TRUE(s->Decode(7).ok());
    std::vector<int32_t> kept(tokens.begin(), tokens.begin() + keep);
    kept.insert(kept.end(), tokens.begin() + keep + discard, tokens.end());
    kept.push_back(7);
    const std::vector<float> fresh = FreshLogits(model, type, kept);
    double max_diff = 0, scale = 0;
    for (size_t i = 0; i < vocab; ++i) {
      max_diff = std::max<double>(max_diff, std::fabs(s->logits()[i] - fresh[i]));
      scale = std::max<double>(scale, std::fabs(fresh[i]));
    }
    printf(
        "[ember] shift vs fresh prefill, %s, %s cache: max |logit difference| %.3g "
        "(logits up to %.3g)\n",
        what, KvTypeName(type), max_diff, scale);
    const double bound = type == KvType::kF32 ? 1e-5 : type == KvType::kF16 ? 1e-3 : 0.05;
    EXPECT_LE(max_diff, bound * scale) << what << ", " << KvTypeName(type);
  }
}

TEST(ContextShiftTest, OneLayerEqualsAFreshPrefillOfTheKeptTokens) {
  const testing::LoadedModel m =
      testing::LoadSpec(testing::TinyModelSpec(64, 1, 4, 2, 96, 300, 64, 5));
  ASSERT_NE(m.model, nullptr);
  ExpectShiftEqualsFreshPrefill(*m.model, "plain RoPE");
}

// Each layer's keys turn with that layer's own RoPE: a sliding layer (window 6, smaller
// than the context, soft-capped scores) on its own base beside a Llama 3-scaled global
// RoPE it must not use; and a global layer with YaRN (its attention factor already in the
// keys) rotating half of each head, half-split pairs.
TEST(ContextShiftTest, EachLayersRopeEqualsAFreshPrefill) {
  ModelSpec sliding = testing::TinyModelSpec(64, 1, 4, 2, 96, 300, 64, 5);
  ModelConfig& c = sliding.config;
  c.rope_theta = 500000.0f;
  c.rope_scaling = RopeScaling::kLlama3;
  c.rope_scaling_factor = 8.0f;
  c.rope_original_context = 16;
  c.rope_local_theta = 10000.0f;
  c.sliding_window = 6;
  c.layer_attention = {LayerAttention::kSliding};
  c.attn_softcap = 3.0f;
  const testing::LoadedModel a = testing::LoadSpec(sliding);
  ASSERT_NE(a.model, nullptr);
  ExpectShiftEqualsFreshPrefill(*a.model, "a sliding layer on its own base");

  ModelSpec yarn = testing::TinyModelSpec(64, 1, 4, 2, 96, 300, 64, 5);
  ModelConfig& g = yarn.config;
  g.rope_pairing = RopePairing::kHalf;
  g.rope_scaling = RopeScaling::kYarn;
  g.rope_scaling_factor = 4.0f;
  g.rope_original_context = 16;
  g.rope_attention_factor = 1.1386f;
  g.rope_dim = 8;
  const testing::LoadedModel b = testing::LoadSpec(yarn);
  ASSERT_NE(b.model, nullptr);
  ExpectShiftEqualsFreshPrefill(*b.model, "YaRN on half of each head");
}

// LongRoPE picks short or long factors per pass: past its original context a shift
// cannot rotate keys as a fresh pass would, so a session that could go there refuses.
TEST(ContextShiftTest, LongRopePastItsOriginalContextRefuses) {
  ModelSpec spec = testing::TinyModelSpec(64, 1, 4, 2, 96, 300, 64, 5);
  ModelConfig& c = spec.config;
  c.rope_scaling = RopeScaling::kLongRope;
  c.rope_original_context = 32;
  c.rope_freq_factors.assign(8, 1.0f);
  c.rope_long_freq_factors.assign(8, 2.0f);
  const testing::LoadedModel m = testing::LoadSpec(spec);
  ASSERT_NE(m.model, nullptr);
  SessionOptions options;
  options.context_shift = true;
  options.max_context = 32;
  EXPECT_TRUE(PlanSession(*m.model, options).ok());
  options.max_context = 33;
  auto plan = PlanSession(*m.model, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(std::string(plan.status().message()).find("LongRoPE"), std::string::npos);
  options.context_shift = false;
  auto s = Session::Create(*m.model, options);
  ASSERT_TRUE(s.ok()) << s.status().message();
  const int32_t tokens[] = {1, 5, 6, 7};
  ASSERT_TRUE(s->Prefill(tokens, 4).ok());
  EXPECT_FALSE(s->ShiftContext(1, 2).ok());
}

// In every layer of stories260K, the moved keys are the old ones rotated by the RoPE
// angle difference (computed here in double) and the moved values are the old ones,
// bitwise; the kept positions do not change.
TEST(ContextShiftTest, EveryLayerMovesAndRotates) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  auto model = Model::Open(testing::Stories260KPath().c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const ModelConfig& c = (*model)->config();
  SessionOptions options;
  options.max_context = 100;
  options.max_batch = 16;  // the shift rotates in chunks of max_batch positions
  auto s = Session::Create(**model, options);
  ASSERT_TRUE(s.ok());
  std::vector<int32_t> tokens = {1};
  tokens.insert(tokens.end(), testing::Stories260KGolden().begin(),
                testing::Stories260KGolden().begin() + 99);
  ASSERT_TRUE(s->Prefill(tokens.data(), tokens.size()).ok());
  const KvCache& kv = s->kv_cache();
  const size_t kv_dim = c.kv_dim(), hd = c.head_dim;
  auto rows = [&](KvSide side) {
    std::vector<float> all(c.n_layers * 100 * kv_dim);
    for (size_t l = 0; l < c.n_layers; ++l) {
      for (size_t p = 0; p < s->position(); ++p) {
        kv.Load(l, side, p, all.data() + (l * 100 + p) * kv_dim);
      }
    }
    return all;
  };
  const std::vector<float> keys = rows(kKeys), values = rows(kValues);
  const size_t keep = 3, discard = 40;
  ASSERT_TRUE(s->ShiftContext(keep, discard).ok());
  const std::vector<float> new_keys = rows(kKeys), new_values = rows(kValues);
  double max_error = 0;
  for (size_t l = 0; l < c.n_layers; ++l) {
    for (size_t p = 0; p < s->position(); ++p) {
      const size_t old_p = p < keep ? p : p + discard;
      const float* k = keys.data() + (l * 100 + old_p) * kv_dim;
      const float* nk = new_keys.data() + (l * 100 + p) * kv_dim;
      ASSERT_EQ(
          0, memcmp(values.data() + (l * 100 + old_p) * kv_dim,
                    new_values.data() + (l * 100 + p) * kv_dim, kv_dim * sizeof(float)));
      if (p < keep) {
        ASSERT_EQ(0, memcmp(k, nk, kv_dim * sizeof(float)));
        continue;
      }
      // Interleaved pairs (2i, 2i+1) rotated by -discard * theta^(-2i / head_dim).
      for (size_t h = 0; h < c.n_kv_heads; ++h) {
        for (size_t i = 0; i < hd / 2; ++i) {
          const double angle = -double(discard) * std::pow(double(c.rope_theta),
                                                           -double(2 * i) / double(hd));
          const double a = k[h * hd + 2 * i], b = k[h * hd + 2 * i + 1];
          const double ra = a * std::cos(angle) - b * std::sin(angle);
          const double rb = b * std::cos(angle) + a * std::sin(angle);
          max_error = std::max(max_error, std::fabs(ra - nk[h * hd + 2 * i]));
          max_error = std::max(max_error, std::fabs(rb - nk[h * hd + 2 * i + 1]));
        }
      }
    }
  }
  printf("[ember] shifted keys against a double-precision rotation: max error %.3g\n",
         max_error);
  // The float angles of the two positions (up to 100 radians) carry ~1e-5 each.
  EXPECT_LT(max_error, 1e-3);
}

// Generation goes on past a full context, shifting as often as it needs, and the text
// after the shifts is the model's own (its top token under a fresh prefill of what the
// cache holds is rarely far off: printed).
TEST(ContextShiftTest, GenerationRunsPastTheContext) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  auto model = Model::Open(testing::Stories260KPath().c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  for (KvType type : {KvType::kF32, KvType::kQ8}) {
    SessionOptions options;
    options.max_context = 48;
    options.context_shift = true;
    options.context_keep = 1;
    options.kv_type = type;
    auto s = Session::Create(**model, options);
    ASSERT_TRUE(s.ok()) << s.status().message();
    SamplerOptions greedy;
    greedy.temperature = 0;
    Sampler sampler(greedy, (*model)->config().vocab_size, s->sampler_scratch());
    const int32_t bos = 1;
    size_t count = 0;
    GenerateResult result;
    const Status status = Generate(
        *s, sampler, &bos, 1, 200,
        [](void* user, int32_t, std::string_view) {
          ++*static_cast<size_t*>(user);
          return true;
        },
        &count, &result);
    ASSERT_TRUE(status.ok()) << status.message();
    // llama2.c models stop at BOS too (a new story); until then every step fits.
    EXPECT_GT(result.generated, 48u) << KvTypeName(type);
    EXPECT_GE(s->shifts(), 1u);
    EXPECT_LE(s->position(), 48u);
  }
}

// Learned positions were added to every layer's input: such a model refuses to shift.
TEST(ContextShiftTest, LearnedPositionsRefuse) {
  ModelSpec spec = testing::TinyModelSpec(32, 1, 4, 4, 48, 300, 32);
  spec.config.positions = PositionKind::kLearned;
  TensorSpec pos;
  pos.name = names::kPosEmbedding;
  pos.shape = {32, 32};
  pos.values.assign(32 * 32, 0.01f);
  spec.tensors.push_back(pos);
  const testing::LoadedModel m = testing::LoadSpec(spec);
  ASSERT_NE(m.model, nullptr);
  SessionOptions options;
  options.context_shift = true;
  auto plan = PlanSession(*m.model, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(std::string(plan.status().message()).find("learned"), std::string::npos);
  options.context_shift = false;
  auto s = Session::Create(*m.model, options);
  ASSERT_TRUE(s.ok());
  const int32_t tokens[] = {1, 5, 6, 7};
  ASSERT_TRUE(s->Prefill(tokens, 4).ok());
  const Status shift = s->ShiftContext(1, 2);
  EXPECT_FALSE(shift.ok());
  EXPECT_NE(std::string(shift.message()).find("learned"), std::string::npos);
}

// The longest context a budget holds is the largest whose arena, as ember_arena_bytes
// asks a caller for it, fits; one position more does not. (No grammar memory: the
// default room for one is most of the smallest budget.)
TEST(BudgetTest, LongestContextMatchesTheCApi) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  auto model = Model::Open(testing::Stories260KPath().c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  ember_model* c_model = nullptr;
  ASSERT_EQ(ember_model_open(testing::Stories260KPath().c_str(), &c_model), EMBER_OK);
  const size_t max_context = (*model)->config().max_context;
  size_t f32_longest = 0;
  for (KvType type : {KvType::kF32, KvType::kF16, KvType::kQ8}) {
    for (size_t budget : {size_t{150} << 10, size_t{400} << 10, size_t{2} << 20}) {
      SessionOptions options;
      options.kv_type = type;
      auto longest = LongestContextWithin(**model, options, budget);
      ASSERT_TRUE(longest.ok()) << longest.status().message();
      ember_session_options c_options;
      ember_session_options_default(&c_options);
      c_options.kv_type = static_cast<uint32_t>(type);
      c_options.max_context = static_cast<uint32_t>(*longest);
      EXPECT_LE(ember_arena_bytes(c_model, &c_options), budget);
      if (*longest < max_context) {
        c_options.max_context += 1;
        EXPECT_GT(ember_arena_bytes(c_model, &c_options), budget);
      }
      if (type == KvType::kF32 && budget == (size_t{400} << 10)) f32_longest = *longest;
      if (type == KvType::kQ8 && budget == (size_t{400} << 10)) {
        EXPECT_GT(*longest, f32_longest);  // a smaller cache: a longer context
      }
    }
  }
  SessionOptions options;
  auto none = LongestContextWithin(**model, options, 1000);
  EXPECT_EQ(none.status().code(), StatusCode::kResourceExhausted);
  ember_model_free(c_model);
}

TEST(BudgetTest, ParseBytes) {
  uint64_t v = 0;
  ASSERT_TRUE(tools::ParseBytes("64MiB", "--budget", &v).ok());
  EXPECT_EQ(v, uint64_t{64} << 20);
  ASSERT_TRUE(tools::ParseBytes("1.5gib", "--budget", &v).ok());
  EXPECT_EQ(v, uint64_t{3} << 29);
  ASSERT_TRUE(tools::ParseBytes("512K", "--budget", &v).ok());
  EXPECT_EQ(v, uint64_t{512} << 10);
  ASSERT_TRUE(tools::ParseBytes("2MB", "--budget", &v).ok());
  EXPECT_EQ(v, 2000000u);
  ASSERT_TRUE(tools::ParseBytes("100000", "--budget", &v).ok());
  EXPECT_EQ(v, 100000u);
  for (const char* bad : {"", "MiB", "-1MiB", "64XB", "1e30GiB", "nan", "64 MiB"}) {
    EXPECT_FALSE(tools::ParseBytes(bad, "--budget", &v).ok()) << bad;
  }
}

}  // namespace
}  // namespace ember
