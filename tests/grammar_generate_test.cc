// Generation under a grammar on stories260K, against an oracle written here: at each
// step the allowed tokens are found by trying each token's bytes alone from a fresh
// matcher fed the text so far, and the logits by a second session fed the same tokens.
// Greedy output must be the argmax of the allowed tokens at every step; sampled output
// must only ever take allowed tokens; the text must be a prefix (or, at the end of
// text, a whole sentence) of the grammar, and `complete` must say which.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/generate.h"
#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/grammar_constraint.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "testing/testing.h"
#include "tests/stories260k.h"

namespace ember {
namespace {

struct Collected {
  std::vector<int32_t> ids;
  std::string text;
};

bool Collect(void* user, int32_t id, std::string_view text) {
  auto* c = static_cast<Collected*>(user);
  if (id >= 0) c->ids.push_back(id);
  c->text.append(text.data(), text.size());
  return true;
}

// The matcher at `text` (which must be a prefix of the grammar's sentences).
void Feed(grammar::GrammarMatcher* m, const std::string& text) {
  ASSERT_TRUE(m->Reset().ok());
  for (const char c : text) ASSERT_TRUE(m->AcceptByte(static_cast<uint8_t>(c)).ok()) << text;
}

void CheckGeneration(const char* gbnf, float temperature, size_t n, uint64_t seed,
                     bool must_end = false) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  auto model = Model::Open(testing::Stories260KPath().c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Tokenizer& tokenizer = (*model)->tokenizer();
  std::vector<uint32_t> words;
  ASSERT_TRUE(grammar::CompileGbnf(gbnf, "root", &words).ok());
  grammar::GrammarConstraint constraint;
  ASSERT_TRUE(constraint.Init(words, tokenizer).ok());

  SessionOptions options;
  options.max_context = 128;
  auto session = Session::Create(**model, options, nullptr);
  ASSERT_TRUE(session.ok()) << session.status().message();
  SamplerOptions sampling;
  sampling.temperature = temperature;
  sampling.seed = seed;
  Sampler sampler(sampling, (*model)->config().vocab_size, session->sampler_scratch());
  // A prompt that is not JSON: the grammar alone makes the output so.
  std::vector<int32_t> prompt(tokenizer.EncodeCapacity(16));
  size_t n_prompt = 0;
  ASSERT_TRUE(tokenizer.Encode("Once upon a time", /*add_bos=*/true, prompt.data(),
                               prompt.size(), &n_prompt).ok());
  prompt.resize(n_prompt);
  GenerateOptions generate;
  generate.max_new = n;
  const TokenConstraint token_constraint = constraint.AsTokenConstraint();
  generate.constraint = &token_constraint;
  Collected out;
  GenerateResult result;
  const Status s = Generate(*session, sampler, prompt.data(), prompt.size(), generate,
                            &Collect, &out, &result);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_FALSE(out.ids.empty());

  // The oracle, step by step.
  grammar::Program program;
  ASSERT_TRUE(program.Bind(words.data(), words.size()).ok());
  std::vector<uint64_t> memory(
      grammar::GrammarMatcher::RequiredBytes(grammar::MatcherLimits()) / 8 + 1);
  grammar::GrammarMatcher m;
  ASSERT_TRUE(
      m.Init(&program, grammar::MatcherLimits(), memory.data(), memory.size() * 8).ok());
  auto oracle = Session::Create(**model, options, nullptr);
  ASSERT_TRUE(oracle.ok());
  ASSERT_TRUE(oracle->Prefill(prompt.data(), prompt.size()).ok());
  const uint32_t vocab = tokenizer.vocab_size();
  std::string text;
  int32_t prev = prompt.back();
  for (size_t step = 0; step < out.ids.size(); ++step) {
    const int32_t got = out.ids[step];
    std::vector<char> allowed(vocab, 0);
    for (uint32_t id = 0; id < vocab; ++id) {
      const std::string_view bytes = tokenizer.Decode(prev, static_cast<int32_t>(id));
      if (bytes.empty()) continue;
      Feed(&m, text);
      bool ok = true;
      for (const char c : bytes) ok = ok && m.AcceptByte(static_cast<uint8_t>(c)).ok();
      allowed[id] = ok;
    }
    ASSERT_TRUE(allowed[got]) << "step " << step << ": token " << got << " after '"
                              << text << "'";
    if (temperature == 0.0f) {
      const float* logits = oracle->logits();
      int32_t best = -1;
      for (uint32_t id = 0; id < vocab; ++id) {
        if (allowed[id] && (best < 0 || logits[id] > logits[best])) best = int32_t(id);
      }
      ASSERT_EQ(got, best) << "step " << step << " after '" << text << "'";
    }
    text += std::string(tokenizer.Decode(prev, got));
    prev = got;
    ASSERT_TRUE(oracle->Decode(got).ok());
  }
  EXPECT_EQ(text, out.text);
  Feed(&m, text);
  EXPECT_EQ(result.complete, m.CanEnd()) << text;
  if (must_end) {
    EXPECT_EQ(result.stop, StopReason::kEndOfText) << text;
  }
  if (result.stop == StopReason::kEndOfText) {
    EXPECT_TRUE(result.complete) << text;
  }
}

TEST(GrammarGenerateTest, GreedyIsTheArgmaxOfTheAllowedTokensUnderJson) {
  CheckGeneration(grammar::kJsonGrammar, 0.0f, 48, 1);
}

TEST(GrammarGenerateTest, SampledTokensAreAlwaysAllowed) {
  for (uint64_t seed : {1, 2, 3}) CheckGeneration(grammar::kJsonGrammar, 1.0f, 40, seed);
}

TEST(GrammarGenerateTest, AGrammarOfWordsEndsTheText) {
  // Short sentences it can end soon: greedy reaches the end of text with a whole one.
  CheckGeneration(R"g(root ::= "Once" (" " [a-z]+){1,3} "."
)g", 0.0f, 40, 1, /*must_end=*/true);
}

}  // namespace
}  // namespace ember
