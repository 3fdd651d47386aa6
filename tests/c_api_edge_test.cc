// The C API at the edges of its integer arguments: SIZE_MAX, SIZE_MAX / 2 + 1, sums that
// wrap past SIZE_MAX, negative ints, INT32_MAX, for each entry that takes a size, count,
// index or position. Each is refused with a status and a message (or clamped where
// ember.h says so), never a crash, a wrapped size or a read past the caller's memory
// (ASan and UBSan builds run this too). A tiny model from memory: no model files needed.
// The chat entries: c_api_chat_edge_test.cc.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "gtest/gtest.h"
#include "tests/c_api_edge.h"

namespace ember {
namespace c_api_edge {
namespace {

// keep + discard past the position, or wrapping past SIZE_MAX to a small sum, is refused
// and the session is as before (the wrapped sum once passed the check, moved rows from
// far outside the cache and corrupted the heap).
TEST_F(CApiEdgeTest, ShiftContextRangesThatWrap) {
  Prefill(10);
  struct Range {
    size_t keep, discard;
  };
  for (const Range& r :
       {Range{SIZE_MAX, 2}, Range{2, SIZE_MAX}, Range{SIZE_MAX, SIZE_MAX},
        Range{kHalfPlusOne, kHalfPlusOne}, Range{kHalfPlusOne + 3, kHalfPlusOne},
        Range{SIZE_MAX - 4, 8}, Range{11, 1}, Range{0, 11}, Range{10, 1}, Range{5, 0}}) {
    EXPECT_EQ(ember_session_shift_context(session_, r.keep, r.discard),
              EMBER_INVALID_ARGUMENT)
        << r.keep << " + " << r.discard;
    EXPECT_NE(LastError().find("context shift: cannot drop"), std::string::npos)
        << LastError();
    EXPECT_EQ(ember_session_position(session_), 10u);
  }
  EXPECT_EQ(ember_session_shift_context(session_, 0, 10), EMBER_OK) << LastError();
  EXPECT_EQ(ember_session_position(session_), 0u);
  Prefill(4);
  EXPECT_EQ(ember_session_shift_context(session_, 1, 3), EMBER_OK) << LastError();
  EXPECT_EQ(ember_session_position(session_), 1u);
}

TEST_F(CApiEdgeTest, ModelFromMemoryAndThreadCounts) {
  ember_model* model = nullptr;
  for (size_t size : {SIZE_MAX, kHalfPlusOne, size_t{0}}) {
    EXPECT_EQ(ember_model_from_memory(nullptr, size, &model), EMBER_INVALID_ARGUMENT);
    EXPECT_EQ(model, nullptr);
  }
  // Shorter than the file: refused by the verifier, not read past.
  for (size_t size : {size_t{0}, size_t{7}, bytes_.size() / 2}) {
    EXPECT_EQ(ember_model_from_memory(bytes_.data(), size, &model), EMBER_INVALID_MODEL)
        << size;
    EXPECT_EQ(model, nullptr);
  }
  ember_threadpool* pool = nullptr;
  for (int n : {INT_MIN, -1, 0, 257, INT_MAX}) {
    EXPECT_EQ(ember_threadpool_create(n, &pool), EMBER_INVALID_ARGUMENT) << n;
    EXPECT_NE(LastError().find("thread count"), std::string::npos) << LastError();
    EXPECT_EQ(pool, nullptr);
  }
  ember_threadpool_options options;
  ember_threadpool_options_default(&options);
  options.num_threads = INT32_MIN;
  EXPECT_EQ(ember_threadpool_create_with_options(&options, &pool),
            EMBER_INVALID_ARGUMENT);
  options.num_threads = INT32_MAX;
  EXPECT_EQ(ember_threadpool_create_with_options(&options, &pool),
            EMBER_INVALID_ARGUMENT);
  options.struct_size = UINT32_MAX;
  EXPECT_EQ(ember_threadpool_create_with_options(&options, &pool), EMBER_UNIMPLEMENTED);
}

// Session options at their limits: refused with a message by ember_arena_bytes and
// ember_session_create alike, or clamped where ember.h says so (max_batch).
TEST_F(CApiEdgeTest, SessionOptionsAtTheirLimits) {
  ember_session_options options;
  ember_session_options_default(&options);
  struct Bad {
    void (*set)(ember_session_options*);
    ember_status status;
    const char* message;
  };
  const Bad bad[] = {
      {[](ember_session_options* o) { o->max_context = UINT32_MAX; },
       EMBER_INVALID_ARGUMENT, "exceeds the model's 64 positions"},
      {[](ember_session_options* o) { o->max_context = INT32_MAX; },
       EMBER_INVALID_ARGUMENT, "exceeds the model's 64 positions"},
      {[](ember_session_options* o) { o->max_prompt_bytes = UINT32_MAX; },
       EMBER_INVALID_ARGUMENT, "max_prompt_bytes 4294967295 exceeds"},
      {[](ember_session_options* o) { o->backend = UINT32_MAX; }, EMBER_INVALID_ARGUMENT,
       "unknown backend"},
      {[](ember_session_options* o) { o->kv_type = UINT32_MAX; }, EMBER_INVALID_ARGUMENT,
       "unknown kv_type"},
      {[](ember_session_options* o) { o->struct_size = UINT32_MAX; }, EMBER_UNIMPLEMENTED,
       "newer ember.h"},
      {[](ember_session_options* o) {
         o->context_shift = 1;
         o->context_keep = UINT32_MAX;
       },
       EMBER_INVALID_ARGUMENT, "at least 2 must be left"},
      {[](ember_session_options* o) {
         o->context_shift = 1;
         o->context_keep = UINT32_MAX - 1;
       },
       EMBER_INVALID_ARGUMENT, "at least 2 must be left"},
      {[](ember_session_options* o) {
         o->context_shift = 1;
         o->context_keep = 63;
       },
       EMBER_INVALID_ARGUMENT, "at least 2 must be left"},
  };
  for (const Bad& b : bad) {
    ember_session_options o = options;
    b.set(&o);
    EXPECT_EQ(ember_arena_bytes(model_, &o), 0u) << b.message;
    EXPECT_NE(LastError().find(b.message), std::string::npos) << LastError();
    ember_session* session = nullptr;
    EXPECT_EQ(ember_session_create(model_, &o, nullptr, nullptr, 0, &session), b.status)
        << b.message;
    EXPECT_NE(LastError().find(b.message), std::string::npos) << LastError();
    EXPECT_EQ(session, nullptr);
  }
  // max_batch is at most the context; context_keep may leave exactly 2.
  for (uint32_t batch : {UINT32_MAX, uint32_t{INT32_MAX}}) {
    ember_session_options o = options;
    o.max_batch = batch;
    EXPECT_GT(ember_arena_bytes(model_, &o), 0u) << LastError();
  }
  ember_session_options keep = options;
  keep.context_shift = 1;
  keep.context_keep = 62;
  EXPECT_GT(ember_arena_bytes(model_, &keep), 0u) << LastError();
}

// The caller's arena: one byte short is refused; a larger arena_bytes than needed is
// fine (only the planned bytes are used).
TEST_F(CApiEdgeTest, CallerArenaSizes) {
  const size_t needed = ember_arena_bytes(model_, nullptr);
  ASSERT_GT(needed, 0u);
  std::vector<uint8_t> arena(needed);
  ember_session* session = nullptr;
  for (size_t bytes : {size_t{0}, size_t{1}, needed - 1}) {
    EXPECT_EQ(
        ember_session_create(model_, nullptr, nullptr, arena.data(), bytes, &session),
        EMBER_RESOURCE_EXHAUSTED);
    EXPECT_NE(LastError().find("too small"), std::string::npos) << LastError();
  }
  ASSERT_EQ(
      ember_session_create(model_, nullptr, nullptr, arena.data(), needed, &session),
      EMBER_OK);
  const int32_t one = 5;
  EXPECT_EQ(ember_prefill(session, &one, 1), EMBER_OK);
  ember_session_free(session);
}

// No ids to write needs no buffer: a NULL one with no tokens is a count of 0 (the copy
// of nothing once passed NULL to memcpy, which UBSan reports; the c_api fuzzer found it).
TEST_F(CApiEdgeTest, TokenizeNothingIntoNoBuffer) {
  size_t n = 99;
  EXPECT_EQ(ember_tokenize(session_, "", 0, 0, nullptr, 0, &n), EMBER_OK) << LastError();
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(ember_tokenize(session_, nullptr, 0, 0, nullptr, SIZE_MAX, &n), EMBER_OK)
      << LastError();
  EXPECT_EQ(n, 0u);
}

// Text lengths are checked before the text is read; a huge capacity is only a bound.
TEST_F(CApiEdgeTest, TokenizeLengthsAndCapacities) {
  int32_t ids[16];
  size_t n = 99;
  // 513: one past max_prompt_bytes (8 a position), past the 4 bytes of "abc" too.
  for (size_t length : {SIZE_MAX, kHalfPlusOne, size_t{UINT32_MAX}, size_t{513}}) {
    EXPECT_EQ(ember_tokenize(session_, "abc", length, 1, ids, 16, &n),
              EMBER_INVALID_ARGUMENT);
    EXPECT_NE(LastError().find("exceeds the session's max_prompt_bytes"),
              std::string::npos)
        << LastError();
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(ember_tokenize(session_, nullptr, length, 1, ids, 16, &n),
              EMBER_INVALID_ARGUMENT);
    EXPECT_NE(LastError().find("text is NULL"), std::string::npos) << LastError();
  }
  size_t want = 0;
  ASSERT_EQ(ember_tokenize(session_, "abc", 3, 1, ids, 16, &want), EMBER_OK);
  for (size_t capacity : {SIZE_MAX, kHalfPlusOne}) {
    EXPECT_EQ(ember_tokenize(session_, "abc", 3, 1, ids, capacity, &n), EMBER_OK);
    EXPECT_EQ(n, want);
  }
  for (int add_bos : {INT_MIN, -1, INT_MAX}) {  // any nonzero: BOS first
    EXPECT_EQ(ember_tokenize(session_, "abc", 3, add_bos, ids, 16, &n), EMBER_OK);
    EXPECT_EQ(ids[0], ember_model_bos(model_));
  }
  ember_tokenize_options options;
  ember_tokenize_options_default(&options);
  for (int add_bos : {INT_MIN, -2, 2, INT_MAX}) {
    options.add_bos = add_bos;
    EXPECT_EQ(ember_tokenize_with_options(session_, "abc", 3, &options, ids, 16, &n),
              EMBER_INVALID_ARGUMENT);
    EXPECT_NE(LastError().find("is not -1, 0 or 1"), std::string::npos) << LastError();
  }
  options.add_bos = 0;
  options.parse_special = INT_MIN;  // nonzero: on
  EXPECT_EQ(ember_tokenize_with_options(session_, "abc", 3, &options, ids, 16, &n),
            EMBER_OK);
  options.struct_size = UINT32_MAX;
  EXPECT_EQ(ember_tokenize_with_options(session_, "abc", 3, &options, ids, 16, &n),
            EMBER_UNIMPLEMENTED);
}

// Token ids outside the vocabulary, as the token or as the one before it, are refused:
// -1 is the only id outside it that means something (the start of the text).
TEST_F(CApiEdgeTest, DetokenizeIds) {
  const char* bytes = nullptr;
  size_t length = 0;
  const int32_t vocab = static_cast<int32_t>(ember_model_vocab_size(model_));
  for (int32_t token : {INT32_MIN, -1, vocab, INT32_MAX}) {
    EXPECT_EQ(ember_detokenize(model_, -1, token, &bytes, &length),
              EMBER_INVALID_ARGUMENT)
        << token;
    EXPECT_NE(LastError().find("outside the vocabulary"), std::string::npos);
  }
  for (int32_t prev : {INT32_MIN, -2, vocab, INT32_MAX}) {
    EXPECT_EQ(ember_detokenize(model_, prev, 100, &bytes, &length),
              EMBER_INVALID_ARGUMENT)
        << prev;
    EXPECT_NE(LastError().find("prev_token " + std::to_string(prev) +
                               " is outside the vocabulary"),
              std::string::npos)
        << LastError();
  }
  for (int32_t prev : {-1, 0, vocab - 1}) {
    EXPECT_EQ(ember_detokenize(model_, prev, 100, &bytes, &length), EMBER_OK) << prev;
  }
}

// Counts of ids are checked before the ids are read (ASan: no read past `one`), so a
// count whose byte size wraps (SIZE_MAX / 4 + 1) cannot pass as a small one.
TEST_F(CApiEdgeTest, PrefillDecodeAndGenerateCounts) {
  const int32_t one[1] = {5};
  for (size_t n : {SIZE_MAX, kHalfPlusOne, SIZE_MAX / sizeof(int32_t) + 1, size_t{65}}) {
    EXPECT_EQ(ember_prefill(session_, one, n), EMBER_OUT_OF_RANGE) << n;
    EXPECT_NE(LastError().find("context full"), std::string::npos) << LastError();
    EXPECT_EQ(ember_prefill(session_, nullptr, n), EMBER_INVALID_ARGUMENT);
    Counter counter;
    size_t generated = 99;
    EXPECT_EQ(ember_generate(session_, one, n, 4, &Count, &counter, &generated),
              EMBER_OUT_OF_RANGE);
    EXPECT_EQ(generated, 0u);
    EXPECT_EQ(ember_session_position(session_), 0u);
  }
  for (int32_t token : {INT32_MIN, -1, 300, INT32_MAX}) {
    EXPECT_EQ(ember_decode(session_, token), EMBER_INVALID_ARGUMENT) << token;
  }
  // max_new at its limits: generation stops at the full context (or the callback).
  for (size_t max_new : {SIZE_MAX, kHalfPlusOne}) {
    ember_session_reset(session_);
    Counter counter;
    size_t generated = 0;
    const ember_status s =
        ember_generate(session_, one, 1, max_new, &Count, &counter, &generated);
    EXPECT_TRUE(s == EMBER_OK || s == EMBER_OUT_OF_RANGE) << LastError();
    EXPECT_LE(generated, 64u);
    EXPECT_LE(ember_session_position(session_), 64u);
    ember_session_reset(session_);
    counter = Counter{0, 3};
    EXPECT_EQ(ember_generate(session_, one, 1, max_new, &Count, &counter, &generated),
              EMBER_OK);
    EXPECT_EQ(generated, 3u);
  }
}

// Sampler fields at their limits: top_k and repeat_last_n past the vocabulary and the
// context are bounds; a count of stop strings past 16 is refused before `stop` is read.
TEST_F(CApiEdgeTest, SamplerFieldsAtTheirLimits) {
  ember_sampler_options options;
  ember_sampler_options_default(&options);
  options.temperature = 0.8f;
  options.top_k = UINT32_MAX;
  options.repeat_last_n = INT32_MAX;
  options.repeat_penalty = 1.1f;
  options.seed = UINT64_MAX;
  ASSERT_EQ(ember_session_set_sampler(session_, &options), EMBER_OK) << LastError();
  Prefill(3);
  int32_t token = -1;
  EXPECT_EQ(ember_sample(session_, &token), EMBER_OK) << LastError();
  EXPECT_GE(token, 0);
  EXPECT_LT(token, 300);
  for (int32_t last_n : {INT32_MIN, -2}) {
    ember_sampler_options o = options;
    o.repeat_last_n = last_n;
    EXPECT_EQ(ember_session_set_sampler(session_, &o), EMBER_INVALID_ARGUMENT);
    EXPECT_NE(LastError().find("below -1"), std::string::npos) << LastError();
  }
  const char* one_stop[] = {"x"};
  for (uint32_t n_stop : {UINT32_MAX, uint32_t{INT32_MAX}, 17u}) {
    ember_sampler_options o = options;
    o.stop = one_stop;  // one string: a count past it must not be read
    o.n_stop = n_stop;
    EXPECT_EQ(ember_session_set_sampler(session_, &o), EMBER_INVALID_ARGUMENT);
    EXPECT_NE(LastError().find("at most 16"), std::string::npos) << LastError();
  }
  options.struct_size = UINT32_MAX;
  EXPECT_EQ(ember_session_set_sampler(session_, &options), EMBER_UNIMPLEMENTED);
}

// State buffers: a capacity one short is refused with the size needed; a state is
// restored from its exact size (the header says how much there is: a byte short or a
// byte more is refused).
TEST_F(CApiEdgeTest, StateSizes) {
  Prefill(5);
  const size_t needed = ember_session_state_size(session_);
  ASSERT_GT(needed, 0u);
  std::vector<uint8_t> state(needed);
  size_t size = 0;
  EXPECT_EQ(ember_session_save_state(session_, state.data(), needed - 1, &size),
            EMBER_RESOURCE_EXHAUSTED);
  EXPECT_EQ(size, needed);
  EXPECT_EQ(ember_session_save_state(session_, nullptr, SIZE_MAX, &size),
            EMBER_INVALID_ARGUMENT);
  ASSERT_EQ(ember_session_save_state(session_, state.data(), needed, &size), EMBER_OK);
  state.push_back(0);
  for (size_t bytes : {size_t{0}, size_t{95}, needed - 1, needed + 1}) {
    EXPECT_EQ(ember_session_restore_state(session_, state.data(), bytes),
              EMBER_INVALID_ARGUMENT)
        << bytes;
  }
  ember_session_reset(session_);
  EXPECT_EQ(ember_session_restore_state(session_, state.data(), needed), EMBER_OK)
      << LastError();
  EXPECT_EQ(ember_session_position(session_), 5u);
}

}  // namespace
}  // namespace c_api_edge
}  // namespace ember
