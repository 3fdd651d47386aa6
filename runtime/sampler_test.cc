// Sampler: greedy picks the first maximum; seeded sampling is reproducible and follows
// the distribution; top-k and top-p keep only the tokens they should.
#include "runtime/sampler.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace ember {
namespace {

std::vector<uint8_t> Scratch(size_t vocab) {
  return std::vector<uint8_t>(Sampler::ScratchBytes(vocab) + 8);
}

TEST(SamplerTest, GreedyPicksTheFirstMaximum) {
  SamplerOptions o;
  o.temperature = 0.0f;
  std::vector<float> logits = {0.1f, 3.0f, -2.0f, 3.0f};
  auto scratch = Scratch(logits.size());
  Sampler s(o, logits.size(), scratch.data());
  EXPECT_EQ(s.Sample(logits.data()), 1);
}

TEST(SamplerTest, SameSeedSameTokens) {
  std::vector<float> logits(100);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(i * 0.37f) * 3.0f;
  SamplerOptions o;
  o.temperature = 1.0f;
  o.seed = 1234;
  auto s1 = Scratch(100), s2 = Scratch(100);
  Sampler a(o, 100, s1.data()), b(o, 100, s2.data());
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(a.Sample(logits.data()), b.Sample(logits.data()));
}

// Frequencies over many draws match softmax(logits / T) within statistical noise.
TEST(SamplerTest, FollowsTheDistribution) {
  const std::vector<float> logits = {2.0f, 1.0f, 0.0f, -1.0f};
  SamplerOptions o;
  o.temperature = 1.0f;
  o.top_k = 0;
  o.top_p = 1.0f;
  o.seed = 7;
  auto scratch = Scratch(4);
  Sampler s(o, 4, scratch.data());
  std::vector<int> counts(4, 0);
  const int draws = 40000;
  for (int i = 0; i < draws; ++i) counts[s.Sample(logits.data())]++;
  double z = 0;
  for (float l : logits) z += std::exp(l);
  for (int i = 0; i < 4; ++i) {
    const double p = std::exp(logits[i]) / z;
    const double sigma = std::sqrt(p * (1 - p) / draws);
    EXPECT_NEAR(counts[i] / double(draws), p, 5 * sigma) << "token " << i;
  }
}

TEST(SamplerTest, TopKAndTopPRestrictTheCandidates) {
  const std::vector<float> logits = {5.0f, 4.9f, 4.8f, -10.0f, -10.0f, -10.0f};
  auto scratch = Scratch(logits.size());
  SamplerOptions k;
  k.temperature = 1.0f;
  k.top_k = 2;
  k.top_p = 1.0f;
  Sampler top_k(k, logits.size(), scratch.data());
  for (int i = 0; i < 500; ++i) EXPECT_LT(top_k.Sample(logits.data()), 2);

  SamplerOptions p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 0.3f;  // the first token alone holds ~35% of the mass
  Sampler top_p(p, logits.size(), scratch.data());
  for (int i = 0; i < 500; ++i) EXPECT_EQ(top_p.Sample(logits.data()), 0);
}

TEST(SamplerTest, RandomFloatIsInUnitInterval) {
  auto scratch = Scratch(1);
  SamplerOptions o;
  o.seed = 42;
  Sampler s(o, 1, scratch.data());
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    const float r = s.RandomFloat();
    ASSERT_GE(r, 0.0f);
    ASSERT_LT(r, 1.0f);
    sum += r;
  }
  EXPECT_NEAR(sum / 10000, 0.5, 0.02);
}

}  // namespace
}  // namespace ember
