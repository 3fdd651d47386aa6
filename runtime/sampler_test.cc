// Sampler: greedy picks the first maximum; seeded sampling is reproducible and follows
// the distribution; top-k and top-p keep only the tokens they should, top-k with the
// distribution renormalized over them, lowest ids first among ties; NaN and infinite
// logits are an error, invalid options are refused; the penalties change exactly the
// logits of the window's tokens as llama.cpp's formula says, and min-p keeps exactly the
// tokens above its floor with the renormalized distribution.
#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ember {
namespace {

std::vector<uint8_t> Scratch(size_t vocab) {
  return std::vector<uint8_t>(Sampler::ScratchBytes(vocab) + 8);
}

// One draw, which must succeed.
int32_t Draw(Sampler& s, const std::vector<float>& logits) {
  int32_t token = -1;
  const Status status = s.Sample(logits.data(), &token);
  EXPECT_TRUE(status.ok()) << status.message();
  return token;
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
  for (int i = 0; i < draws; ++i) counts[Draw(s, logits)]++;
  return counts;
}

TEST(SamplerTest, GreedyPicksTheFirstMaximum) {
  SamplerOptions o;
  o.temperature = 0.0f;
  std::vector<float> logits = {0.1f, 3.0f, -2.0f, 3.0f};
  auto scratch = Scratch(logits.size());
  Sampler s(o, logits.size(), scratch.data());
  EXPECT_EQ(Draw(s, logits), 1);
}

TEST(SamplerTest, SameSeedSameTokens) {
  std::vector<float> logits(100);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(i * 0.37f) * 3.0f;
  SamplerOptions o;
  o.temperature = 1.0f;
  o.seed = 1234;
  auto s1 = Scratch(100), s2 = Scratch(100);
  Sampler a(o, 100, s1.data()), b(o, 100, s2.data());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(Draw(a, logits), Draw(b, logits));
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
  for (int i = 0; i < 500; ++i) EXPECT_LT(Draw(top_k, logits), 2);

  SamplerOptions p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 0.3f;  // the first token alone holds ~35% of the mass
  Sampler top_p(p, logits.size(), scratch.data());
  for (int i = 0; i < 500; ++i) EXPECT_EQ(Draw(top_p, logits), 0);
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

// Among equal logits top-k keeps the lowest ids.
TEST(SamplerTest, TopKTies) {
  std::vector<float> logits(50, 1.0f);
  logits[0] = 0.5f;
  logits[7] = 0.5f;
  const SamplerOptions o = Options(1.0f, 3, 1.0f, 42);
  const std::vector<int> counts = Counts(o, logits, 3000);
  EXPECT_EQ(counts[1] + counts[2] + counts[3], 3000);
  for (int id : {1, 2, 3}) EXPECT_GT(counts[id], 800) << id;
}

// A NaN or infinite logit is reported, by every kind of sampler, not sampled around.
TEST(SamplerTest, NonFiniteLogitsAreAnError) {
  const float nan = std::nanf(""), inf = INFINITY;
  for (const SamplerOptions& o : {Options(0.0f, 0, 1.0f, 1), Options(1.0f, 3, 1.0f, 1),
                                  Options(0.8f, 0, 0.9f, 1), Options(1.0f, 0, 1.0f, 1)}) {
    for (float bad : {nan, inf, -inf}) {
      std::vector<float> logits(50, 1.0f);
      logits[17] = bad;
      auto scratch = Scratch(logits.size());
      Sampler s(o, logits.size(), scratch.data());
      int32_t token = 0;
      const Status status = s.Sample(logits.data(), &token);
      EXPECT_EQ(status.code(), StatusCode::kInvalidModel) << bad;
      EXPECT_NE(std::string(status.message()).find("1 of the 50 logits"),
                std::string::npos)
          << status.message();
      EXPECT_EQ(token, -1);
    }
  }
}

// Options are checked; a temperature so small that 1/T overflows samples greedily (it
// sampled garbage: (l - max) / T was 0 * inf = NaN for the maximum).
TEST(SamplerTest, OptionsAreCheckedAndTinyTemperaturesAreGreedy) {
  const float nan = std::nanf("");
  for (float t : {-1.0f, nan, INFINITY}) {
    EXPECT_EQ(Sampler::CheckOptions(Options(t, 0, 1.0f, 1)).code(),
              StatusCode::kInvalidArgument)
        << t;
  }
  for (float p : {0.0f, -0.5f, 1.5f, nan}) {
    EXPECT_EQ(Sampler::CheckOptions(Options(1.0f, 0, p, 1)).code(),
              StatusCode::kInvalidArgument)
        << p;
  }
  EXPECT_TRUE(Sampler::CheckOptions(Options(0.0f, 0, 1.0f, 1)).ok());
  EXPECT_TRUE(Sampler::CheckOptions(Options(1e-39f, 7, 0.5f, 1)).ok());

  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(i * 0.37f) * 3.0f;
  const size_t argmax = std::max_element(logits.begin(), logits.end()) - logits.begin();
  for (float t : {1e-39f, 1e-30f, 1e-5f}) {
    for (uint32_t k : {0u, 40u}) {
      const std::vector<int> counts = Counts(Options(t, k, 1.0f, 3), logits, 200);
      EXPECT_EQ(counts[argmax], 200) << "T " << t << " top-k " << k;
    }
  }
}

// Frequencies over `draws` samples match softmax(expected / T), each within 5 sigma, and
// tokens with zero expected probability (expected -inf) are never drawn.
void ExpectDistribution(const SamplerOptions& o, const std::vector<float>& logits,
                        const std::vector<int32_t>& recent,
                        const std::vector<double>& expected, int draws) {
  auto scratch = Scratch(logits.size());
  Sampler s(o, logits.size(), scratch.data());
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) {
    int32_t token = -1;
    ASSERT_TRUE(s.Sample(logits.data(), recent.data(), recent.size(), &token).ok());
    counts[token]++;
  }
  double z = 0;
  for (double l : expected) z += std::exp(l / o.temperature);
  for (size_t i = 0; i < logits.size(); ++i) {
    const double p = std::exp(expected[i] / o.temperature) / z;
    const double sigma = std::sqrt(p * (1 - p) / draws);
    if (p == 0) {
      EXPECT_EQ(counts[i], 0) << "token " << i;
    } else {
      EXPECT_NEAR(counts[i] / double(draws), p, 5 * sigma + 1e-9) << "token " << i;
    }
  }
}

// The penalties, by llama.cpp's formula, on the last repeat_last_n tokens only.
TEST(SamplerTest, PenaltiesFollowTheFormula) {
  const std::vector<float> logits = {1.0f, 2.0f, -0.5f, 0.5f, 1.5f, 0.0f};
  // Window of 5: token 1 three times, 2 once, 4 once; token 3 only before the window.
  const std::vector<int32_t> recent = {3, 1, 2, 1, 4, 1, 777, -3};
  SamplerOptions o = Options(1.0f, 0, 1.0f, 5);
  o.repeat_last_n = 7;  // the last 7: {1, 2, 1, 4, 1, 777, -3}; out-of-vocab ignored
  o.repeat_penalty = 1.5f;
  o.frequency_penalty = 0.25f;
  o.presence_penalty = 0.125f;
  std::vector<double> expected(logits.begin(), logits.end());
  expected[1] = 2.0 / 1.5 - 3 * 0.25 - 0.125;
  expected[2] = -0.5 * 1.5 - 1 * 0.25 - 0.125;
  expected[4] = 1.5 / 1.5 - 1 * 0.25 - 0.125;
  ExpectDistribution(o, logits, recent, expected, 40000);

  // Greedy takes the argmax of the penalized logits: token 1 (2.0) loses to 4 and 0.
  o.temperature = 0.0f;
  auto scratch = Scratch(logits.size());
  Sampler greedy(o, logits.size(), scratch.data());
  int32_t token = -1;
  ASSERT_TRUE(greedy.Sample(logits.data(), recent.data(), recent.size(), &token).ok());
  EXPECT_EQ(token, 0);  // 1.0 beats 4's 0.625 and 1's 0.458
  ASSERT_TRUE(greedy.Sample(logits.data(), &token).ok());
  EXPECT_EQ(token, 1) << "no history: no penalty";
  // A window of 0 turns the penalties off; -1 takes the whole history.
  o.repeat_last_n = 0;
  Sampler off(o, logits.size(), scratch.data());
  ASSERT_TRUE(off.Sample(logits.data(), recent.data(), recent.size(), &token).ok());
  EXPECT_EQ(token, 1);
  o.repeat_last_n = -1;
  o.repeat_penalty = 1.0f;
  o.frequency_penalty = 0.0f;
  o.presence_penalty = 10.0f;  // every token seen loses 10: 0 is left (5 never seen)
  Sampler all(o, logits.size(), scratch.data());
  ASSERT_TRUE(all.Sample(logits.data(), recent.data(), recent.size(), &token).ok());
  EXPECT_EQ(token, 0);
  const std::vector<int32_t> with_zero = {0, 3, 1, 2, 4};
  ASSERT_TRUE(all.Sample(logits.data(), with_zero.data(), with_zero.size(), &token).ok());
  EXPECT_EQ(token, 5);
  // The session's logits are never written.
  EXPECT_EQ(logits[1], 2.0f);
}

// Min-p keeps the tokens at least min_p times as likely as the first, over the whole
// vocabulary and after top-k or top-p, renormalized.
TEST(SamplerTest, MinPKeepsTheTokensAboveItsFloor) {
  // Probabilities at T = 1 proportional to exp(l): 1, e^-0.5, e^-1, e^-2, e^-3.
  const std::vector<float> logits = {-1.0f, 0.0f, -0.5f, -2.0f, -3.0f};
  for (const SamplerOptions& base :
       {Options(1.0f, 0, 1.0f, 9), Options(1.0f, 4, 1.0f, 9), Options(1.0f, 0, 0.99f, 9),
        Options(2.0f, 0, 1.0f, 9)}) {
    SamplerOptions o = base;
    o.min_p = 0.3f;  // floor 0.3: e^(-1/T) = 0.37 at T 1 stays, e^-2 = 0.14 goes
    std::vector<double> expected(logits.begin(), logits.end());
    for (size_t i = 0; i < logits.size(); ++i) {
      if (std::exp(logits[i] / o.temperature) < o.min_p) expected[i] = -INFINITY;
    }
    // Top-p 0.99 keeps all five (the first four hold 97.7% of the mass); min-p cuts
    // after it.
    ExpectDistribution(o, logits, {}, expected, 40000);
  }
  SamplerOptions o = Options(1.0f, 0, 1.0f, 3);
  o.min_p = 1.0f;  // only the most likely
  EXPECT_EQ(Counts(o, logits, 300)[1], 300);
  for (float bad : {-0.1f, 1.5f, std::nanf("")}) {
    o.min_p = bad;
    EXPECT_EQ(Sampler::CheckOptions(o).code(), StatusCode::kInvalidArgument) << bad;
  }
  o = Options(1.0f, 0, 1.0f, 3);
  for (float bad : {0.0f, -1.0f, INFINITY, std::nanf("")}) {
    o.repeat_penalty = bad;
    EXPECT_EQ(Sampler::CheckOptions(o).code(), StatusCode::kInvalidArgument) << bad;
  }
  o.repeat_penalty = 1.0f;
  o.frequency_penalty = INFINITY;
  EXPECT_EQ(Sampler::CheckOptions(o).code(), StatusCode::kInvalidArgument);
  o.frequency_penalty = 0.0f;
  o.repeat_last_n = -2;
  EXPECT_EQ(Sampler::CheckOptions(o).code(), StatusCode::kInvalidArgument);
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

// A mask (a grammar's allowed tokens) restricts every mode: greedy takes the best
// allowed token, sampling (whole vocabulary, top-k, top-p, min-p, penalties) draws only
// allowed ones and follows their renormalized distribution; no allowed token is an error.
TEST(SamplerTest, AMaskRestrictsEveryMode) {
  const size_t vocab = 70;  // more than two words of bits
  std::vector<float> logits(vocab);
  for (size_t i = 0; i < vocab; ++i) logits[i] = 0.05f * static_cast<float>(i % 23);
  logits[5] = 9.0f;  // the best, not allowed
  std::vector<uint32_t> allowed(3, 0);
  const std::vector<int32_t> ids = {3, 40, 41, 66};
  for (const int32_t id : ids) allowed[id >> 5] |= 1u << (id & 31);
  const int32_t recent[] = {40, 40};
  for (const SamplerOptions& o :
       {Options(0.0f, 0, 1.0f, 1), Options(1.0f, 0, 1.0f, 2), Options(1.0f, 2, 1.0f, 3),
        Options(1.0f, 0, 0.5f, 4), Options(1.0f, 40, 0.9f, 5)}) {
    SamplerOptions with = o;
    with.min_p = o.seed == 5 ? 0.1f : 0.0f;
    with.repeat_penalty = o.seed == 2 ? 1.3f : 1.0f;
    std::vector<uint8_t> scratch = Scratch(vocab);
    Sampler s(with, vocab, scratch.data());
    std::vector<int> count(vocab, 0);
    for (int i = 0; i < 2000; ++i) {
      int32_t token = -1;
      ASSERT_TRUE(s.Sample(logits.data(), recent, 2, allowed.data(), &token).ok());
      ASSERT_NE(std::find(ids.begin(), ids.end(), token), ids.end()) << token;
      ++count[token];
    }
    if (o.temperature == 0.0f) {
      // The best allowed logit: 66 % 23 = 20 beats 40 % 23 = 17, 41 % 23 = 18, 3.
      EXPECT_EQ(count[66], 2000);
    } else if (o.top_k == 0 && o.top_p == 1.0f) {
      // Whole vocabulary: p(id) ~ exp(logit) over the allowed ones only.
      double z = 0;
      for (const int32_t id : ids) z += std::exp(logits[id] / (id == 40 ? 1.3 : 1.0));
      for (const int32_t id : ids) {
        const double p = std::exp(logits[id] / (id == 40 ? 1.3 : 1.0)) / z;
        EXPECT_NEAR(count[id] / 2000.0, p, 0.04) << id;
      }
    }
  }
  std::vector<uint32_t> none(3, 0);
  std::vector<uint8_t> scratch = Scratch(vocab);
  Sampler s(Options(1.0f, 0, 1.0f, 1), vocab, scratch.data());
  int32_t token = -1;
  EXPECT_EQ(s.Sample(logits.data(), nullptr, 0, none.data(), &token).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ember
