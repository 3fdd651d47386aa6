// Speculative decoding, end to end: greedy generation through a Speculator (prompt
// lookup, a draft model of lower precision, a different draft model, the model itself)
// gives plain decoding's tokens one for one and leaves the session where plain decoding
// does (position, tokens, logits bitwise), over every KV cache type, 1 and 2 threads,
// sliding-window rings and context shifts; sampled tokens keep the target's
// distribution (chi-square over seeded rounds, against Sampler::Probabilities of the
// target's own logits); a draft model of another vocabulary is refused.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/generate.h"
#include "runtime/model/model.h"
#include "runtime/pool/thread_pool.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/speculative/ngram_lookup.h"
#include "runtime/speculative/speculator.h"
#include "testing/testing.h"
#include "tests/stories260k.h"

namespace ember {
namespace {

using testing::LoadedModel;

bool Collect(void* user, int32_t id, std::string_view) {
  if (id >= 0) static_cast<std::vector<int32_t>*>(user)->push_back(id);
  return true;
}

// What a generation left behind: its tokens, the session's position, its cached tokens
// and its last logits (when valid).
struct Outcome {
  std::vector<int32_t> ids;
  size_t position = 0;
  std::vector<int32_t> cached;
  std::vector<float> logits;
  size_t shifts = 0;
  SpeculativeStats stats;
};

// How the target drafts: nothing (plain), a lookup, a draft model, or both.
struct Drafting {
  uint32_t lookup = 0;
  const Model* draft = nullptr;
  uint32_t draft_max = 6;
};

Outcome RunGreedy(const Model& model, SessionOptions options, const ThreadPool* pool,
                  const std::vector<int32_t>& prompt, size_t max_new,
                  const Drafting& how) {
  Outcome out;
  const bool speculate = how.lookup > 0 || how.draft != nullptr;
  options.draft_max = how.draft_max;  // plain runs plan it too: the same step sizes
  auto session = Session::Create(model, options, pool);
  EXPECT_TRUE(session.ok()) << session.status().message();
  if (!session.ok()) return out;
  std::unique_ptr<Session> draft_session;
  Speculator speculator;
  if (speculate) {
    auto created = Speculator::Create(&*session);
    EXPECT_TRUE(created.ok()) << created.status().message();
    speculator = std::move(*created);
    EXPECT_TRUE(speculator.SetLookup(how.lookup).ok());
    if (how.draft) {
      SessionOptions draft_options;
      draft_options.max_context = options.max_context;
      draft_options.kv_type = options.kv_type;
      auto d = Session::Create(*how.draft, draft_options, pool);
      EXPECT_TRUE(d.ok()) << d.status().message();
      draft_session = std::make_unique<Session>(std::move(*d));
      const Status set = speculator.SetDraft(draft_session.get());
      EXPECT_TRUE(set.ok()) << set.message();
    }
  }
  SamplerOptions greedy;
  greedy.temperature = 0.0f;
  const size_t vocab = model.config().vocab_size;
  Sampler sampler(greedy, vocab, session->sampler_scratch());
  GenerateOptions generate;
  generate.max_new = max_new;
  if (speculate) generate.speculator = &speculator;
  GenerateResult result;
  const Status s = Generate(*session, sampler, prompt.data(), prompt.size(), generate,
                            &Collect, &out.ids, &result);
  EXPECT_TRUE(s.ok()) << s.message();
  out.position = session->position();
  out.cached.assign(session->tokens(), session->tokens() + out.position);
  if (session->logits_valid()) {
    out.logits.assign(session->logits(), session->logits() + vocab);
  }
  out.shifts = session->shifts();
  out.stats = speculator.stats();
  return out;
}

void ExpectSame(const Outcome& plain, const Outcome& fast, const std::string& what) {
  ASSERT_EQ(plain.ids, fast.ids) << what;
  EXPECT_EQ(plain.position, fast.position) << what;
  EXPECT_EQ(plain.cached, fast.cached) << what;
  EXPECT_EQ(plain.shifts, fast.shifts) << what;
  ASSERT_EQ(plain.logits.size(), fast.logits.size()) << what;
  EXPECT_EQ(0, memcmp(plain.logits.data(), fast.logits.data(),
                      plain.logits.size() * sizeof(float)))
      << what << ": the last logits differ";
}

std::vector<int32_t> StoryPrompt(size_t n) {
  std::vector<int32_t> prompt = {1};
  const std::vector<int32_t>& golden = testing::Stories260KGolden();
  prompt.insert(prompt.end(), golden.begin(), golden.begin() + n);
  return prompt;
}

class SpeculativeGreedyTest : public ::testing::TestWithParam<std::tuple<KvType, int>> {};

// stories260K: lookup over its own repetitive story, its q4 copy drafting for its q8
// copy, and the model drafting for itself (every draft accepted): the text is plain
// decoding's, and the session ends where plain decoding's does.
TEST_P(SpeculativeGreedyTest, Stories260KGivesPlainDecodingsText) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  const auto [kv, threads] = GetParam();
  auto pool = ThreadPool::Create(threads);
  ASSERT_TRUE(pool.ok());
  LoadedModel q8 = testing::Stories260KAs(DType::kQ8);
  LoadedModel q4 = testing::Stories260KAs(DType::kQ4);
  ASSERT_TRUE(q8.model && q4.model);
  SessionOptions options;
  options.max_context = 256;
  options.kv_type = kv;
  const std::vector<int32_t> prompt = StoryPrompt(40);
  const size_t max_new = 150;
  const Outcome plain = RunGreedy(*q8.model, options, pool->get(), prompt, max_new, {});
  ASSERT_EQ(plain.ids.size(), max_new);
  struct Case {
    const char* name;
    Drafting how;
  } cases[] = {
      {"lookup 4", {4, nullptr, 8}},
      {"lookup 2", {2, nullptr, 3}},
      {"q4 draft", {0, q4.model.get(), 6}},
      {"self draft", {0, q8.model.get(), 8}},
      {"lookup + q4 draft", {3, q4.model.get(), 5}},
  };
  for (const Case& c : cases) {
    const Outcome fast =
        RunGreedy(*q8.model, options, pool->get(), prompt, max_new, c.how);
    ExpectSame(plain, fast, c.name);
    EXPECT_GT(fast.stats.verified, 0u) << c.name;
    EXPECT_GT(fast.stats.accepted, 0u) << c.name;
    EXPECT_LT(fast.stats.rounds, max_new) << c.name << ": no token gained";
    if (c.how.draft == q8.model.get()) {
      EXPECT_EQ(fast.stats.accepted, fast.stats.drafted) << "a model drafting for itself";
    }
    printf("[ember] %s: %llu rounds for %zu tokens, %llu of %llu drafted accepted\n",
           c.name, static_cast<unsigned long long>(fast.stats.rounds), fast.ids.size(),
           static_cast<unsigned long long>(fast.stats.accepted),
           static_cast<unsigned long long>(fast.stats.drafted));
  }
}

// The families model (sliding layers with rings: steps of 7 over a window of 6; soft
// caps, qk-norm) in a context of 48 that shifts, drafted for by a random model of the
// same vocabulary (which the target mostly rejects) and by lookup.
TEST_P(SpeculativeGreedyTest, RingsAndContextShiftsGivePlainDecodingsText) {
  const auto [kv, threads] = GetParam();
  auto pool = ThreadPool::Create(threads);
  ASSERT_TRUE(pool.ok());
  LoadedModel target = testing::LoadSpec(testing::FamiliesModelSpec(6, 96, 5));
  LoadedModel other = testing::LoadSpec(testing::FamiliesModelSpec(6, 96, 9));
  ASSERT_TRUE(target.model && other.model);
  const SessionOptions options = testing::FamiliesSessionOptions(48, 4, kv, true);
  std::vector<int32_t> prompt = testing::SpreadTokens(12, 7);
  prompt.insert(prompt.end(), prompt.begin(), prompt.end());  // something to look up
  const size_t max_new = 130;  // past the context: several shifts
  const Outcome plain =
      RunGreedy(*target.model, options, pool->get(), prompt, max_new, {0, nullptr, 6});
  ASSERT_EQ(plain.ids.size(), max_new);
  ASSERT_GE(plain.shifts, 2u);
  const Drafting cases[] = {{3, nullptr, 6},
                            {0, other.model.get(), 4},
                            {0, target.model.get(), 6},
                            {2, other.model.get(), 6}};
  for (const Drafting& how : cases) {
    const std::string what = "lookup " + std::to_string(how.lookup) +
                             (how.draft == other.model.get()    ? ", other draft"
                              : how.draft == target.model.get() ? ", self draft"
                                                                : "");
    ExpectSame(plain,
               RunGreedy(*target.model, options, pool->get(), prompt, max_new, how),
               what);
  }
}

INSTANTIATE_TEST_SUITE_P(KvTypesAndThreads, SpeculativeGreedyTest,
                         ::testing::Combine(::testing::Values(KvType::kF32, KvType::kF16,
                                                              KvType::kQ8),
                                            ::testing::Values(1, 2)));

// Stopping inside a round (a callback that says stop, max_new) leaves the session as
// plain decoding leaves it: the last emitted token not fed, its logits current.
TEST(SpeculativeTest, StoppingInsideARoundRollsBack) {
  LoadedModel m = testing::LoadSpec(testing::TinyModelSpec());
  ASSERT_TRUE(m.model);
  SessionOptions options;
  options.max_context = 64;
  std::vector<int32_t> prompt = testing::SpreadTokens(10, 11);
  prompt.insert(prompt.end(), prompt.begin(), prompt.end());
  for (size_t max_new : {1, 2, 3, 5, 8, 13}) {
    const Outcome plain = RunGreedy(*m.model, options, nullptr, prompt, max_new, {});
    const Outcome fast =
        RunGreedy(*m.model, options, nullptr, prompt, max_new, {0, m.model.get(), 8});
    ExpectSame(plain, fast, "max_new " + std::to_string(max_new));
  }
}

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

TEST(SpeculativeTest, LookupProposesWhatFollowedTheLatestMatch) {
  std::vector<uint32_t> table(NgramLookup::TableEntries(64));
  NgramLookup lookup(table.data(), table.size());
  lookup.Clear();
  int32_t out[8];
  // 5 6 7 8 | 9 5 6 7 2 | 5 6 -> after "5 6" then pending 7: the latest "5 6 7" was
  // followed by 2, then 5 6 (and the pending 7 itself, the context's end).
  const std::vector<int32_t> history = {5, 6, 7, 8, 9, 5, 6, 7, 2, 5, 6};
  size_t n = lookup.Propose(history.data(), history.size(), 7, 3, 8, out);
  ASSERT_EQ(n, 4u);
  EXPECT_EQ(std::vector<int32_t>(out, out + n), (std::vector<int32_t>{2, 5, 6, 7}));
  // max bounds it; an unseen token proposes nothing.
  EXPECT_EQ(lookup.Propose(history.data(), history.size(), 7, 3, 2, out), 2u);
  EXPECT_EQ(lookup.Propose(history.data(), history.size(), 42, 3, 8, out), 0u);
  // A rollback: the entries past the history's end are not proposed.
  n = lookup.Propose(history.data(), 8, 2, 1, 8, out);  // "... 5 6 7" then 2: unseen
  EXPECT_EQ(n, 0u);
  n = lookup.Propose(history.data(), 7, 7, 2, 8, out);  // "5 6" + 7 -> 8 9 5 6 (7)
  ASSERT_GE(n, 4u);
  EXPECT_EQ(std::vector<int32_t>(out, out + 4), (std::vector<int32_t>{8, 9, 5, 6}));
  // Only a shorter n-gram matches: falls back to it.
  const std::vector<int32_t> h2 = {3, 4, 1, 9, 4};
  n = lookup.Propose(h2.data(), h2.size(), 1, 4, 8, out);  // "4 1" seen: then 9 4 (1)
  lookup.Clear();
  n = lookup.Propose(h2.data(), h2.size(), 1, 4, 8, out);
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(std::vector<int32_t>(out, out + n), (std::vector<int32_t>{9, 4, 1}));
}

TEST(SpeculativeTest, DraftLengthFollowsAcceptance) {
  EXPECT_EQ(Speculator::ChooseLength(0.0f, 0.06f, 8), 0u);
  EXPECT_EQ(Speculator::ChooseLength(0.95f, 0.0f, 8), 8u);
  size_t last = 0;
  for (float a = 0.0f; a <= 1.0f; a += 0.1f) {
    const size_t k = Speculator::ChooseLength(a, 0.1f, 16);
    EXPECT_GE(k, last) << "acceptance " << a;
    last = k;
  }
  // A costlier draft drafts less.
  EXPECT_LE(Speculator::ChooseLength(0.8f, 0.5f, 16),
            Speculator::ChooseLength(0.8f, 0.1f, 16));
}

TEST(SpeculativeTest, RefusesAnotherVocabularyAndAnUnplannedSession) {
  LoadedModel target = testing::LoadSpec(testing::TinyModelSpec());
  LoadedModel wider = testing::LoadSpec(testing::TinyModelSpec(32, 2, 4, 2, 48, 320));
  ASSERT_TRUE(target.model && wider.model);
  auto plain = Session::Create(*target.model, SessionOptions());
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(Speculator::Create(&*plain).ok());
  SessionOptions options;
  options.draft_max = 4;
  auto session = Session::Create(*target.model, options);
  auto draft = Session::Create(*wider.model, SessionOptions());
  ASSERT_TRUE(session.ok() && draft.ok());
  auto speculator = Speculator::Create(&*session);
  ASSERT_TRUE(speculator.ok());
  const Status s = speculator->SetDraft(&*draft);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("320"), std::string::npos) << s.message();
  EXPECT_FALSE(speculator->SetLookup(kMaxLookupNgram + 1).ok());
  EXPECT_FALSE(speculator->SetDraftMax(5).ok());
  options.draft_max = kMaxDraftTokens + 1;
  EXPECT_FALSE(Session::Create(*target.model, options).ok());
}

}  // namespace
}  // namespace ember
