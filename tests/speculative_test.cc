// Speculative decoding, end to end: greedy generation through a Speculator (prompt
// lookup, a draft model of lower precision, a different draft model, the model itself)
// gives plain decoding's tokens one for one and leaves the session where plain decoding
// does (position, tokens, logits bitwise), over every KV cache type, 1 and 2 threads,
// sliding-window rings and context shifts; a draft model of another vocabulary is
// refused. That sampled tokens keep the target's distribution is
// speculative_sampling_test's (native-only).
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
