// Prompt state: a restored session continues exactly as the saved one would (logits
// bitwise, sampled tokens with the generator's state), a prefix of it too; a state for
// another model, another shape, a damaged, truncated or too-long one is refused and
// leaves the session as it was, every header byte and the exact size are checked; the C
// API saves and restores the same way.
#include "runtime/chat/prompt_state.h"

#include <cstring>
#include <vector>

#include "ember/ember.h"
#include "gtest/gtest.h"
#include "runtime/generate.h"
#include "testing/testing.h"

namespace ember {
namespace {

std::vector<int32_t> Tokens(size_t n, int32_t offset = 0) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i)
    t[i] = static_cast<int32_t>((i * 37 + 11 + offset) % 300);
  return t;
}

struct Fixture {
  testing::LoadedModel loaded;
  Fixture(uint32_t seed = 1, uint32_t d_model = 32)
      : loaded(testing::LoadSpec(
            testing::TinyModelSpec(d_model, 2, 4, 2, 48, 300, 64, seed))) {}
  Session NewSession(uint32_t context = 64) {
    SessionOptions o;
    o.max_context = context;
    o.max_batch = 8;
    auto s = Session::Create(*loaded.model, o);
    EXPECT_TRUE(s.ok()) << s.status().message();
    return std::move(*s);
  }
};

std::vector<uint8_t> Save(const Session& s, const Sampler* sampler) {
  std::vector<uint8_t> state(PromptStateBytes(s));
  size_t bytes = 0;
  EXPECT_TRUE(SavePromptState(s, sampler, state.data(), state.size(), &bytes).ok());
  EXPECT_EQ(bytes, state.size());
  return state;
}

TEST(PromptStateTest, ARestoredSessionContinuesExactly) {
  Fixture f;
  ASSERT_TRUE(f.loaded.model);
  const std::vector<int32_t> prompt = Tokens(21), more = Tokens(5, 3);
  Session a = f.NewSession();
  ASSERT_TRUE(a.Prefill(prompt.data(), prompt.size()).ok());
  SamplerOptions so;
  so.temperature = 1.0f;
  so.seed = 99;
  Sampler sa(so, 300, a.sampler_scratch());
  int32_t burn;
  ASSERT_TRUE(sa.Sample(a.logits(), &burn).ok());  // the generator moves on
  const std::vector<uint8_t> state = Save(a, &sa);

  Session b = f.NewSession(32);  // another context that holds it
  so.seed = 1;                   // another seed: the state brings the generator's
  Sampler sb(so, 300, b.sampler_scratch());
  ASSERT_TRUE(RestorePromptState(&b, &sb, state.data(), state.size()).ok());
  EXPECT_EQ(b.position(), prompt.size());
  EXPECT_EQ(0, memcmp(b.tokens(), prompt.data(), prompt.size() * sizeof(int32_t)));
  // The logits came along: sampling goes on with no prefill.
  ASSERT_TRUE(b.logits_valid());
  EXPECT_EQ(0, memcmp(a.logits(), b.logits(), 300 * sizeof(float)));
  ASSERT_TRUE(a.Prefill(more.data(), more.size()).ok());
  ASSERT_TRUE(b.Prefill(more.data(), more.size()).ok());
  EXPECT_EQ(0, memcmp(a.logits(), b.logits(), 300 * sizeof(float)))
      << "a restored cache gives other logits";
  for (int i = 0; i < 8; ++i) {
    int32_t ta, tb;
    ASSERT_TRUE(sa.Sample(a.logits(), &ta).ok());
    ASSERT_TRUE(sb.Sample(b.logits(), &tb).ok());
    EXPECT_EQ(ta, tb) << "draw " << i;
  }

  // The first 10 positions only: as if only those had been prefilled.
  Session c = f.NewSession(), d = f.NewSession();
  ASSERT_TRUE(RestorePromptState(&c, nullptr, state.data(), state.size(), 10).ok());
  EXPECT_EQ(c.position(), 10u);
  EXPECT_FALSE(c.logits_valid()) << "the logits are those of position 21";
  ASSERT_TRUE(d.Prefill(prompt.data(), 10).ok());
  ASSERT_TRUE(c.Prefill(more.data(), more.size()).ok());
  ASSERT_TRUE(d.Prefill(more.data(), more.size()).ok());
  EXPECT_EQ(0, memcmp(c.logits(), d.logits(), 300 * sizeof(float)));
}

TEST(PromptStateTest, MismatchesAreErrorsAndLeaveTheSessionAlone) {
  Fixture f, other_weights(2), other_shape(1, 64);
  ASSERT_TRUE(f.loaded.model && other_weights.loaded.model && other_shape.loaded.model);
  EXPECT_EQ(ModelFingerprint(*f.loaded.model), ModelFingerprint(*Fixture().loaded.model));
  EXPECT_NE(ModelFingerprint(*f.loaded.model),
            ModelFingerprint(*other_weights.loaded.model));
  const std::vector<int32_t> prompt = Tokens(21);
  Session a = f.NewSession();
  ASSERT_TRUE(a.Prefill(prompt.data(), prompt.size()).ok());
  const std::vector<uint8_t> state = Save(a, nullptr);

  const auto refused = [&](Session& s, const std::vector<uint8_t>& bytes,
                           const char* what) {
    const std::vector<int32_t> before(s.tokens(), s.tokens() + s.position());
    const size_t position = s.position();
    const Status status = RestorePromptState(&s, nullptr, bytes.data(), bytes.size());
    EXPECT_FALSE(status.ok()) << what;
    EXPECT_NE(std::string(status.message()).find(what), std::string::npos)
        << status.message();
    EXPECT_EQ(s.position(), position) << what;
    EXPECT_TRUE(std::equal(before.begin(), before.end(), s.tokens())) << what;
  };
  Session w = other_weights.NewSession();
  ASSERT_TRUE(w.Prefill(prompt.data(), 3).ok());
  refused(w, state, "another model");
  Session shape = other_shape.NewSession();
  refused(shape, state, "another model");
  Session short_context = f.NewSession(16);
  refused(short_context, state, "context is 16");
  Session b = f.NewSession();
  ASSERT_TRUE(b.Prefill(prompt.data(), 4).ok());
  for (size_t at : {size_t{0}, size_t{20}, size_t{40}, size_t{70}}) {  // header
    std::vector<uint8_t> damaged = state;
    damaged[at] ^= 0x10;
    refused(b, damaged, at == 0 ? "not an ember prompt state" : "header is damaged");
  }
  for (size_t at :
       {kPromptStateHeaderBytes, kPromptStateHeaderBytes + 100, state.size() - 1}) {
    std::vector<uint8_t> damaged = state;
    damaged[at] ^= 0x01;
    refused(b, damaged, "payload checksum");
  }
  refused(b, std::vector<uint8_t>(state.begin(), state.end() - 1), "truncated");
  refused(b, std::vector<uint8_t>(state.begin(), state.begin() + 50), "no header");
  // A buffer too small to save into says how much it needs.
  size_t needed = 0;
  std::vector<uint8_t> small(100);
  EXPECT_EQ(SavePromptState(a, nullptr, small.data(), small.size(), &needed).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(needed, state.size());
}

// Every header byte is checked: the magic, the version, or the checksum, which covers all
// the others (flags, vocabulary size and reserved bytes too). A state is its exact bytes:
// one more at the end is refused like one fewer.
TEST(PromptStateTest, EveryHeaderByteAndTheExactSizeAreChecked) {
  Fixture f;
  ASSERT_TRUE(f.loaded.model);
  const std::vector<int32_t> prompt = Tokens(7);
  Session a = f.NewSession();
  ASSERT_TRUE(a.Prefill(prompt.data(), prompt.size()).ok());
  const std::vector<uint8_t> state = Save(a, nullptr);
  Session b = f.NewSession();
  for (size_t at = 0; at < kPromptStateHeaderBytes; ++at) {
    for (const uint8_t bit : {0x01, 0x80}) {
      std::vector<uint8_t> damaged = state;
      damaged[at] ^= bit;
      PromptStateInfo info;
      const Status peeked = PeekPromptState(damaged.data(), damaged.size(), &info);
      const Status restored =
          RestorePromptState(&b, nullptr, damaged.data(), damaged.size());
      const char* want = at < 8    ? "not an ember prompt state"
                         : at < 16 ? "this build reads version 3"
                                   : "header is damaged (checksum mismatch)";
      EXPECT_NE(std::string(peeked.message()).find(want), std::string::npos)
          << "byte " << at << " ^ " << int{bit} << ": " << peeked.message();
      EXPECT_STREQ(restored.message(), peeked.message()) << "byte " << at;
      EXPECT_EQ(b.position(), 0u) << "byte " << at;
    }
  }
  std::vector<uint8_t> longer = state;
  longer.push_back(0);
  const Status s = RestorePromptState(&b, nullptr, longer.data(), longer.size());
  const std::string want =
      "prompt state has 1 bytes after its end (" + std::to_string(longer.size()) +
      " bytes where the header says " + std::to_string(state.size()) + ")";
  EXPECT_EQ(std::string(s.message()), want);
  EXPECT_EQ(b.position(), 0u);
  const Status exact = RestorePromptState(&b, nullptr, state.data(), state.size());
  ASSERT_TRUE(exact.ok()) << exact.message();
  EXPECT_EQ(b.position(), prompt.size());
}

TEST(PromptStateTest, TheCApiSavesAndRestores) {
  testing::LoadedModel loaded = testing::LoadSpec(testing::TinyModelSpec());
  ASSERT_TRUE(loaded.model);
  ember_model* model = nullptr;
  ASSERT_EQ(ember_model_from_memory(loaded.bytes.data(), loaded.bytes.size(), &model),
            EMBER_OK);
  ember_session *a = nullptr, *b = nullptr;
  ASSERT_EQ(ember_session_create(model, nullptr, nullptr, nullptr, 0, &a), EMBER_OK);
  ASSERT_EQ(ember_session_create(model, nullptr, nullptr, nullptr, 0, &b), EMBER_OK);
  const std::vector<int32_t> prompt = Tokens(9);
  ASSERT_EQ(ember_prefill(a, prompt.data(), prompt.size()), EMBER_OK);
  size_t size = 0;
  EXPECT_EQ(ember_session_save_state(a, nullptr, 0, &size), EMBER_RESOURCE_EXHAUSTED);
  EXPECT_EQ(size, ember_session_state_size(a));
  std::vector<uint8_t> state(size);
  ASSERT_EQ(ember_session_save_state(a, state.data(), state.size(), &size), EMBER_OK);
  ASSERT_EQ(ember_session_restore_state(b, state.data(), state.size()), EMBER_OK);
  EXPECT_EQ(ember_session_position(b), prompt.size());
  ASSERT_EQ(ember_decode(a, 5), EMBER_OK);
  ASSERT_EQ(ember_decode(b, 5), EMBER_OK);
  EXPECT_EQ(0, memcmp(ember_logits(a), ember_logits(b), 300 * sizeof(float)));
  state[kPromptStateHeaderBytes + 3] ^= 1;
  EXPECT_EQ(ember_session_restore_state(b, state.data(), state.size()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ember_last_error()).find("checksum"), std::string::npos);
  ember_session_free(a);
  ember_session_free(b);
  ember_model_free(model);
}

}  // namespace
}  // namespace ember
