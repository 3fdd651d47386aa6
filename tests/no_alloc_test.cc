// The no-allocation promise: after a model is loaded and a session created, tokenizing,
// prefill, decode, sampling and detokenizing make zero heap allocations (malloc, calloc,
// realloc, the aligned allocators and every operator new are interposed and counted) for
// f32, f16, q8 and q4 weights, with 1 and 2 threads.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/generate.h"
#include "runtime/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "tests/testing.h"
#include "tools/alloc_count.h"
#include "tools/dtype_policy.h"

namespace ember {
namespace {

// Streams into a fixed buffer: the callback must not allocate either.
struct FixedText {
  char bytes[8192];
  size_t size = 0;
  size_t tokens = 0;
};

bool Append(void* user, int32_t, std::string_view text) {
  auto* out = static_cast<FixedText*>(user);
  const size_t n = std::min(text.size(), sizeof(out->bytes) - out->size);
  memcpy(out->bytes + out->size, text.data(), n);
  out->size += n;
  ++out->tokens;
  return true;
}

class NoAllocTest : public ::testing::TestWithParam<std::tuple<DType, int>> {};

TEST_P(NoAllocTest, RunMakesNoHeapAllocations) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  ASSERT_TRUE(tools::AllocCounterActive());
  const DType dtype = std::get<0>(GetParam());
  const int threads = std::get<1>(GetParam());
  tools::ModelSpec spec = testing::TinyModelSpec(64, 2, 4, 2, 96, 300, 128, 3);
  ASSERT_TRUE(tools::ChooseDTypes(dtype, {}, &spec).ok());
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(tools::SerializeModel(spec, &bytes).ok());
  testing::AlignedBytes aligned(bytes);

  // Load: everything may allocate here.
  auto model = Model::FromMemory(aligned.data(), aligned.size());
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto pool = ThreadPool::Create(threads);
  ASSERT_TRUE(pool.ok());
  SessionOptions options;
  options.max_batch = 16;
  auto session = Session::Create(**model, options, pool->get());
  ASSERT_TRUE(session.ok()) << session.status().message();
  SamplerOptions sampling;  // temperature, top-k and top-p all on
  sampling.seed = 7;
  Sampler sampler(sampling, (*model)->config().vocab_size, (*session)->sampler_scratch());
  FixedText text;

  // Run: nothing may.
  tools::AllocCounterArm();
  const char prompt[] = "Once upon a time, in a quiet town by the sea, lived a cat.";
  const int32_t* ids = nullptr;
  size_t n = 0;
  Status s = (*session)->Tokenize(prompt, sizeof(prompt) - 1, true, &ids, &n);
  GenerateResult result;
  if (s.ok()) s = Generate(**session, sampler, ids, n, 40, &Append, &text, &result);
  // A second conversation in the same session.
  if (s.ok()) {
    (*session)->Reset();
    s = Generate(**session, sampler, ids, n, 20, &Append, &text, &result);
  }
  const uint64_t allocations = tools::AllocCounterDisarm();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_GT(text.tokens, 0u);
  EXPECT_EQ(allocations, 0u) << DTypeName(dtype) << ", " << threads << " threads";
}

TEST(NoAllocTest, TheCounterCounts) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  // The zero above means something only if an allocation here is seen.
  tools::AllocCounterArm();
  std::unique_ptr<std::string> s(new std::string(100, 'x'));
  const uint64_t count = tools::AllocCounterDisarm();
  EXPECT_GE(count, 1u);
}

INSTANTIATE_TEST_SUITE_P(
    DTypesAndThreads, NoAllocTest,
    ::testing::Combine(::testing::Values(DType::kF32, DType::kF16, DType::kQ8,
                                         DType::kQ4),
                       ::testing::Values(1, 2)),
    [](const ::testing::TestParamInfo<std::tuple<DType, int>>& info) {
      return std::string(DTypeName(std::get<0>(info.param))) + "_" +
             std::to_string(std::get<1>(info.param)) + "threads";
    });

}  // namespace
}  // namespace ember
