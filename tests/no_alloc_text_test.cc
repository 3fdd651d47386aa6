// The no-allocation promise for the text around generation (no_alloc_test.cc has the
// forward pass, its weights, caches and threads): a chat's turns and template renders,
// saving and restoring a session's state, encoding with the tokenizers of tokenizer.json
// (WordPiece too), and generation under a grammar (JSON; masks over the 128k Llama 3
// vocabulary too) and under a lazy (tool-call) grammar, each in the session's arena, make
// zero heap allocations once set up (every allocator is interposed and counted).
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/chat/chat.h"
#include "runtime/chat/prompt_state.h"
#include "runtime/generate.h"
#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/grammar_constraint.h"
#include "runtime/grammar/lazy_constraint.h"
#include "runtime/model/model.h"
#include "runtime/model/tensor.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "testing/alloc_count.h"
#include "testing/testing.h"
#include "tools/convert/dtype_policy.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tests/wordpiece_tokenizer_files.h"
#include "tools/template/chat_program.h"

namespace ember {
namespace {

using testing::Append;
using testing::FixedText;

// A chat's turns (render, tokenize, reuse the cache, generate), a template render, and
// saving and restoring a session's state: no heap either.
TEST(NoAllocTest, ChatTemplatesAndSavedStateMakeNoHeapAllocations) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  ModelSpec spec = testing::TinyModelSpec(64, 2, 4, 2, 96, 300, 256, 3);
  spec.tokenizer.chat_template =
      "{% for m in messages %}{{ '<' ~ m.role ~ '>' ~ m.content | trim }}\n"
      "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}";
  ASSERT_TRUE(tools::CompileChatTemplate(&spec.tokenizer).ok());
  testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_TRUE(loaded.model);
  SessionOptions options;
  options.max_batch = 16;
  auto session = Session::Create(*loaded.model, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  SamplerOptions sampling;
  sampling.seed = 3;
  sampling.repeat_penalty = 1.2f;
  Sampler sampler(sampling, 300, session->sampler_scratch());
  ChatOptions chat_options;
  std::vector<uint64_t> memory((Chat::RequiredBytes(*session, chat_options) + 7) / 8);
  Chat chat;
  ASSERT_TRUE(
      chat.Init(&*session, &sampler, chat_options, memory.data(), memory.size() * 8)
          .ok());
  std::vector<uint8_t> state(PromptStateBytes(*session) + 1000000);
  std::vector<char> rendered(65536);
  FixedText text;

  testing::AllocCounterArm();
  Status s = chat.SetSystem("You are terse.");
  ChatTurnStats stats;
  if (s.ok()) s = chat.Add("user", "Hello there, how are you?");
  if (s.ok()) s = chat.Reply(12, nullptr, &Append, &text, &stats);
  if (s.ok()) s = chat.Add("user", "And then?");
  if (s.ok()) s = chat.Reply(12, nullptr, &Append, &text, &stats);
  const size_t reused = stats.reused_tokens;
  size_t length = 0, bytes = 0;
  if (s.ok()) {
    s = loaded.model->chat_template().Render(&chat.message(0), chat.num_messages(),
                                             ChatTemplateOptions(), rendered.data(),
                                             rendered.size(), &length);
  }
  if (s.ok()) s = SavePromptState(*session, &sampler, state.data(), state.size(), &bytes);
  session->Reset();
  if (s.ok()) s = RestorePromptState(&*session, &sampler, state.data(), bytes);
  const uint64_t allocations = testing::AllocCounterDisarm();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_GT(reused, 0u) << "the second turn reused no cache";
  EXPECT_GT(length, 0u);
  EXPECT_EQ(allocations, 0u);
}

// Encoding with the tokenizers of tokenizer.json (Llama 3's split with ignore_merges,
// Qwen3's NFC, Gemma 3's SentencePiece by rank and its thousands of added tokens), with
// and without special-token parsing, and decoding, allocate nothing either: all work is
// in the caller's buffer of EncodeCapacity ids.
TEST(NoAllocTest, HfTokenizersEncodeWithoutAllocating) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  std::string text =
      "<|im_start|>user\nCafe\xCC\x81 \xE2\x84\xAB 12345 I'M \xE4\xBD\xA0\xE5\xA5\xBD"
      " \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD<start_of_turn>\xE2\x96\x81\xE2\x96\x81"
      "<|eot_id|>\n\n\t  x<|im_end|>";
  for (int i = 0; i < 6; ++i) text += text;  // 64 copies
  for (const char* name : {"llama3", "qwen3", "gemma3"}) {
    if (!testing::HaveModel(std::string("hf-tokenizers/") + name + "/tokenizer.json")) {
      return;
    }
    LoadedTokenizer loaded;
    const Status s =
        tools::LoadHfTokenizer(testing::ModelsDir() + "/hf-tokenizers/" + name, &loaded);
    ASSERT_TRUE(s.ok()) << s.message();
    const Tokenizer& tok = loaded.tokenizer;
    std::vector<int32_t> ids(tok.EncodeCapacity(text.size()));
    size_t total = 0, decoded = 0;
    bool ok = true;
    testing::AllocCounterArm();
    for (bool parse_special : {false, true}) {
      EncodeOptions options;
      options.parse_special = parse_special;
      options.add_bos = tok.bos_id() >= 0;
      size_t n = 0;
      ok &= tok.Encode(text, options, ids.data(), ids.size(), &n).ok();
      for (size_t i = 0; i < n; ++i)
        decoded += tok.Decode(i ? ids[i - 1] : -1, ids[i]).size();
      total += n;
    }
    const uint64_t allocations = testing::AllocCounterDisarm();
    EXPECT_TRUE(ok) << name;
    EXPECT_GT(total, 0u);
    EXPECT_GT(decoded, 0u);
    EXPECT_EQ(allocations, 0u) << name;
  }
}

// WordPiece (a generated BERT tokenizer: tests/wordpiece_tokenizer_files.h): BERT's
// normalizer, pre-tokenizer and word pieces run in the caller's buffer, [CLS] and [SEP]
// included, and decoding returns views.
TEST(NoAllocTest, WordPieceEncodesWithoutAllocating) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  testing::ScratchDir dir("no_alloc_wordpiece");
  ASSERT_TRUE(
      testing::WriteWordPieceTokenizer(testing::WordPieceVariant(), dir.path()).ok());
  LoadedTokenizer loaded;
  const Status s = tools::LoadHfTokenizer(dir.path(), &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  const Tokenizer& tok = loaded.tokenizer;
  std::string text;
  for (const std::string& t : testing::WordPieceCorpus()) text += t + " [SEP] ";
  std::vector<int32_t> ids(tok.EncodeCapacity(text.size()));
  size_t total = 0, decoded = 0;
  bool ok = true;
  testing::AllocCounterArm();
  for (bool parse_special : {false, true}) {
    EncodeOptions options;
    options.parse_special = parse_special;
    options.add_bos = true;
    size_t n = 0;
    ok &= tok.Encode(text, options, ids.data(), ids.size(), &n).ok();
    for (size_t i = 0; i < n; ++i) {
      decoded += tok.Decode(i ? ids[i - 1] : -1, ids[i]).size();
    }
    total += n;
  }
  const uint64_t allocations = testing::AllocCounterDisarm();
  EXPECT_TRUE(ok);
  EXPECT_GT(total, 1000u);
  EXPECT_GT(decoded, 1000u);
  EXPECT_EQ(allocations, 0u);
}

// Under a grammar: once it is set (compiled, its tables built), each step's mask, the
// draw among the allowed tokens and the grammar's advance allocate nothing, on a model's
// generation and on the masks of the Llama 3 vocabulary (whose dependent tokens are
// walked at each step).
TEST(NoAllocTest, GenerationUnderAGrammarMakesNoHeapAllocations) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  std::vector<uint32_t> words;
  ASSERT_TRUE(grammar::CompileGbnf(grammar::kJsonGrammar, "root", &words).ok());
  {
    ModelSpec spec = testing::TinyModelSpec(64, 2, 4, 2, 96, 300, 128, 3);
    ASSERT_TRUE(tools::ChooseDTypes(DType::kF32, {}, &spec).ok());
    const testing::LoadedModel loaded = testing::LoadSpec(spec);
    ASSERT_NE(loaded.model, nullptr);
    const Model& model = *loaded.model;
    // In the session's arena, planned with its bytes, as the C API places it.
    grammar::GrammarConstraint constraint;
    ASSERT_TRUE(constraint.Build(words, model.tokenizer()).ok());
    SessionOptions options;
    options.max_context = 128;
    options.grammar_bytes = constraint.bytes().total;
    auto session = Session::Create(model, options, nullptr);
    ASSERT_TRUE(session.ok()) << session.status().message();
    ASSERT_TRUE(constraint.Place(session->grammar_memory(), session->grammar_bytes()).ok());
    const uint32_t* mask = nullptr;
    ASSERT_TRUE(constraint.Allowed(&mask).ok());
    const auto* region = static_cast<const uint8_t*>(session->grammar_memory());
    const auto* at = reinterpret_cast<const uint8_t*>(mask);
    EXPECT_TRUE(at >= region && at < region + session->grammar_bytes());
    SamplerOptions sampling;
    sampling.seed = 3;
    Sampler sampler(sampling, model.config().vocab_size, session->sampler_scratch());
    GenerateOptions generate;
    generate.max_new = 60;
    const TokenConstraint token_constraint = constraint.AsTokenConstraint();
    generate.constraint = &token_constraint;
    FixedText text;
    GenerateResult result;
    const int32_t bos = model.tokenizer().bos_id();
    testing::AllocCounterArm();
    Status s = Generate(*session, sampler, &bos, 1, generate, &Append, &text, &result);
    if (s.ok()) {
      session->Reset();
      s = constraint.Reset();
    }
    if (s.ok())
      s = Generate(*session, sampler, &bos, 1, generate, &Append, &text, &result);
    const uint64_t allocations = testing::AllocCounterDisarm();
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_GT(text.tokens, 0u);
    EXPECT_EQ(allocations, 0u);
  }
  if (!testing::HaveModel("hf-tokenizers/llama3/tokenizer.json")) return;
  LoadedTokenizer loaded;
  ASSERT_TRUE(
      tools::LoadHfTokenizer(testing::ModelsDir() + "/hf-tokenizers/llama3", &loaded)
          .ok());
  const Tokenizer& tok = loaded.tokenizer;
  // Placed in a caller's region of exactly the bytes it needs.
  grammar::GrammarConstraint constraint;
  ASSERT_TRUE(constraint.Build(words, tok).ok());
  std::vector<uint64_t> region((constraint.bytes().total + 15) / 8);
  uint64_t* aligned =
      region.data() + (reinterpret_cast<uintptr_t>(region.data()) % 16) / 8;
  ASSERT_TRUE(constraint.Place(aligned, constraint.bytes().total).ok());
  // 40 steps, each taking the allowed token of the lowest id past a moving offset (so
  // that the walk goes into strings, numbers, arrays and objects).
  size_t steps = 0;
  Status s;
  int32_t previous = tok.vocab_size();
  testing::AllocCounterArm();
  for (uint32_t step = 0; step < 40 && s.ok(); ++step, ++steps) {
    const uint32_t* bits = nullptr;
    s = constraint.Allowed(&bits);
    if (!s.ok()) break;
    int32_t pick = -1;
    for (uint32_t k = 0; k < tok.vocab_size() && pick < 0; ++k) {
      const uint32_t id = (k + step * 7919) % tok.vocab_size();
      if (((bits[id >> 5] >> (id & 31)) & 1) && !tok.IsStop(static_cast<int32_t>(id))) {
        pick = static_cast<int32_t>(id);
      }
    }
    if (pick < 0) break;  // only the end of text is left
    s = constraint.Accept(pick, tok.Decode(previous, pick));
    previous = pick;
  }
  const uint64_t allocations = testing::AllocCounterDisarm();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_GE(steps, 10u);
  EXPECT_EQ(allocations, 0u);
}

// A lazy grammar (a tool call's) in the session's arena: free text, then, once the
// trigger is in the text, tokens under the grammar until its sentence is whole: no heap.
TEST(NoAllocTest, GenerationUnderALazyGrammarMakesNoHeapAllocations) {
#ifdef EMBER_ALLOC_COUNT_OFF
  GTEST_SKIP() << "allocation counter off (a sanitizer build keeps its allocator)";
#endif
  std::vector<uint32_t> words;
  ASSERT_TRUE(grammar::CompileGbnf(grammar::kJsonGrammar, "root", &words).ok());
  ModelSpec spec = testing::TinyModelSpec(64, 2, 4, 2, 96, 300, 128, 3);
  ASSERT_TRUE(tools::ChooseDTypes(DType::kF32, {}, &spec).ok());
  const testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_NE(loaded.model, nullptr);
  const Model& model = *loaded.model;
  const Tokenizer& tok = model.tokenizer();
  grammar::GrammarConstraint inner;
  ASSERT_TRUE(inner.Build(words, tok).ok());
  SessionOptions options;
  options.max_context = 128;
  options.grammar_bytes = inner.bytes().total;
  auto session = Session::Create(model, options, nullptr);
  ASSERT_TRUE(session.ok()) << session.status().message();
  ASSERT_NE(session->grammar_memory(), nullptr);
  ASSERT_TRUE(inner.Place(session->grammar_memory(), session->grammar_bytes()).ok());
  // The trigger: a token's bytes (one that the model is then made to say).
  int32_t trigger = -1;
  std::string_view trigger_text;
  for (uint32_t id = 0; id < tok.vocab_size() && trigger < 0; ++id) {
    const std::string_view t =
        tok.Decode(static_cast<int32_t>(tok.vocab_size()), static_cast<int32_t>(id));
    if (!t.empty() && t.size() <= 8 && t.find_first_of("{}[]\" \t\n\r") == t.npos) {
      trigger = static_cast<int32_t>(id);
      trigger_text = t;
    }
  }
  ASSERT_GE(trigger, 0);
  grammar::LazyTrigger lazy_trigger;
  lazy_trigger.text = trigger_text;
  grammar::LazyConstraint lazy;
  ASSERT_TRUE(lazy.Init(&inner, lazy_trigger, tok).ok());
  SamplerOptions sampling;
  sampling.seed = 5;
  Sampler sampler(sampling, model.config().vocab_size, session->sampler_scratch());
  GenerateOptions generate;
  generate.max_new = 60;
  const TokenConstraint token_constraint = lazy.AsTokenConstraint();
  generate.constraint = &token_constraint;
  FixedText text;
  GenerateResult result;
  const int32_t prompt[2] = {tok.bos_id(), trigger};
  testing::AllocCounterArm();
  // The prompt's last token opens the grammar (as a model saying it would).
  Status s = lazy.Accept(trigger, trigger_text);
  const bool opened = lazy.active();
  if (s.ok())
    s = Generate(*session, sampler, prompt, 2, generate, &Append, &text, &result);
  const uint64_t allocations = testing::AllocCounterDisarm();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(opened);
  EXPECT_GE(lazy.opened(), 1u);
  EXPECT_GT(text.tokens, 0u);
  EXPECT_EQ(allocations, 0u);
}

}  // namespace
}  // namespace ember
