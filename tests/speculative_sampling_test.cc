// Speculative sampling keeps the target's distribution: the first and second tokens of
// seeded rounds from one state of the target, with a draft model and with lookup,
// against Sampler::Probabilities of the target's own logits (chi-square at 0.999).
// 8000 rounds of a tiny model: about a second natively and a minute under qemu, where it
// would check nothing the native run does not (the kernels and the forward pass it runs
// are the emulated CPUs' own tests), so it is native-only (tests/CMakeLists.txt).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/speculative/speculator.h"
#include "testing/testing.h"

namespace ember {
namespace {

using testing::LoadedModel;

// Chi-square of counts against probabilities, bins with an expected count under 5
// pooled; *df the degrees of freedom.
double ChiSquare(const std::vector<int>& counts, const std::vector<double>& probs,
                 int total, int* df) {
  double chi = 0.0, pooled_expected = 0.0, pooled_count = 0.0;
  int bins = 0;
  for (size_t t = 0; t < probs.size(); ++t) {
    const double expected = probs[t] * total;
    if (expected == 0.0) {
      EXPECT_EQ(counts[t], 0) << "token " << t << " has no probability";
      continue;
    }
    if (expected < 5.0) {
      pooled_expected += expected;
      pooled_count += counts[t];
      continue;
    }
    chi += (counts[t] - expected) * (counts[t] - expected) / expected;
    ++bins;
  }
  if (pooled_expected > 0.0) {
    chi += (pooled_count - pooled_expected) * (pooled_count - pooled_expected) /
           pooled_expected;
    ++bins;
  }
  *df = bins - 1;
  return chi;
}

// The 0.999 quantile of chi-square with df degrees of freedom (Wilson-Hilferty).
double ChiSquare999(int df) {
  const double z = 3.0902, k = df;
  const double c = 1.0 - 2.0 / (9.0 * k) + z * std::sqrt(2.0 / (9.0 * k));
  return k * c * c * c;
}

// The target's distributions after `prompt` then `pending` (p0), and after each token
// t that p0 allows (p1[t]), from a session of its own.
struct TargetDistributions {
  std::vector<float> p0;
  std::vector<std::vector<float>> p1;
};
TargetDistributions Distributions(const Model& model, const SessionOptions& options,
                                  const SamplerOptions& sampling,
                                  const std::vector<int32_t>& prompt, int32_t pending) {
  const size_t vocab = model.config().vocab_size;
  TargetDistributions d;
  d.p0.resize(vocab);
  d.p1.resize(vocab);
  auto ref = Session::Create(model, options);
  EXPECT_TRUE(ref.ok());
  if (!ref.ok()) return d;
  Sampler probe(sampling, vocab, ref->sampler_scratch());
  EXPECT_TRUE(ref->Prefill(prompt.data(), prompt.size()).ok());
  EXPECT_TRUE(ref->Decode(pending).ok());
  EXPECT_TRUE(
      probe.Probabilities(ref->logits(), ref->tokens(), ref->position(), d.p0.data())
          .ok());
  for (size_t t = 0; t < vocab; ++t) {
    if (d.p0[t] == 0.0f) continue;
    EXPECT_TRUE(ref->Truncate(prompt.size() + 1).ok());
    EXPECT_TRUE(ref->Decode(static_cast<int32_t>(t)).ok());
    d.p1[t].resize(vocab);
    EXPECT_TRUE(
        probe.Probabilities(ref->logits(), ref->tokens(), ref->position(), d.p1[t].data())
            .ok());
  }
  return d;
}

// Rounds from one state of the target, each with its own seed: the first token a
// round puts out (an accepted draft or a draw from the residual) must follow the
// target's distribution there, and the second (when the first was accepted) the
// target's distribution after the first. With a draft model whose distribution
// differs (many rejections: the residual max(0, p - q)) and with lookup (q one-hot:
// p with the draft removed). A temperature of 6 spreads the tiny model's logits over
// its top-k of 12; the seeds are fixed, so the statistics are too.
TEST(SpeculativeTest, SamplingKeepsTheTargetsDistribution) {
  LoadedModel target =
      testing::LoadSpec(testing::TinyModelSpec(32, 2, 4, 2, 48, 300, 64, 1));
  LoadedModel other =
      testing::LoadSpec(testing::TinyModelSpec(32, 2, 4, 2, 48, 300, 64, 4));
  ASSERT_TRUE(target.model && other.model);
  const size_t vocab = 300;
  SessionOptions options;
  options.max_context = 64;
  options.draft_max = 4;
  SamplerOptions sampling;
  sampling.temperature = 6.0f;
  sampling.top_k = 12;
  sampling.top_p = 0.97f;
  const std::vector<int32_t> base = testing::SpreadTokens(8, 29);
  const int32_t pending = 250;
  for (int mode = 0; mode < 2; ++mode) {
    const char* name = mode == 0 ? "draft model" : "lookup";
    std::vector<int32_t> prompt = base;
    TargetDistributions d =
        Distributions(*target.model, options, sampling, prompt, pending);
    if (mode == 1) {
      // Lookup drafts what followed `pending` before: put it, then the target's most
      // likely next token and the one after that (neither `pending` itself, whose
      // later occurrence would be the match), at the prompt's start.
      const auto likeliest = [&](const std::vector<float>& p) {
        int32_t best = pending == 0 ? 1 : 0;
        for (size_t t = 0; t < p.size(); ++t) {
          if (int32_t(t) != pending && p[t] > p[best]) best = int32_t(t);
        }
        return best;
      };
      const int32_t top = likeliest(d.p0);
      prompt.insert(prompt.begin(), {pending, top, likeliest(d.p1[top])});
      d = Distributions(*target.model, options, sampling, prompt, pending);
    }
    auto session = Session::Create(*target.model, options);
    auto draft = Session::Create(*other.model, SessionOptions());
    ASSERT_TRUE(session.ok() && draft.ok());
    ASSERT_TRUE(session->Prefill(prompt.data(), prompt.size()).ok());
    const size_t s = session->position();
    auto created = Speculator::Create(&*session);
    ASSERT_TRUE(created.ok());
    Speculator speculator = std::move(*created);
    if (mode == 0) {
      ASSERT_TRUE(speculator.SetDraft(&*draft).ok());
    } else {
      ASSERT_TRUE(speculator.SetLookup(2).ok());
    }
    ASSERT_TRUE(speculator.SetDraftMin(4).ok());  // drafting would not pay here
    const int kRounds = 4000;
    std::vector<int> first(vocab, 0);
    std::vector<std::vector<int>> second(vocab, std::vector<int>(vocab, 0));
    std::vector<int> firsts_with_second(vocab, 0);
    for (int r = 0; r < kRounds; ++r) {
      SamplerOptions seeded = sampling;
      seeded.seed = 1000 + r;
      Sampler sampler(seeded, vocab, session->sampler_scratch());
      int32_t out[8];
      size_t n = 0;
      ASSERT_TRUE(session->Truncate(s).ok());
      ASSERT_TRUE(speculator.Round(sampler, pending, 4, out, &n).ok());
      ASSERT_GE(n, 1u);
      ASSERT_EQ(session->position(), s + n);
      ++first[out[0]];
      if (n >= 2) {
        ++second[out[0]][out[1]];
        ++firsts_with_second[out[0]];
      }
    }
    const SpeculativeStats& st = speculator.stats();
    printf("[ember] %s: %llu of %llu drafted accepted over %d rounds\n", name,
           static_cast<unsigned long long>(st.accepted),
           static_cast<unsigned long long>(st.drafted), kRounds);
    EXPECT_GT(st.accepted, 200u) << name << ": acceptances to test";
    EXPECT_LT(st.accepted, st.drafted) << name << ": rejections to test";
    int df = 0;
    const double chi =
        ChiSquare(first, std::vector<double>(d.p0.begin(), d.p0.end()), kRounds, &df);
    printf(
        "[ember] %s, first token: chi-square %.2f, %d degrees of freedom (0.999: %.1f)\n",
        name, chi, df, ChiSquare999(df));
    ASSERT_GE(df, 5) << name;
    EXPECT_LT(chi, ChiSquare999(df)) << name << ": the first token's distribution";
    // The second token after the first token that most often had one.
    const size_t best =
        std::max_element(firsts_with_second.begin(), firsts_with_second.end()) -
        firsts_with_second.begin();
    ASSERT_GT(firsts_with_second[best], 300) << name;
    const double chi1 =
        ChiSquare(second[best], std::vector<double>(d.p1[best].begin(), d.p1[best].end()),
                  firsts_with_second[best], &df);
    printf("[ember] %s, second token after %zu (%d rounds): chi-square %.2f, %d df\n",
           name, best, firsts_with_second[best], chi1, df);
    ASSERT_GE(df, 5) << name;
    EXPECT_LT(chi1, ChiSquare999(df)) << name << ": the second token's distribution";
  }
}

}  // namespace
}  // namespace ember
