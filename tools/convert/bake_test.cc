// Baked prompts: a session over a baked model starts after the prompt with the cache a
// prefill would have made (the next logits bitwise equal), Reset returns there, sessions
// may opt out; the prompt survives a rewrite (SpecFromModel); a state baked from other
// weights is refused when a session starts; the loader refuses a state that disagrees
// with its tokens; chat templates bake their system text; a rewrite keeps every
// tokenizer field.
#include "tools/convert/bake.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/chat/chat.h"
#include "runtime/session.h"
#include "runtime/session_plan.h"
#include "testing/testing.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/template/chat_program.h"

namespace ember::tools {
namespace {

ModelSpec Spec(uint32_t seed = 1) {
  ModelSpec spec = testing::TinyModelSpec(32, 2, 4, 2, 48, 300, 256, seed);
  spec.tokenizer.chat_template =
      "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
      "{% if add_generation_prompt %}[assistant]{% endif %}";
  EXPECT_TRUE(CompileChatTemplate(&spec.tokenizer).ok());
  return spec;
}

TEST(BakeTest, ASessionStartsAfterTheBakedPrompt) {
  ModelSpec spec = Spec();
  BakeRequest request;
  request.text = "The quick brown fox jumps over the lazy dog.";
  ASSERT_TRUE(BakeSpec(request, &spec).ok());
  const std::vector<int32_t> tokens = spec.baked_prompt.tokens;
  ASSERT_GT(tokens.size(), 10u);
  testing::LoadedModel baked = testing::LoadSpec(spec);
  ASSERT_TRUE(baked.model);
  const BakedPromptView& view = baked.model->baked_prompt();
  ASSERT_EQ(view.num_tokens, tokens.size());
  EXPECT_EQ(view.text, request.text);

  auto s = Session::Create(*baked.model, SessionOptions());
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->position(), tokens.size());
  EXPECT_EQ(0, memcmp(s->tokens(), tokens.data(), tokens.size() * sizeof(int32_t)));
  SessionOptions plain;
  plain.baked_prompt = false;
  auto p = Session::Create(*baked.model, plain);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->position(), 0u);
  ASSERT_TRUE(p->Prefill(tokens.data(), tokens.size()).ok());
  const int32_t next[] = {42, 7};
  ASSERT_TRUE(s->Prefill(next, 2).ok());
  ASSERT_TRUE(p->Prefill(next, 2).ok());
  EXPECT_EQ(0, memcmp(s->logits(), p->logits(), 300 * sizeof(float)));
  s->Reset();
  EXPECT_EQ(s->position(), tokens.size());
  ASSERT_TRUE(s->Prefill(next, 2).ok());
  EXPECT_EQ(0, memcmp(s->logits(), p->logits(), 300 * sizeof(float))) << "after Reset";

  // Written again from the loaded model, it keeps the prompt (and the template).
  ModelSpec again;
  ASSERT_TRUE(SpecFromModel(*baked.model, &again).ok());
  testing::LoadedModel copy = testing::LoadSpec(again);
  ASSERT_TRUE(copy.model);
  EXPECT_EQ(copy.model->baked_prompt().num_tokens, tokens.size());
  EXPECT_FALSE(copy.model->chat_template().empty());
  auto c = Session::Create(*copy.model, SessionOptions());
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->Prefill(next, 2).ok());
  EXPECT_EQ(0, memcmp(c->logits(), p->logits(), 300 * sizeof(float)));
}

// A model with a vision tower is written again with it.
TEST(BakeTest, ARewriteKeepsTheVisionTower) {
  ModelSpec spec = testing::TinyModelSpec();
  testing::AddVisionTower(&spec, ImageConnector::kAveragePool);
  const testing::LoadedModel m = testing::LoadSpec(spec);
  ASSERT_TRUE(m.model);
  ModelSpec again;
  ASSERT_TRUE(SpecFromModel(*m.model, &again).ok());
  const testing::LoadedModel copy = testing::LoadSpec(again);
  ASSERT_TRUE(copy.model);
  ASSERT_NE(copy.model->vision(), nullptr);
  EXPECT_EQ(copy.model->vision()->connector, ImageConnector::kAveragePool);
  EXPECT_EQ(copy.model->vision()->image_token_id, m.model->vision()->image_token_id);
  EXPECT_EQ(copy.model->tensors().size(), m.model->tensors().size());
}

// A context too small for the baked prompt gets no arena size (0, as for any options a
// session refuses) and no session; ignoring the prompt, it is a valid plan.
TEST(BakeTest, AContextShorterThanTheBakedPromptIsRefusedWhenPlanned) {
  ModelSpec spec = Spec();
  BakeRequest request;
  request.text = "The quick brown fox jumps over the lazy dog.";
  ASSERT_TRUE(BakeSpec(request, &spec).ok());
  const size_t n = spec.baked_prompt.tokens.size();
  testing::LoadedModel baked = testing::LoadSpec(spec);
  ASSERT_TRUE(baked.model);
  SessionOptions short_context;
  short_context.max_context = static_cast<uint32_t>(n - 1);
  EXPECT_EQ(RequiredArenaBytes(*baked.model, short_context), 0u);
  auto s = Session::Create(*baked.model, short_context);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("the model's baked prompt"),
            std::string::npos)
      << s.status().message();
  short_context.max_context = static_cast<uint32_t>(n);
  EXPECT_GT(RequiredArenaBytes(*baked.model, short_context), 0u);
  short_context.max_context = static_cast<uint32_t>(n - 1);
  short_context.baked_prompt = false;
  const size_t plain = RequiredArenaBytes(*baked.model, short_context);
  EXPECT_GT(plain, 0u);

  // The longest context within a budget: one that holds the prompt, or the reason.
  SessionOptions one = short_context;  // baked prompt ignored
  one.max_context = 1;
  const size_t small = RequiredArenaBytes(*baked.model, one);
  auto without = LongestContextWithin(*baked.model, one, small);
  ASSERT_TRUE(without.ok()) << without.status().message();
  ASSERT_LT(*without, n) << "the budget must be too small for the prompt";
  auto none = LongestContextWithin(*baked.model, SessionOptions(), small);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(std::string(none.status().message()).find("baked prompt"), std::string::npos)
      << none.status().message();
  auto within = LongestContextWithin(*baked.model, SessionOptions(), plain + (1u << 20));
  ASSERT_TRUE(within.ok()) << within.status().message();
  EXPECT_GE(*within, n);
}

TEST(BakeTest, AStateFromOtherWeightsIsRefused) {
  ModelSpec spec = Spec(1), other = Spec(2);
  BakeRequest request;
  request.text = "Hello";
  ASSERT_TRUE(BakeSpec(request, &other).ok());
  spec.baked_prompt = other.baked_prompt;  // same shape, other weights
  testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_TRUE(loaded.model) << "the header agrees with the config";
  auto s = Session::Create(*loaded.model, SessionOptions());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("another model"), std::string::npos)
      << s.status().message();
  // Tokens that disagree with the state: the loader (and so the writer) refuses it.
  spec.baked_prompt.tokens[0] ^= 1;
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(SerializeModel(spec, &bytes).ok());
  testing::AlignedBytes aligned(bytes);
  auto model = Model::FromMemory(aligned.data(), aligned.size());
  ASSERT_FALSE(model.ok());
  EXPECT_NE(std::string(model.status().message()).find("baked prompt"),
            std::string::npos);
}

// A baked system text: a chat with it finds the whole prompt in the cache.
TEST(BakeTest, AChatStartsFromABakedSystemText) {
  ModelSpec spec = Spec();
  BakeRequest request;
  request.text = "You are a helpful assistant.";
  request.chat_system = true;
  ASSERT_TRUE(BakeSpec(request, &spec).ok());
  testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_TRUE(loaded.model);
  auto session = Session::Create(*loaded.model, SessionOptions());
  ASSERT_TRUE(session.ok());
  SamplerOptions greedy;
  greedy.temperature = 0;
  Sampler sampler(greedy, 300, session->sampler_scratch());
  ChatOptions options;
  std::vector<uint64_t> memory(Chat::RequiredBytes(*session, options) / 8 + 1);
  Chat chat;
  ASSERT_TRUE(
      chat.Init(&*session, &sampler, options, memory.data(), memory.size() * 8).ok());
  ASSERT_TRUE(chat.SetSystem(request.text).ok());
  ASSERT_TRUE(chat.Add("user", "Hi").ok());
  ChatTurnStats stats;
  const Status reply = chat.Reply(
      4, nullptr, [](void*, int32_t, std::string_view) { return true; }, nullptr, &stats);
  ASSERT_TRUE(reply.ok()) << reply.message();
  EXPECT_EQ(stats.reused_tokens, spec.baked_prompt.tokens.size());
}

// Written again from a loaded model, a file holds the same bytes.
void ExpectRewriteEqual(const ModelSpec& spec, const char* what) {
  std::vector<uint8_t> bytes, rewritten;
  ASSERT_TRUE(SerializeModel(spec, &bytes).ok());
  testing::AlignedBytes aligned(bytes);
  auto model = Model::FromMemory(aligned.data(), aligned.size());
  ASSERT_TRUE(model.ok()) << model.status().message();
  ModelSpec again;
  ASSERT_TRUE(SpecFromModel(**model, &again).ok());
  ASSERT_TRUE(SerializeModel(again, &rewritten).ok());
  EXPECT_TRUE(bytes == rewritten) << what << ": the rewrite differs";
}

// Every tokenizer field survives a rewrite: Llama 3's (byte-level, its split,
// ignore_merges, added tokens, its template), and a SentencePiece one with NFC, U+2581 as
// a space, a dummy-prefix rule and added tokens with each flag.
TEST(BakeTest, ARewriteKeepsEveryTokenizerField) {
  ModelSpec spec = Spec();
  TokenizerSpec& tok = spec.tokenizer;
  tok.normalizer = Normalization::kNfc;
  tok.metaspace_is_space = true;
  tok.dummy_prefix = DummyPrefix::kEveryUnlessSpace;
  tok.types[260] = TokenType::kControl;
  tok.types[261] = TokenType::kUserDefined;
  tok.added = {{260, "<ctl>", kAddedLstrip | kAddedRstrip},
               {261, "<usr>", kAddedNormalized}};
  ExpectRewriteEqual(spec, "sentencepiece");

  const std::string relative = "hf-tokenizers/llama3";
  if (!testing::HaveModel(relative + "/tokenizer.json")) return;
  TokenizerSpec llama3;
  const Status s =
      ReadHfTokenizer(testing::ModelsDir() + "/" + relative, 0, SpecialTokens(), &llama3);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(CompileChatTemplate(&llama3).ok());
  ASSERT_TRUE(llama3.ignore_merges && !llama3.added.empty());
  ExpectRewriteEqual(testing::ModelSpecAroundTokenizer(llama3), "llama3");
}

}  // namespace
}  // namespace ember::tools
