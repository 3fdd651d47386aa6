// The C API's speculative decoding (ember_speculative.h) on a tiny model built in
// memory: ember_generate with a lookup and with a draft session gives the tokens of
// plain greedy generation and counts what it drafted and accepted; a session planned
// without draft_max, a session drafting for itself, another vocabulary and lengths out
// of range are refused with a message.
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "gtest/gtest.h"
#include "testing/testing.h"

namespace ember {
namespace {

int Collect(void* user, int32_t token, const char*, size_t) {
  if (token >= 0) static_cast<std::vector<int32_t>*>(user)->push_back(token);
  return 1;
}

struct Loaded {
  testing::AlignedBytes bytes;
  ember_model* model = nullptr;
  ~Loaded() { ember_model_free(model); }
};

void Load(uint32_t vocab, Loaded* out) {
  std::vector<uint8_t> raw;
  ASSERT_TRUE(
      SerializeModel(testing::TinyModelSpec(32, 2, 4, 2, 48, vocab, 128, 1), &raw).ok());
  out->bytes = testing::AlignedBytes(raw);
  ASSERT_EQ(ember_model_from_memory(out->bytes.data(), out->bytes.size(), &out->model),
            EMBER_OK)
      << ember_last_error();
}

std::vector<int32_t> GenerateGreedy(ember_session* session,
                                    const std::vector<int32_t>& prompt, size_t n) {
  std::vector<int32_t> ids;
  size_t generated = 0;
  EXPECT_EQ(ember_generate(session, prompt.data(), prompt.size(), n, &Collect, &ids,
                           &generated),
            EMBER_OK)
      << ember_last_error();
  EXPECT_EQ(generated, ids.size());
  return ids;
}

TEST(CApiSpeculativeTest, LookupAndDraftGivePlainTokens) {
  Loaded m;
  Load(300, &m);
  ASSERT_NE(m.model, nullptr);
  ember_session_options options;
  ember_session_options_default(&options);
  EXPECT_EQ(options.draft_max, 0u);
  options.max_context = 128;
  ember_session* plain = nullptr;
  ASSERT_EQ(ember_session_create(m.model, &options, nullptr, nullptr, 0, &plain),
            EMBER_OK);
  // Not planned for it: refused, naming why.
  EXPECT_EQ(ember_session_set_lookup(plain, 3), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ember_last_error()).find("draft_max"), std::string::npos);
  const size_t plain_bytes = ember_arena_bytes(m.model, &options);
  options.draft_max = 6;
  EXPECT_GT(ember_arena_bytes(m.model, &options), plain_bytes);
  ember_session* target = nullptr;
  ember_session* draft = nullptr;
  ASSERT_EQ(ember_session_create(m.model, &options, nullptr, nullptr, 0, &target),
            EMBER_OK);
  options.draft_max = 0;
  ASSERT_EQ(ember_session_create(m.model, &options, nullptr, nullptr, 0, &draft),
            EMBER_OK);
  std::vector<int32_t> prompt = testing::SpreadTokens(12, 17);
  prompt.insert(prompt.end(), prompt.begin(), prompt.end());
  const std::vector<int32_t> expected = GenerateGreedy(plain, prompt, 60);
  ASSERT_EQ(expected.size(), 60u);

  ASSERT_EQ(ember_session_set_lookup(target, 3), EMBER_OK) << ember_last_error();
  EXPECT_EQ(GenerateGreedy(target, prompt, 60), expected);
  ember_speculative_stats lookup{};
  ASSERT_EQ(ember_session_speculative_stats(target, &lookup, 1), EMBER_OK);
  EXPECT_EQ(lookup.rounds + lookup.accepted, 59u) << "every token but the first";
  EXPECT_GT(lookup.verified, 0u);

  // The model drafting for itself through a second session: every draft accepted.
  ASSERT_EQ(ember_session_set_lookup(target, 0), EMBER_OK);
  EXPECT_EQ(ember_session_set_draft(target, target), EMBER_INVALID_ARGUMENT);
  ASSERT_EQ(ember_session_set_draft(target, draft), EMBER_OK) << ember_last_error();
  ASSERT_EQ(ember_session_set_draft_max(target, 4), EMBER_OK);
  EXPECT_EQ(ember_session_set_draft_max(target, 7), EMBER_INVALID_ARGUMENT);
  ember_session_reset(target);
  EXPECT_EQ(GenerateGreedy(target, prompt, 60), expected);
  ember_speculative_stats self{};
  ASSERT_EQ(ember_session_speculative_stats(target, &self, 0), EMBER_OK);
  EXPECT_GT(self.drafted, 0u);
  EXPECT_EQ(self.accepted, self.drafted);
  EXPECT_GT(self.draft_passes, 0u);
  EXPECT_EQ(self.rounds + self.accepted, 59u);

  // Another vocabulary cannot draft.
  Loaded wider;
  Load(310, &wider);
  ember_session* other = nullptr;
  ASSERT_EQ(ember_session_create(wider.model, &options, nullptr, nullptr, 0, &other),
            EMBER_OK);
  EXPECT_EQ(ember_session_set_draft(target, other), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ember_last_error()).find("310"), std::string::npos)
      << ember_last_error();
  ASSERT_EQ(ember_session_set_draft(target, nullptr), EMBER_OK);
  ember_speculative_stats none{};
  EXPECT_EQ(ember_session_speculative_stats(plain, &none, 0), EMBER_OK);
  EXPECT_EQ(none.rounds, 0u);
  ember_session_free(other);
  ember_session_free(draft);
  ember_session_free(target);
  ember_session_free(plain);
}

}  // namespace
}  // namespace ember
