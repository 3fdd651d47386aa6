// Sampler: greedy picks the first maximum; seeded sampling is reproducible and follows
// the distribution; top-k and top-p keep only the tokens they should, top-k with the
// distribution renormalized over them, lowest ids first among ties, never a NaN.
#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace ember {
namespace {

std::vector<uint8_t> Scratch(size_t vocab) {
  return std::vector<uint8_t>(Sampler::ScratchBytes(vocab) + 8);
}

SamplerOptions Options(float temperature, uint32_t top_k, float top_p, uint64_t seed) {
  SamplerOptions o;
  o.temperature = temperature;
  o.top_k = top_k;
  o.top_p = top_p;
  o.seed = seed;
  return o;
}

// How often each token is drawn in `draws` samples of one sampler.
std::vector<int> Counts(const SamplerOptions& o, const std::vector<float>& logits,
                        int draws) {
  auto scratch = Scratch(logits.size());
  Sampler s(o, logits.size(), scratch.data());
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) counts[s.Sample(logits.data())]++;
  return counts;
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
  const int draws = 40000;
  const std::vector<int> counts = Counts(Options(1.0f, 0, 1.0f, 7), logits, draws);
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

// Top-k keeps the k highest logits and samples them in proportion to
// exp(logit / T): frequencies over a 1000-token vocabulary, with top-p on top of it.
TEST(SamplerTest, TopKFollowsTheRenormalizedDistribution) {
  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(i * 0.7f) * 2.0f;
  // The five highest logits, in rank order, by a full sort.
  std::vector<size_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return logits[a] > logits[b]; });
  logits[order[0]] = 3.0f;  // a clear first, so top-p below keeps it alone
  SamplerOptions o = Options(0.7f, 5, 1.0f, 11);
  const int draws = 40000;
  const std::vector<int> counts = Counts(o, logits, draws);
  double z = 0;
  for (size_t r = 0; r < 5; ++r) z += std::exp(logits[order[r]] / o.temperature);
  int kept = 0;
  for (size_t r = 0; r < 5; ++r) {
    const double p = std::exp(logits[order[r]] / o.temperature) / z;
    const double sigma = std::sqrt(p * (1 - p) / draws);
    EXPECT_NEAR(counts[order[r]] / double(draws), p, 5 * sigma) << "rank " << r;
    kept += counts[order[r]];
  }
  EXPECT_EQ(kept, draws) << "a token outside the top 5 was sampled";

  // The first token holds more than half of the top-5 mass: top-p 0.5 keeps it alone.
  ASSERT_GT(std::exp(logits[order[0]] / o.temperature) / z, 0.5);
  o.top_p = 0.5f;
  EXPECT_EQ(Counts(o, logits, 500)[order[0]], 500);
}

// Among equal logits top-k keeps the lowest ids; NaN logits are never candidates, and
// all-NaN logits fall back to greedy (token 0).
TEST(SamplerTest, TopKTiesAndNaN) {
  const float nan = std::nanf("");
  std::vector<float> logits(50, 1.0f);
  logits[0] = nan;
  logits[7] = nan;
  const SamplerOptions o = Options(1.0f, 3, 1.0f, 42);
  const std::vector<int> counts = Counts(o, logits, 3000);
  EXPECT_EQ(counts[1] + counts[2] + counts[3], 3000);
  for (int id : {1, 2, 3}) EXPECT_GT(counts[id], 800) << id;

  EXPECT_EQ(Counts(o, std::vector<float>(50, nan), 10)[0], 10);
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
