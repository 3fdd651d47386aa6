// Session memory: nothing a pass computes depends on what the arena held before (the
// arena is not cleared at creation, so this is what makes that safe), and a model's
// declared context bounds a session only when the caller asks for it: a small file
// that declares a huge context cannot make a default session plan gigabytes, and an
// explicit long context costs memory only as it fills.
#include "runtime/session.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/isa.h"
#include "runtime/generate.h"
#include "runtime/model/tensor.h"
#include "runtime/sampler.h"
#include "runtime/xnn_backend.h"
#include "testing/testing.h"
#include "tools/convert/dtype_policy.h"

namespace ember {
namespace {

class StaleArenaTest
    : public ::testing::TestWithParam<std::tuple<DType, Backend, KvType>> {};

// Two sessions over arenas filled with zeros and with 0xFF bytes (NaN floats, int8 -1):
// prefill in several steps, then greedy decoding, a context shift and more decoding,
// bitwise equal logits at every step.
TEST_P(StaleArenaTest, ArenaContentsNeverReachTheOutput) {
  const DType dtype = std::get<0>(GetParam());
  const Backend backend = std::get<1>(GetParam());
  const KvType kv_type = std::get<2>(GetParam());
  if (backend == Backend::kXnnpack && !XnnpackBuiltIn()) {
    GTEST_SKIP() << "XNNPACK is not in this build";
  }
  const bool k_quant = IsKQuant(dtype);  // rows of whole super-blocks (256 inputs)
  ModelSpec spec = testing::TinyModelSpec(k_quant ? 256 : 64, k_quant ? 1 : 2, 4, 2,
                                          k_quant ? 256 : 96, 300, 128, 3);
  ASSERT_TRUE(tools::ChooseDTypes(dtype, {}, &spec).ok());
  testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_TRUE(loaded.model);
  const Model& model = *loaded.model;
  SessionOptions options;
  options.max_batch = 4;
  options.all_logits = true;
  options.backend = backend;
  options.kv_type = kv_type;
  const size_t bytes = RequiredArenaBytes(model, options);
  ASSERT_GT(bytes, 0u);
  std::vector<uint8_t> zeros(bytes, 0x00), ones(bytes, 0xFF);
  auto a = Session::Create(model, options, nullptr, zeros.data(), zeros.size());
  auto b = Session::Create(model, options, nullptr, ones.data(), ones.size());
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  const size_t vocab = model.config().vocab_size;
  EXPECT_EQ(memcmp(a->logits(), b->logits(), vocab * sizeof(float)), 0)
      << "logits before the first pass";

  const int32_t prompt[] = {1, 17, 250, 3, 99, 42, 7, 7, 130, 64, 5};
  const size_t n = sizeof(prompt) / sizeof(prompt[0]);
  ASSERT_TRUE(a->Prefill(prompt, n).ok());
  ASSERT_TRUE(b->Prefill(prompt, n).ok());
  ASSERT_EQ(a->num_logits(), b->num_logits());
  for (size_t i = 0; i < a->num_logits(); ++i) {
    EXPECT_EQ(memcmp(a->logits_at(i), b->logits_at(i), vocab * sizeof(float)), 0)
        << "prefill row " << i;
  }
  SamplerOptions greedy;
  greedy.temperature = 0.0f;
  Sampler sampler(greedy, vocab, a->sampler_scratch());
  for (int step = 0; step < 40; ++step) {
    if (step == 30) {  // moves rows, rotates keys in chunks of max_batch
      ASSERT_TRUE(a->ShiftContext(2, 23).ok());
      ASSERT_TRUE(b->ShiftContext(2, 23).ok());
    }
    int32_t next;
    ASSERT_TRUE(sampler.Sample(a->logits(), &next).ok());
    ASSERT_TRUE(a->Decode(next).ok());
    ASSERT_TRUE(b->Decode(next).ok());
    ASSERT_EQ(memcmp(a->logits(), b->logits(), vocab * sizeof(float)), 0)
        << "decode step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(
    DTypesAndBackends, StaleArenaTest,
    ::testing::Values(std::make_tuple(DType::kF32, Backend::kHighway, KvType::kF32),
                      std::make_tuple(DType::kF16, Backend::kHighway, KvType::kF32),
                      std::make_tuple(DType::kQ8, Backend::kHighway, KvType::kF32),
                      std::make_tuple(DType::kQ4, Backend::kHighway, KvType::kF32),
                      std::make_tuple(DType::kQ5K, Backend::kHighway, KvType::kF32),
                      std::make_tuple(DType::kF32, Backend::kXnnpack, KvType::kF32),
                      std::make_tuple(DType::kF32, Backend::kHighway, KvType::kF16),
                      std::make_tuple(DType::kQ8, Backend::kHighway, KvType::kQ8)),
    [](const ::testing::TestParamInfo<std::tuple<DType, Backend, KvType>>& info) {
      const KvType kv = std::get<2>(info.param);
      return std::string(DTypeName(std::get<0>(info.param))) + "_" +
             BackendName(std::get<1>(info.param)) +
             (kv == KvType::kF32 ? "" : std::string("_kv_") + KvTypeName(kv));
    });

constexpr uint32_t kHugeContext = 1u << 24;  // the loader's largest

TEST(SessionPlanTest, DeclaredContextBoundsOnlySessionsThatAskForIt) {
  testing::LoadedModel loaded =
      testing::LoadSpec(testing::TinyModelSpec(32, 2, 4, 2, 48, 300, kHugeContext));
  ASSERT_TRUE(loaded.model);
  const Model& model = *loaded.model;

  // No context asked for: refused, with what it would take and what to do.
  Result<SessionPlan> implicit = PlanSession(model, SessionOptions());
  ASSERT_FALSE(implicit.ok());
  EXPECT_EQ(implicit.status().code(), StatusCode::kResourceExhausted);
  const std::string message = implicit.status().message();
  EXPECT_NE(message.find("16777216 positions"), std::string::npos) << message;
  EXPECT_NE(message.find("max_context"), std::string::npos) << message;
  EXPECT_EQ(RequiredArenaBytes(model, SessionOptions()), 0u);

  // A context the run needs: small.
  SessionOptions small;
  small.max_context = 64;
  Result<SessionPlan> plan = PlanSession(model, small);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_LT(plan->arena_bytes(), size_t{1} << 20);
  EXPECT_EQ(plan->max_prompt_bytes, 8u * 64);

  // The whole context, asked for explicitly: planned where it can be addressed.
  SessionOptions all;
  all.max_context = kHugeContext;
  Result<SessionPlan> huge = PlanSession(model, all);
  if (sizeof(size_t) > 4) {
    ASSERT_TRUE(huge.ok()) << huge.status().message();
    EXPECT_GT(huge->arena_bytes(), kDefaultArenaLimit);
    // The prompt bound stays sane: 8 bytes a position, at most 1 MiB.
    EXPECT_EQ(huge->max_prompt_bytes, kDefaultMaxPromptBytes);
  } else {
    // 2 layers x 2 x 2^24 x 16 floats: 4 GiB, past a 32-bit address space.
    ASSERT_FALSE(huge.ok());
    EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  }
}

// Resident memory of this process, in bytes (Linux), or 0 when it cannot be read.
size_t ResidentBytes() {
  FILE* f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int read = fscanf(f, "%llu %llu", &size, &resident);
  fclose(f);
  return read == 2 ? static_cast<size_t>(resident) * 4096 : 0;
}

// A long context asked for explicitly costs memory as it fills, not at creation: the
// session allocates its arena and clears only the logits.
TEST(SessionPlanTest, ALongContextCostsMemoryOnlyAsItFills) {
  constexpr uint32_t kContext = 1u << 20;
  testing::LoadedModel loaded =
      testing::LoadSpec(testing::TinyModelSpec(32, 2, 4, 2, 48, 300, kContext));
  ASSERT_TRUE(loaded.model);
  SessionOptions options;
  options.max_context = kContext;
  const size_t arena = RequiredArenaBytes(*loaded.model, options);
  ASSERT_GT(arena, size_t{256} << 20);  // the cache alone: 2 x 2 x 2^20 x 16 floats
  const size_t before = ResidentBytes();
  if (before == 0) GTEST_SKIP() << "no /proc/self/statm";
  auto session = Session::Create(*loaded.model, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  const int32_t prompt[] = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(session->Prefill(prompt, 8).ok());
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(session->Decode(9 + i).ok());
  const size_t after = ResidentBytes();
  EXPECT_LT(after - before, arena / 8)
      << "resident memory grew by " << (after - before) << " bytes for an arena of "
      << arena;
}

// Generation on an encoder says what it needs instead of failing inside a step.
TEST(SessionPlanTest, GenerationNeedsACausalModel) {
  ModelSpec spec = testing::TinyModelSpec();
  spec.config.mask = AttentionMask::kBidirectional;
  testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_TRUE(loaded.model);
  auto session = Session::Create(*loaded.model, SessionOptions());
  ASSERT_TRUE(session.ok()) << session.status().message();
  SamplerOptions greedy;
  greedy.temperature = 0.0f;
  Sampler sampler(greedy, loaded.model->config().vocab_size, session->sampler_scratch());
  const int32_t prompt[] = {1, 2, 3};
  GenerateResult result;
  const Status s = Generate(
      *session, sampler, prompt, 3, 5, [](void*, int32_t, std::string_view) { return true; },
      nullptr, &result);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("needs a causal model"), std::string::npos)
      << s.message();
  EXPECT_EQ(result.generated, 0u);
}

// SessionOptions::isa: every tier this CPU runs builds the session's kernels for it and
// the q8 model decodes to the same greedy tokens (every int8 path gives the same int32
// dots; the float kernels of other Highway targets round differently, which moves no
// token of this model); an unknown tier is refused with the tiers it knows, and one the
// CPU lacks says what is missing.
TEST(SessionIsaTest, EveryTierThisCpuRunsDecodesTheSameTokens) {
  ModelSpec spec = testing::TinyModelSpec(64, 2, 4, 2, 96, 300, 128, 3);
  ASSERT_TRUE(tools::ChooseDTypes(DType::kQ8, {}, &spec).ok());
  testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_TRUE(loaded.model);
  // The greedy tokens of `isa` after a 5-token prompt.
  const auto tokens = [&](const char* isa, std::string* tier) {
    SessionOptions options;
    options.isa = isa;
    auto session = Session::Create(*loaded.model, options);
    EXPECT_TRUE(session.ok()) << isa << ": " << session.status().message();
    std::vector<int32_t> out;
    if (!session.ok()) return out;
    *tier = session->kernel_isa();
    const int32_t prompt[] = {1, 7, 42, 99, 250};
    EXPECT_TRUE(session->Prefill(prompt, 5).ok());
    for (int i = 0; i < 8; ++i) {
      const float* logits = session->logits();
      out.push_back(
          static_cast<int32_t>(std::max_element(logits, logits + 300) - logits));
      EXPECT_TRUE(session->Decode(out.back()).ok());
    }
    return out;
  };
  std::string native_tier;
  const std::vector<int32_t> native = tokens("native", &native_tier);
  EXPECT_NE(native_tier, "");
  const std::string names = kernels::IsaTierNames();
  int ran = 0;
  for (size_t begin = 0; begin < names.size();) {
    size_t end = names.find(' ', begin);
    if (end == std::string::npos) end = names.size();
    const std::string name = names.substr(begin, end - begin);
    begin = end + 1;
    SessionOptions options;
    options.isa = name.c_str();
    if (!kernels::CpuRunsTier(name.c_str())) {
      auto session = Session::Create(*loaded.model, options);
      ASSERT_FALSE(session.ok());
      EXPECT_EQ(session.status().code(), StatusCode::kUnimplemented);
      EXPECT_NE(std::string(session.status().message()).find("lacks"), std::string::npos)
          << session.status().message();
      continue;
    }
    std::string tier;
    EXPECT_EQ(tokens(name.c_str(), &tier), native) << name;
    EXPECT_EQ(tier, name);
    ++ran;
  }
  EXPECT_GT(ran, 0) << "tiers: " << names;

  SessionOptions bad;
  bad.isa = "avx1024";
  auto session = Session::Create(*loaded.model, bad);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(session.status().message()).find(names), std::string::npos)
      << session.status().message();
}

}  // namespace
}  // namespace ember
