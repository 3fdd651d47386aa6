// End-to-end: stories260K converted from llama2.c must reproduce llama2.c's published
// greedy output token for token, and prefill, decode and thread counts must agree
// bitwise.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "testing/testing.h"
#include "tests/stories260k.h"

namespace ember {
namespace {

TEST(GoldenTest, Stories260KGreedyMatchesLlama2c) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  auto model = Model::Open(testing::Stories260KPath().c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const testing::Generated out = testing::GenerateGreedy(**model, nullptr, 256);
  const std::vector<int32_t>& golden = testing::Stories260KGolden();
  ASSERT_EQ(out.ids.size(), golden.size());
  for (size_t i = 0; i < golden.size(); ++i) {
    ASSERT_EQ(out.ids[i], golden[i]) << "first difference at generated token " << i;
  }
  EXPECT_EQ(
      out.text.rfind("Once upon a time, there was a little girl named Lily. She loved "
                     "to play outside in the park. One day, she saw a big, red ball. "
                     "She wanted to play with it, but it was too high.",
                     0),
      0u)
      << out.text;
}

TEST(GoldenTest, GoldenHoldsWithThreads) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  auto model = Model::Open(testing::Stories260KPath().c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  const testing::Generated out = testing::GenerateGreedy(**model, pool->get(), 64);
  const std::vector<int32_t> golden(testing::Stories260KGolden().begin(),
                                    testing::Stories260KGolden().begin() + 64);
  EXPECT_EQ(out.ids, golden);
}

// Logits after one prefill of the golden sequence equal those after feeding it one token
// at a time, bit for bit, and equal for 1, 2 and 3 threads.
TEST(GoldenTest, PrefillDecodeAndThreadsAgreeBitwise) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  auto model = Model::Open(testing::Stories260KPath().c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  std::vector<int32_t> tokens = {1};
  tokens.insert(tokens.end(), testing::Stories260KGolden().begin(),
                testing::Stories260KGolden().begin() + 100);
  SessionOptions options;
  options.max_batch = 32;  // several prefill steps
  testing::ExpectPrefillDecodeAndThreadsAgreeBitwise(**model, options, tokens);
}

}  // namespace
}  // namespace ember
