// The KV cache's types, rings and context shifts together with chat's session state, on
// a Gemma 3-style model (sliding, global, sliding; window 6 of 96): a saved state of
// each cache type restores byte for byte and continues bitwise, a wrapped ring only into
// the same ring and type; Truncate refuses to go back past what a wrapped ring holds; a
// context shift moves the token history with the keys, and Reset clears the shifts; a
// chat whose cached prefix a wrapped ring no longer holds prefills again from the start;
// a baked (f32) prompt restores into rings and into f16 and q8 caches; the C chat stats
// count a reply's context shifts.
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/chat/chat.h"
#include "runtime/chat/prompt_state.h"
#include "runtime/ember.h"
#include "runtime/session.h"
#include "testing/testing.h"
#include "tools/convert/bake.h"
#include "tools/template/chat_program.h"

namespace ember {
namespace {

constexpr size_t kContext = 96, kWindow = 6;

std::vector<int32_t> Tokens(size_t n) { return testing::SpreadTokens(n, 41); }

std::vector<uint8_t> Save(const Session& s) {
  std::vector<uint8_t> state(PromptStateBytes(s));
  size_t bytes = 0;
  const Status saved = SavePromptState(s, nullptr, state.data(), state.size(), &bytes);
  EXPECT_TRUE(saved.ok()) << saved.message();
  EXPECT_EQ(bytes, state.size());
  return state;
}

bool Contains(const Status& s, const char* fragment) {
  return std::string(s.message()).find(fragment) != std::string::npos;
}

class KvStateTest : public ::testing::TestWithParam<KvType> {
 protected:
  void SetUp() override {
    m_ = testing::LoadSpec(testing::FamiliesModelSpec(kWindow, kContext));
    ASSERT_NE(m_.model, nullptr);
    vocab_ = m_.model->config().vocab_size;
  }
  // Steps of max_batch tokens: 4 keeps a ring of 9 per sliding layer, kContext none.
  Session Make(uint32_t max_batch, KvType type, bool shift = false) {
    auto s = Session::Create(
        *m_.model, testing::FamiliesSessionOptions(kContext, max_batch, type, shift));
    EXPECT_TRUE(s.ok()) << s.status().message();
    return std::move(*s);
  }
  // Decodes tokens[from, to) in both sessions, their logits bitwise equal at each.
  void ExpectSameDecoding(Session& a, Session& b, const std::vector<int32_t>& tokens,
                          size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      ASSERT_TRUE(a.Decode(tokens[i]).ok());
      ASSERT_TRUE(b.Decode(tokens[i]).ok());
      ASSERT_EQ(0, memcmp(a.logits(), b.logits(), vocab_ * sizeof(float)))
          << "token " << i << ", " << KvTypeName(GetParam()) << " cache";
    }
  }
  testing::LoadedModel m_;
  size_t vocab_ = 0;
};

// A ring that wrapped (40 positions in rings of 9) saved with the cache's own type:
// restored into a session with the same rings, the cache is the same bytes and the
// logits go on bitwise; into a session of another type, or without the rings, it is
// refused and the session stays as it was.
TEST_P(KvStateTest, AWrappedRingRestoresExactlyIntoTheSameRingOnly) {
  const KvType type = GetParam();
  const std::vector<int32_t> tokens = Tokens(60);
  Session a = Make(4, type);
  ASSERT_GT(a.kv_cache().layers[0].ring, 0u);
  ASSERT_TRUE(a.Prefill(tokens.data(), 40).ok());
  const std::vector<uint8_t> state = Save(a);
  PromptStateInfo info;
  ASSERT_TRUE(PeekPromptState(state.data(), state.size(), &info).ok());
  EXPECT_EQ(info.kv_type, static_cast<uint32_t>(type));
  EXPECT_EQ(info.row_bytes,
            KvRowBytes(type, m_.model->config().n_kv_heads, m_.model->config().head_dim));

  Session b = Make(4, type);
  const Status restored = RestorePromptState(&b, nullptr, state.data(), state.size());
  ASSERT_TRUE(restored.ok()) << restored.message();
  EXPECT_EQ(b.position(), 40u);
  ASSERT_EQ(0, memcmp(a.logits(), b.logits(), vocab_ * sizeof(float)));
  const std::vector<float> at40(a.logits(), a.logits() + vocab_);
  EXPECT_EQ(Save(b), state);  // the same bytes: cache, ring rotation, tokens
  ExpectSameDecoding(a, b, tokens, 40, 60);

  // Another cache type: refused, naming the type the state needs.
  const KvType other = type == KvType::kF32 ? KvType::kQ8 : KvType::kF32;
  Session c = Make(4, other);
  const Status typed = RestorePromptState(&c, nullptr, state.data(), state.size());
  EXPECT_EQ(typed.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(typed, "needs kv type")) << typed.message();
  EXPECT_TRUE(Contains(typed, KvTypeName(type))) << typed.message();
  EXPECT_EQ(c.position(), 0u);

  // No rings (steps as long as the context): the wrapped ring cannot be laid out there.
  Session d = Make(kContext, type);
  const Status rings = RestorePromptState(&d, nullptr, state.data(), state.size());
  EXPECT_EQ(rings.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(rings, "ring")) << rings.message();
  EXPECT_EQ(d.position(), 0u);

  // A prefix: back to 36 the rings still hold what a pass reads (from 31); to 20 not.
  Session e = Make(4, type);
  ASSERT_TRUE(RestorePromptState(&e, nullptr, state.data(), state.size(), 36).ok());
  ASSERT_TRUE(e.Prefill(tokens.data() + 36, 4).ok());
  EXPECT_EQ(0, memcmp(at40.data(), e.logits(), vocab_ * sizeof(float)));
  Session f = Make(4, type);
  const Status prefix = RestorePromptState(&f, nullptr, state.data(), state.size(), 20);
  EXPECT_EQ(prefix.code(), StatusCode::kOutOfRange) << prefix.message();
  EXPECT_EQ(f.position(), 0u);
}

// A state whose slots are its positions (no ring, or one not yet wrapped) restores into
// any layout: a full cache's into rings, and an unwrapped ring's into a full cache, each
// continuing bitwise as the session it came from.
TEST_P(KvStateTest, AStateOfPositionsRestoresIntoAnyLayout) {
  const KvType type = GetParam();
  const std::vector<int32_t> tokens = Tokens(70);
  Session full = Make(kContext, type);
  ASSERT_TRUE(full.Prefill(tokens.data(), 40).ok());
  Session ring = Make(4, type);
  const std::vector<uint8_t> full_state = Save(full);
  ASSERT_TRUE(
      RestorePromptState(&ring, nullptr, full_state.data(), full_state.size()).ok());
  ASSERT_EQ(0, memcmp(full.logits(), ring.logits(), vocab_ * sizeof(float)));
  ExpectSameDecoding(full, ring, tokens, 40, 55);

  Session short_ring = Make(4, type);
  ASSERT_TRUE(short_ring.Prefill(tokens.data(), 8).ok());  // 8 of a ring of 9
  Session other_full = Make(kContext, type);
  const std::vector<uint8_t> ring_state = Save(short_ring);
  ASSERT_TRUE(
      RestorePromptState(&other_full, nullptr, ring_state.data(), ring_state.size())
          .ok());
  ExpectSameDecoding(short_ring, other_full, tokens, 8, 30);
}

// Truncate (chat's cached-prefix reuse) on a wrapped ring: back to where the ring still
// holds what a pass reads, and the next prefill gives the logits the first one did; past
// that, OutOfRange and the session unchanged; Reset and a prefill from the start work.
TEST_P(KvStateTest, TruncateRefusesToGoBackPastAWrappedRing) {
  const std::vector<int32_t> tokens = Tokens(40);
  Session s = Make(4, GetParam());
  ASSERT_TRUE(s.Prefill(tokens.data(), 40).ok());
  const std::vector<float> logits(s.logits(), s.logits() + vocab_);
  const Status refused = s.Truncate(20);
  EXPECT_EQ(refused.code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(Contains(refused, "ring")) << refused.message();
  EXPECT_EQ(s.position(), 40u);
  EXPECT_TRUE(s.logits_valid());
  ASSERT_TRUE(s.Truncate(36).ok());
  ASSERT_TRUE(s.Prefill(tokens.data() + 36, 4).ok());
  EXPECT_EQ(0, memcmp(logits.data(), s.logits(), vocab_ * sizeof(float)));
  ASSERT_TRUE(s.Truncate(0).ok());  // nothing read: always allowed
  ASSERT_TRUE(s.Prefill(tokens.data(), 40).ok());
  EXPECT_EQ(0, memcmp(logits.data(), s.logits(), vocab_ * sizeof(float)));
}

// A context shift moves the tokens of the kept positions down with their keys (what
// chat's prefix match and the penalties read), and Reset clears the shifts.
TEST_P(KvStateTest, AContextShiftMovesTheTokenHistory) {
  const std::vector<int32_t> tokens = Tokens(60);
  Session s = Make(4, GetParam(), /*shift=*/true);
  ASSERT_TRUE(s.Prefill(tokens.data(), 50).ok());
  ASSERT_TRUE(s.ShiftContext(4, 20).ok());
  ASSERT_EQ(s.position(), 30u);
  EXPECT_EQ(s.shifts(), 1u);
  std::vector<int32_t> want(tokens.begin(), tokens.begin() + 4);
  want.insert(want.end(), tokens.begin() + 24, tokens.begin() + 50);
  EXPECT_EQ(std::vector<int32_t>(s.tokens(), s.tokens() + 30), want);
  // Generation goes on from there: the next token lands after them.
  ASSERT_TRUE(s.Decode(tokens[50]).ok());
  EXPECT_EQ(s.tokens()[30], tokens[50]);
  s.Reset();
  EXPECT_EQ(s.shifts(), 0u);
  EXPECT_EQ(s.position(), 0u);
}

// The families model with a chat template (and, with `baked`, a baked system text).
ModelSpec ChatSpec(const char* baked) {
  ModelSpec spec = testing::FamiliesModelSpec(kWindow, kContext);
  spec.tokenizer.chat_template =
      "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
      "{% if add_generation_prompt %}[assistant]{% endif %}";
  EXPECT_TRUE(tools::CompileChatTemplate(&spec.tokenizer).ok());
  if (baked) {
    tools::BakeRequest request;
    request.text = baked;
    request.chat_system = true;
    EXPECT_TRUE(tools::BakeSpec(request, &spec).ok());
  }
  return spec;
}

SamplerOptions Greedy() {
  SamplerOptions o;
  o.temperature = 0.0f;
  return o;
}

bool Collect(void* user, int32_t, std::string_view text) {
  static_cast<std::string*>(user)->append(text);
  return true;
}

// One greedy chat over a session: SetSystem, then Say each user turn in order.
struct GreedyChat {
  Session* session;
  Sampler sampler;
  std::vector<uint64_t> memory;
  Chat chat;
  explicit GreedyChat(Session* s)
      : session(s),
        sampler(Greedy(), s->model().config().vocab_size, s->sampler_scratch()) {
    memory.resize(Chat::RequiredBytes(*s, ChatOptions()) / 8 + 1);
    EXPECT_TRUE(
        chat.Init(s, &sampler, ChatOptions(), memory.data(), memory.size() * 8).ok());
  }
  std::string Say(const char* text, ChatTurnStats* stats) {
    std::string reply;
    EXPECT_TRUE(chat.Add("user", text).ok());
    const Status s = chat.Reply(12, nullptr, &Collect, &reply, stats);
    EXPECT_TRUE(s.ok()) << s.message();
    return reply;
  }
};

// A conversation long enough to wrap the rings, then a reset of its turns: the cache
// still matches only the system text, which a wrapped ring no longer holds, so the
// chat prefills again from the start and replies as a fresh chat does.
TEST_P(KvStateTest, AChatPrefillsAgainWhenAWrappedRingLostItsPrefix) {
  const testing::LoadedModel m = testing::LoadSpec(ChatSpec(nullptr));
  ASSERT_NE(m.model, nullptr);
  SessionOptions options =
      testing::FamiliesSessionOptions(kContext, 4, GetParam(), /*shift=*/false);
  auto s = Session::Create(*m.model, options);
  auto fresh = Session::Create(*m.model, options);
  ASSERT_TRUE(s.ok() && fresh.ok());
  GreedyChat a(&*s), b(&*fresh);
  ASSERT_TRUE(a.chat.SetSystem("Be brief.").ok());
  ASSERT_TRUE(b.chat.SetSystem("Be brief.").ok());
  ChatTurnStats stats;
  a.Say("Tell me a story about a cat and a dog.", &stats);
  ASSERT_GT(s->position(), s->kv_cache().layers[0].ring + 10) << "the rings wrapped";
  a.chat.Reset();
  const std::string again = a.Say("Hi", &stats);
  EXPECT_EQ(stats.reused_tokens, 0u);
  EXPECT_EQ(stats.prefill_tokens, stats.prompt_tokens);
  ChatTurnStats fresh_stats;
  EXPECT_EQ(again, b.Say("Hi", &fresh_stats));
  EXPECT_EQ(stats.generated, fresh_stats.generated);
}

// A baked system text (baked in one step: no ring, so its state holds every position)
// restores into a session with rings and chats as one that prefilled it. The baked state
// is f32; an f16 or q8 session stores its rows as that cache stores the rows a forward
// pass computes (each row exactly what StoreRow makes of the f32 row), with the baked
// logits, and chats from there.
TEST_P(KvStateTest, ABakedPromptRestoresIntoRingsAndIntoEveryKvType) {
  const testing::LoadedModel m =
      testing::LoadSpec(ChatSpec("You are a helpful assistant who answers briefly."));
  ASSERT_NE(m.model, nullptr);
  const size_t baked = m.model->baked_prompt().num_tokens;
  ASSERT_GT(baked, 10u);
  SessionOptions options =
      testing::FamiliesSessionOptions(kContext, 4, GetParam(), /*shift=*/false);
  auto s = Session::Create(*m.model, options);
  ASSERT_TRUE(s.ok()) << s.status().message();
  if (GetParam() != KvType::kF32) {
    EXPECT_EQ(s->position(), baked);
    SessionOptions f32_options = options;
    f32_options.kv_type = KvType::kF32;
    auto f = Session::Create(*m.model, f32_options);  // the baked rows as saved
    options.baked_prompt = false;
    auto ref = Session::Create(*m.model, options);  // where StoreRow converts them
    ASSERT_TRUE(f.ok() && ref.ok());
    const KvCache& kv = s->kv_cache();
    const size_t kv_dim = m.model->config().kv_dim();
    std::vector<float> row(kv_dim), want(kv_dim), got(kv_dim);
    size_t compared = 0;
    for (size_t layer = 0; layer < m.model->config().n_layers; ++layer) {
      const KvLayer& l = kv.layers[layer];
      for (KvSide side : {kKeys, kValues}) {
        for (size_t p = 0; p < baked; ++p) {
          if (l.ring != 0 && p >= l.sink && p + l.ring < baked) continue;  // not held
          f->kv_cache().Load(layer, side, p, row.data());
          ref->kv_cache().StoreRow(ref->kernels(), layer, side, p, row.data());
          ref->kv_cache().Load(layer, side, p, want.data());
          kv.Load(layer, side, p, got.data());
          ASSERT_EQ(0, memcmp(want.data(), got.data(), kv_dim * sizeof(float)))
              << "layer " << layer << " side " << side << " position " << p;
          ++compared;
        }
      }
    }
    EXPECT_GT(compared, baked);
    EXPECT_EQ(0, memcmp(s->logits(), f->logits(), m.model->config().vocab_size * 4));
    GreedyChat a(&*s);
    const char* system = "You are a helpful assistant who answers briefly.";
    ASSERT_TRUE(a.chat.SetSystem(system).ok());
    ChatTurnStats sa;
    a.Say("Hi", &sa);
    EXPECT_EQ(sa.reused_tokens, baked);
    EXPECT_GT(sa.generated, 0u);
    return;
  }
  ASSERT_GT(s->kv_cache().layers[0].ring, 0u);
  EXPECT_EQ(s->position(), baked);
  options.baked_prompt = false;
  auto plain = Session::Create(*m.model, options);
  ASSERT_TRUE(plain.ok());
  GreedyChat a(&*s), b(&*plain);
  ASSERT_TRUE(a.chat.SetSystem("You are a helpful assistant who answers briefly.").ok());
  ASSERT_TRUE(b.chat.SetSystem("You are a helpful assistant who answers briefly.").ok());
  ChatTurnStats sa, sb;
  EXPECT_EQ(a.Say("Hi", &sa), b.Say("Hi", &sb));
  EXPECT_EQ(sa.reused_tokens, baked);
  EXPECT_EQ(sb.reused_tokens, 0u);
  // Reset returns to the baked prompt.
  s->Reset();
  EXPECT_EQ(s->position(), baked);
}

int CountToken(void* user, int32_t, const char*, size_t) {
  ++*static_cast<size_t*>(user);
  return 1;
}

// ember_chat_last_stats reports the context shifts a reply made (a reply past a context
// of 40 with --context-shift makes at least one; 18 positions leave at each), and writes
// no field past an older struct's size.
TEST(KvStateCApiTest, ChatStatsCountContextShifts) {
  const testing::LoadedModel m = testing::LoadSpec(ChatSpec(nullptr));
  ember_model* model = nullptr;
  ASSERT_EQ(ember_model_from_memory(m.bytes.data(), m.bytes.size(), &model), EMBER_OK);
  ember_session_options o;
  ember_session_options_default(&o);
  o.max_context = 40;
  o.context_shift = 1;
  o.context_keep = 4;
  ember_session* session = nullptr;
  ASSERT_EQ(ember_session_create(model, &o, nullptr, nullptr, 0, &session), EMBER_OK)
      << ember_last_error();
  ember_sampler_options greedy;
  ember_sampler_options_default(&greedy);
  greedy.temperature = 0.0f;
  ASSERT_EQ(ember_session_set_sampler(session, &greedy), EMBER_OK);
  ember_chat* chat = nullptr;
  ASSERT_EQ(ember_chat_create(session, nullptr, &chat), EMBER_OK) << ember_last_error();
  ASSERT_EQ(ember_chat_add(chat, "user", "Hi", 2), EMBER_OK);
  size_t generated = 0, called = 0;
  ASSERT_EQ(ember_chat_generate(chat, 100, &CountToken, &called, &generated), EMBER_OK)
      << ember_last_error();
  ember_chat_stats stats;
  memset(&stats, 0, sizeof(stats));
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(ember_chat_last_stats(chat, &stats), EMBER_OK);
  EXPECT_EQ(stats.generated_tokens, generated);
  const size_t total = stats.prompt_tokens + generated;
  ASSERT_GT(total, 40u) << "the reply must run past the context";
  EXPECT_GE(stats.context_shifts, 1u);
  EXPECT_LE(stats.context_shifts, (total - 40) / 18 + 1);
  ember_chat_stats older;
  memset(&older, 0xAB, sizeof(older));
  older.struct_size = offsetof(ember_chat_stats, context_shifts);
  ASSERT_EQ(ember_chat_last_stats(chat, &older), EMBER_OK);
  EXPECT_EQ(older.generated_tokens, generated);
  EXPECT_EQ(older.context_shifts, 0xABABABABu);
  ember_chat_free(chat);
  ember_session_free(session);
  ember_model_free(model);
}

INSTANTIATE_TEST_SUITE_P(Types, KvStateTest,
                         ::testing::Values(KvType::kF32, KvType::kF16, KvType::kQ8),
                         [](const ::testing::TestParamInfo<KvType>& info) {
                           return std::string(KvTypeName(info.param));
                         });

}  // namespace
}  // namespace ember
