// The C API through its C++ wrapper (ember.hpp) on stories260K: the golden story with a
// caller-owned arena, step by step, and statuses plus messages for bad calls.
#include "tests/c_api_stories.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "gtest/gtest.h"
#include "testing/testing.h"
#include "tests/stories260k.h"

namespace ember {
namespace {

using CApiTest = CApiStoriesTest;  // stories260K, tests/c_api_stories.h

TEST_F(CApiTest, GoldenWithCallerArena) {
  ember_session_options options;
  ember_session_options_default(&options);
  const size_t bytes = model_.ArenaBytes(&options);
  ASSERT_GT(bytes, 0u);
  std::vector<uint8_t> arena(bytes);
  cpp::Session session;
  ASSERT_EQ(session.Create(model_, &options, nullptr, arena.data(), arena.size()),
            EMBER_OK)
      << cpp::LastError();
  std::vector<int32_t> prompt;
  ASSERT_EQ(session.Tokenize("", true, &prompt), EMBER_OK);
  ASSERT_EQ(prompt, std::vector<int32_t>{1});
  std::vector<int32_t> ids;
  size_t generated = 0;
  ASSERT_EQ(session.Generate(
                prompt, 100,
                [&](int32_t id, std::string_view) {
                  ids.push_back(id);
                  return true;
                },
                &generated),
            EMBER_OK);
  EXPECT_EQ(generated, 100u);
  const std::vector<int32_t> golden(testing::Stories260KGolden().begin(),
                                    testing::Stories260KGolden().begin() + 100);
  EXPECT_EQ(ids, golden);
}

// A grammar on a session: every generation follows it from its start (checked here by
// the grammar's own words: each text is one of its sentences), ends where it can end,
// and a generation cut off mid-structure is EMBER_OUT_OF_RANGE; a malformed grammar is
// refused with its line and column and the previous one stays; null removes it.
TEST_F(CApiTest, GenerationFollowsTheSessionsGrammar) {
  const char kGrammar[] = "top ::= (\"yes\" | \"no\" | \"maybe not\") \".\"";
  ember_session_options options;
  ember_session_options_default(&options);
  EXPECT_EQ(options.grammar_bytes, 0u);  // no room by default: a grammar is refused
  cpp::Session session;
  ASSERT_EQ(session.Create(model_, &options), EMBER_OK);
  EXPECT_EQ(session.SetGrammar(kGrammar, "top"), EMBER_RESOURCE_EXHAUSTED);
  options.grammar_bytes = model_.GrammarBytes(kGrammar, "top");
  ASSERT_GT(options.grammar_bytes, 0u) << cpp::LastError();
  ASSERT_EQ(session.Create(model_, &options), EMBER_OK);
  ember_grammar_options bad_size;
  ember_grammar_options_default(&bad_size);
  bad_size.struct_size = 3;
  EXPECT_EQ(ember_session_set_grammar(session.get(), kGrammar, strlen(kGrammar), &bad_size),
            EMBER_INVALID_ARGUMENT);
  std::vector<int32_t> prompt;
  ASSERT_EQ(session.Tokenize("Once upon a time", true, &prompt), EMBER_OK);
  const auto generate = [&](size_t max_new, std::string* text) {
    text->clear();
    session.Reset();
    return session.Generate(prompt, max_new, [&](int32_t, std::string_view piece) {
      text->append(piece);
      return true;
    });
  };
  std::string text, free_text;
  ASSERT_EQ(session.SetGrammar(std::string_view()), EMBER_OK);
  ASSERT_EQ(generate(20, &free_text), EMBER_OK);  // no grammar yet
  ASSERT_EQ(session.SetGrammar(kGrammar, "top"), EMBER_OK) << cpp::LastError();
  for (int round = 0; round < 2; ++round) {  // each generation starts the grammar over
    ASSERT_EQ(generate(20, &text), EMBER_OK) << cpp::LastError();
    EXPECT_TRUE(text == "yes." || text == "no." || text == "maybe not.") << text;
    EXPECT_TRUE(session.GrammarComplete());
  }
  EXPECT_EQ(generate(1, &text), EMBER_OUT_OF_RANGE);
  EXPECT_NE(std::string(cpp::LastError()).find("in the middle of the grammar's text"),
            std::string::npos)
      << cpp::LastError();
  EXPECT_FALSE(session.GrammarComplete());
  // Refused, and the grammar stays.
  EXPECT_EQ(session.SetGrammar("top ::= \"a\" (\n", "top"), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cpp::LastError()).find("line 2, column 1"), std::string::npos)
      << cpp::LastError();
  ASSERT_EQ(generate(20, &text), EMBER_OK);
  EXPECT_TRUE(text == "yes." || text == "no." || text == "maybe not.") << text;
  // Removed: the story as without one.
  ASSERT_EQ(session.SetGrammar(std::string_view()), EMBER_OK);
  ASSERT_EQ(generate(20, &text), EMBER_OK);
  EXPECT_EQ(text, free_text);
  EXPECT_GT(text.size(), 20u) << text;
  EXPECT_TRUE(session.GrammarComplete());
}

TEST_F(CApiTest, StepwiseDecodeAndSample) {
  cpp::Session session;
  ASSERT_EQ(session.Create(model_), EMBER_OK);
  int32_t token = 0;
  EXPECT_EQ(session.Sample(&token), EMBER_INVALID_ARGUMENT);  // no logits yet
  ASSERT_EQ(session.Prefill({1}), EMBER_OK);
  std::string text;
  int32_t prev = 1;
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(session.Sample(&token), EMBER_OK);
    EXPECT_EQ(token, testing::Stories260KGolden()[i]);
    text.append(model_.Detokenize(prev, token));
    prev = token;
    ASSERT_EQ(session.Decode(token), EMBER_OK);
  }
  EXPECT_EQ(text.rfind("Once upon a time", 0), 0u) << text;
  EXPECT_EQ(session.position(), 11u);
  session.Reset();
  EXPECT_EQ(session.position(), 0u);
}

// ember_logits_rows: every row of a prefill step with all_logits (the last one
// ember_logits'), each equal to the logits of a session prefilled up to that token; the
// last step's rows when a prefill runs several; one row without all_logits.
TEST_F(CApiTest, LogitsRowsOfAPrefillStep) {
  const std::vector<int32_t> tokens = {1, 403, 407, 261, 378, 432};
  const size_t vocab = ember_model_vocab_size(model_.get());
  ember_session_options options;
  ember_session_options_default(&options);
  options.all_logits = 1;
  options.max_batch = 4;
  cpp::Session all;
  ASSERT_EQ(all.Create(model_, &options), EMBER_OK) << cpp::LastError();
  size_t rows = 99;
  EXPECT_EQ(ember_logits_rows(all.get(), &rows), nullptr);  // before any prefill
  EXPECT_EQ(rows, 0u);
  ASSERT_EQ(all.Prefill({tokens.begin(), tokens.begin() + 4}), EMBER_OK);
  const float* step = ember_logits_rows(all.get(), &rows);
  ASSERT_EQ(rows, 4u);
  EXPECT_EQ(step + 3 * vocab, ember_logits(all.get()));
  for (size_t i = 0; i < 4; ++i) {
    cpp::Session one;
    ASSERT_EQ(one.Create(model_), EMBER_OK);
    ASSERT_EQ(one.Prefill({tokens.begin(), tokens.begin() + i + 1}), EMBER_OK);
    EXPECT_EQ(memcmp(step + i * vocab, ember_logits(one.get()), vocab * sizeof(float)), 0)
        << "row " << i;
  }
  all.Reset();
  ASSERT_EQ(all.Prefill(tokens), EMBER_OK);  // steps of 4, then 2
  step = ember_logits_rows(all.get(), &rows);
  ASSERT_EQ(rows, 2u);
  EXPECT_EQ(step + vocab, ember_logits(all.get()));
  cpp::Session last;
  ASSERT_EQ(last.Create(model_), EMBER_OK);
  ASSERT_EQ(last.Prefill(tokens), EMBER_OK);
  EXPECT_EQ(ember_logits_rows(last.get(), &rows), ember_logits(last.get()));
  EXPECT_EQ(rows, 1u);
  EXPECT_EQ(ember_logits_rows(nullptr, &rows), nullptr);
  EXPECT_EQ(rows, 0u);
  EXPECT_EQ(memcmp(ember_logits(last.get()), step + vocab, vocab * sizeof(float)), 0);
}

TEST_F(CApiTest, BadCallsReturnStatusesWithMessages) {
  cpp::Session session;
  ember_session_options options;
  ember_session_options_default(&options);
  options.max_context = 8;
  ASSERT_EQ(session.Create(model_, &options), EMBER_OK);
  EXPECT_EQ(session.Decode(512), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("outside the vocabulary"), std::string::npos);
  EXPECT_EQ(session.Decode(-1), EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(session.Prefill(std::vector<int32_t>(9, 5)), EMBER_OUT_OF_RANGE);
  EXPECT_NE(cpp::LastError().find("context full"), std::string::npos);

  size_t generated = 0;
  EXPECT_EQ(session.Generate(
                {1}, 100, [](int32_t, std::string_view) { return true; }, &generated),
            EMBER_OUT_OF_RANGE);
  EXPECT_EQ(generated, 8u);

  int32_t ids[2];
  size_t n = 0;
  EXPECT_EQ(ember_tokenize(session.get(), "Once upon a time", 16, 1, ids, 2, &n),
            EMBER_RESOURCE_EXHAUSTED);
  EXPECT_GT(n, 2u);
  EXPECT_EQ(ember_tokenize(session.get(), "\xff", 1, 1, ids, 2, &n),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("UTF-8"), std::string::npos);

  const char* bytes;
  size_t length;
  EXPECT_EQ(ember_detokenize(model_.get(), -1, 100000, &bytes, &length),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_prefill(nullptr, ids, 1), EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_model_open(nullptr, nullptr), EMBER_INVALID_ARGUMENT);

  std::vector<uint8_t> small(100);
  cpp::Session too_small;
  EXPECT_EQ(too_small.Create(model_, nullptr, nullptr, small.data(), small.size()),
            EMBER_RESOURCE_EXHAUSTED);
  EXPECT_NE(cpp::LastError().find("too small"), std::string::npos);

  ember_threadpool* pool = nullptr;
  EXPECT_EQ(ember_threadpool_create(0, &pool), EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(pool, nullptr);
}

// A pool's options: the policy on by default, switched off on request; bad sizes and
// thread counts refused.
TEST_F(CApiTest, ThreadPoolOptions) {
  ember_threadpool_options options;
  ember_threadpool_options_default(&options);
  EXPECT_EQ(options.struct_size, sizeof(options));
  EXPECT_EQ(options.num_threads, 1);
  EXPECT_EQ(options.adapt_to_contention, 1);
  for (int adapt : {0, 1}) {
    options.num_threads = 2;
    options.adapt_to_contention = adapt;
    ember_threadpool* pool = nullptr;
    ASSERT_EQ(ember_threadpool_create_with_options(&options, &pool), EMBER_OK);
    cpp::Session session;
    ASSERT_EQ(session.Create(model_, nullptr, pool), EMBER_OK);
    const int32_t ids[] = {1, 2, 3};
    EXPECT_EQ(ember_prefill(session.get(), ids, 3), EMBER_OK);
    session = cpp::Session();
    ember_threadpool_free(pool);
  }
  ember_threadpool* pool = nullptr;
  options.num_threads = 0;
  EXPECT_EQ(ember_threadpool_create_with_options(&options, &pool), EMBER_INVALID_ARGUMENT);
  options.num_threads = 2;
  EXPECT_EQ(ember_threadpool_create_with_options(nullptr, &pool), EMBER_INVALID_ARGUMENT);
  ember_threadpool_options zero{};
  EXPECT_EQ(ember_threadpool_create_with_options(&zero, &pool), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("ember_threadpool_options_default"), std::string::npos);
  ember_threadpool_options newer = options;
  newer.struct_size = sizeof(options) + 4;
  EXPECT_EQ(ember_threadpool_create_with_options(&newer, &pool), EMBER_UNIMPLEMENTED);
  EXPECT_EQ(pool, nullptr);
}

TEST_F(CApiTest, OptionStructsCarryTheirSize) {
  ember_session_options options;
  ember_session_options_default(&options);
  EXPECT_EQ(options.struct_size, sizeof(options));
  cpp::Session session;
  // Not filled by ember_session_options_default: refused, not read past its end.
  ember_session_options zero{};
  EXPECT_EQ(session.Create(model_, &zero), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("ember_session_options_default"), std::string::npos);
  EXPECT_EQ(ember_arena_bytes(model_.get(), &zero), 0u);
  // From a newer header than this library: refused as unimplemented.
  ember_session_options newer = options;
  newer.struct_size = sizeof(options) + 8;
  EXPECT_EQ(session.Create(model_, &newer), EMBER_UNIMPLEMENTED);
  EXPECT_NE(cpp::LastError().find("newer"), std::string::npos);

  // A caller whose header ends before the backend field gets the default backend.
  ember_session_options older = options;
  older.struct_size = offsetof(ember_session_options, backend);
  older.backend = 12345;  // past its struct_size: never read
  EXPECT_EQ(session.Create(model_, &older), EMBER_OK) << cpp::LastError();
  ember_session_options bad_backend = options;
  bad_backend.backend = 7;
  EXPECT_EQ(session.Create(model_, &bad_backend), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("unknown backend 7"), std::string::npos);
  // The ISA tier: an unknown one is refused; one read past struct_size never is.
  ember_session_options bad_isa = options;
  bad_isa.isa = "avx1024";
  EXPECT_EQ(session.Create(model_, &bad_isa), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("unknown ISA tier \"avx1024\""), std::string::npos)
      << cpp::LastError();
  ember_session_options before_isa = bad_isa;
  before_isa.struct_size = offsetof(ember_session_options, isa);
  EXPECT_EQ(session.Create(model_, &before_isa), EMBER_OK) << cpp::LastError();
  ember_session_options native = options;
  native.isa = "native";
  EXPECT_EQ(session.Create(model_, &native), EMBER_OK) << cpp::LastError();

  ASSERT_EQ(session.Create(model_, &options), EMBER_OK);
  ember_sampler_options sampler;
  ember_sampler_options_default(&sampler);
  EXPECT_EQ(sampler.struct_size, sizeof(sampler));
  EXPECT_EQ(session.SetSampler(sampler), EMBER_OK);
  sampler.struct_size = 3;
  EXPECT_EQ(session.SetSampler(sampler), EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_session_set_sampler(session.get(), nullptr), EMBER_INVALID_ARGUMENT);
}

// The appended long-context fields: an older struct gets the f32 cache and no shift; a
// q8 cache needs a smaller arena; an unknown type is refused; with context_shift,
// generation goes past the context (and stops there without it).
TEST_F(CApiTest, KvTypeAndContextShift) {
  ember_session_options options;
  ember_session_options_default(&options);
  EXPECT_EQ(options.kv_type, EMBER_KV_F32);
  EXPECT_EQ(options.context_shift, 0);
  options.max_context = 64;
  const size_t f32_bytes = model_.ArenaBytes(&options);
  ember_session_options older = options;
  older.struct_size = offsetof(ember_session_options, kv_type);
  older.kv_type = EMBER_KV_Q8;  // past its struct_size: never read
  EXPECT_EQ(model_.ArenaBytes(&older), f32_bytes);
  ember_session_options q8 = options;
  q8.kv_type = EMBER_KV_Q8;
  EXPECT_LT(model_.ArenaBytes(&q8), f32_bytes);
  ember_session_options bad = options;
  bad.kv_type = 3;
  EXPECT_EQ(model_.ArenaBytes(&bad), 0u);
  EXPECT_NE(cpp::LastError().find("unknown kv_type 3"), std::string::npos);

  for (int shift : {0, 1}) {
    ember_session_options o = q8;
    o.context_shift = shift;
    o.context_keep = 1;
    cpp::Session session;
    ASSERT_EQ(session.Create(model_, &o), EMBER_OK) << cpp::LastError();
    size_t generated = 0;
    const ember_status status = session.Generate(
        {1}, 150, [](int32_t, std::string_view) { return true; }, &generated);
    if (shift) {
      EXPECT_EQ(status, EMBER_OK) << cpp::LastError();
      EXPECT_EQ(generated, 150u);
      EXPECT_LE(session.position(), 64u);
    } else {
      EXPECT_EQ(status, EMBER_OUT_OF_RANGE);
      EXPECT_EQ(generated, 64u);
    }
  }
  cpp::Session session;
  ASSERT_EQ(session.Create(model_, &options), EMBER_OK);
  ASSERT_EQ(session.Prefill({1, 2, 3, 4, 5}), EMBER_OK);
  EXPECT_EQ(session.ShiftContext(1, 5), EMBER_INVALID_ARGUMENT);  // past position 5
  EXPECT_EQ(session.ShiftContext(1, 2), EMBER_OK) << cpp::LastError();
  EXPECT_EQ(session.position(), 3u);
}

// Sampler options are values a caller may get wrong: each is refused with a message
// naming it, and the session keeps sampling as before.
TEST_F(CApiTest, SamplerOptionsAreValidated) {
  cpp::Session session;
  ASSERT_EQ(session.Create(model_), EMBER_OK);
  ember_sampler_options good;
  ember_sampler_options_default(&good);
  good.temperature = 1e-39f;  // 1/T overflows: sampled as greedy
  EXPECT_EQ(session.SetSampler(good), EMBER_OK) << cpp::LastError();
  const float nan = std::nanf("");
  struct Bad {
    float temperature, top_p;
    const char* message;
  };
  for (const Bad& bad : {Bad{nan, 0.9f, "temperature"}, Bad{-0.5f, 0.9f, "temperature"},
                         Bad{INFINITY, 0.9f, "temperature"}, Bad{0.8f, 0.0f, "top_p"},
                         Bad{0.8f, 1.5f, "top_p"}, Bad{0.8f, nan, "top_p"}}) {
    ember_sampler_options o = good;
    o.temperature = bad.temperature;
    o.top_p = bad.top_p;
    EXPECT_EQ(session.SetSampler(o), EMBER_INVALID_ARGUMENT) << bad.message;
    EXPECT_NE(cpp::LastError().find(bad.message), std::string::npos) << cpp::LastError();
  }
  // Still the greedy sampler of 1e-39: the golden story's first tokens.
  size_t generated = 0;
  std::vector<int32_t> ids;
  EXPECT_EQ(session.Generate(
                {1}, 10,
                [&ids](int32_t id, std::string_view) {
                  ids.push_back(id);
                  return true;
                },
                &generated),
            EMBER_OK)
      << cpp::LastError();
  ASSERT_EQ(ids.size(), 10u);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(ids[i], testing::Stories260KGolden()[i]) << i;
  }
}

// Smaller misuses: a NULL output buffer is named as such; a prefill's length is checked
// before its ids are read (a wrong count must not read past the caller's array).
TEST_F(CApiTest, NullBuffersAndLengthsBeforeContents) {
  cpp::Session session;
  ember_session_options options;
  ember_session_options_default(&options);
  options.max_context = 16;
  ASSERT_EQ(session.Create(model_, &options), EMBER_OK);
  size_t n = 0;
  EXPECT_EQ(ember_tokenize(session.get(), "Once upon a time", 16, 1, nullptr, 100, &n),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("ids is NULL"), std::string::npos) << cpp::LastError();
  const int32_t one[1] = {5};
  EXPECT_EQ(ember_prefill(session.get(), one, SIZE_MAX / sizeof(int32_t)),
            EMBER_OUT_OF_RANGE);  // ASan reports a read past `one`
  EXPECT_NE(cpp::LastError().find("context full"), std::string::npos);
  EXPECT_EQ(ember_prefill(session.get(), one, 1), EMBER_OK) << cpp::LastError();
}

// A session keeps its model and thread pool alive: freeing them first is allowed, and
// they go with the last session (ASan and LeakSanitizer check both halves).
TEST_F(CApiTest, ModelAndPoolOutliveTheirHandles) {
  ember_model* model = nullptr;
  ASSERT_EQ(ember_model_open(testing::Stories260KPath().c_str(), &model), EMBER_OK);
  ember_threadpool* pool = nullptr;
  ASSERT_EQ(ember_threadpool_create(1, &pool), EMBER_OK);
  ember_session* a = nullptr;
  ember_session* b = nullptr;
  ASSERT_EQ(ember_session_create(model, nullptr, pool, nullptr, 0, &a), EMBER_OK);
  ASSERT_EQ(ember_session_create(model, nullptr, pool, nullptr, 0, &b), EMBER_OK);
  ember_model_free(model);
  ember_threadpool_free(pool);
  const int32_t bos = 1;
  for (ember_session* s : {a, b}) {
    ASSERT_EQ(ember_prefill(s, &bos, 1), EMBER_OK) << ember_last_error();
    int32_t token = -1;
    ASSERT_EQ(ember_sample(s, &token), EMBER_OK);
    EXPECT_EQ(token, testing::Stories260KGolden()[0]);
  }
  ember_session_free(a);
  EXPECT_EQ(ember_prefill(b, &bos, 1), EMBER_OK);  // the model is still there
  ember_session_free(b);
}

}  // namespace
}  // namespace ember
