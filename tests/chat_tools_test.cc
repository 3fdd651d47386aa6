// Tool calls end to end on Qwen3's and Llama 3's real tokenizers: the lazy grammar of a
// call (runtime/grammar/tool_grammar.h over runtime/grammar/lazy_constraint.h) opens at
// the family's trigger, holds every token to the call's JSON and its function's
// parameter schema, and lets go where the call ends; a chat with tools (Qwen3's own
// template, compiled here) parses a reply's call, stores it as the assistant's
// tool_calls, answers it with a tool turn and renders both back.
#include <string>
#include <vector>

#include "ember/ember.h"
#include "gtest/gtest.h"
#include "runtime/chat/chat.h"
#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/lazy_constraint.h"
#include "runtime/grammar/tool_grammar.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "testing/testing.h"
#include "tests/chat_tools_model.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/template/chat_program.h"
#include "tools/util/json_util.h"

namespace ember {
namespace {

struct LazyTools {
  LoadedTokenizer loaded;
  std::vector<grammar::ToolDefinition> tools;
  grammar::GrammarConstraint grammar;
  grammar::LazyConstraint lazy;
};

void MakeLazy(const char* tokenizer, ToolCallFormat format, LazyTools* s) {
  if (s->loaded.tokenizer.vocab_size() > 0) return;  // set up by an earlier test
  ASSERT_TRUE(tools::LoadHfTokenizer(testing::ModelsDir() + "/hf-tokenizers/" + tokenizer,
                                     &s->loaded)
                  .ok());
  ASSERT_TRUE(
      grammar::ReadTools(testing::kWeatherTools, "kWeatherTools", &s->tools).ok());
  std::string gbnf;
  const Status made = grammar::ToolCallGrammar(s->tools, format, &gbnf);
  ASSERT_TRUE(made.ok()) << made.message();
  std::vector<uint32_t> words;
  const Status compiled = grammar::CompileGbnf(gbnf, "root", &words);
  ASSERT_TRUE(compiled.ok()) << compiled.message() << "\n" << gbnf;
  ASSERT_TRUE(s->grammar.Init(words, s->loaded.tokenizer).ok());
  const ToolCallSyntax syntax = SyntaxOf(format);
  const grammar::LazyTrigger trigger = grammar::ToolCallTrigger(syntax);
  ASSERT_TRUE(s->lazy.Init(&s->grammar, trigger, s->loaded.tokenizer).ok());
}

// Feeds allowed tokens (the lowest id past an offset that moves each step, so that the
// walk reaches strings, enums and numbers) until the grammar lets go; returns the text.
std::string WalkToTheEnd(const Tokenizer& tok, grammar::LazyConstraint* lazy,
                         int32_t prev, uint32_t seed) {
  std::string text;
  for (uint32_t step = 0; step < 200; ++step) {
    const uint32_t* bits = nullptr;
    const Status s = lazy->Allowed(&bits);
    EXPECT_TRUE(s.ok()) << s.message();
    if (!s.ok() || bits == nullptr) return text;  // free again: the call is whole
    int32_t pick = -1;
    for (uint32_t k = 0; k < tok.vocab_size() && pick < 0; ++k) {
      const uint32_t id = (k + (step + seed) * 7919) % tok.vocab_size();
      if (((bits[id >> 5] >> (id & 31)) & 1) && !tok.IsStop(static_cast<int32_t>(id))) {
        pick = static_cast<int32_t>(id);
      }
    }
    EXPECT_GE(pick, 0) << "no token continues " << text;
    if (pick < 0) return text;
    const std::string_view piece = tok.Decode(prev, pick);
    text.append(piece.data(), piece.size());
    EXPECT_TRUE(lazy->Accept(pick, piece).ok());
    prev = pick;
  }
  ADD_FAILURE() << "the call did not end in 200 tokens: " << text;
  return text;
}

// Qwen3's, set up once (a 151,669-token vocabulary's mask tables).
LazyTools& Qwen3() {
  static LazyTools* s = new LazyTools;
  return *s;
}

TEST(ChatToolsTest, HermesCallsOpenAtTheTagAndEndAtTheObject) {
  if (!testing::HaveModel("hf-tokenizers/qwen3/tokenizer.json")) return;
  LazyTools& s = Qwen3();
  MakeLazy("qwen3", ToolCallFormat::kHermes, &s);
  const Tokenizer& tok = s.loaded.tokenizer;
  const int32_t open = tok.Find("<tool_call>");
  ASSERT_GE(open, 0);
  for (uint32_t seed = 0; seed < 6; ++seed) {
    ASSERT_TRUE(s.lazy.Reset().ok());
    const uint32_t* bits = reinterpret_cast<const uint32_t*>(&s);
    ASSERT_TRUE(s.lazy.Allowed(&bits).ok());
    EXPECT_EQ(bits, nullptr);  // free text first
    ASSERT_TRUE(s.lazy.Accept(tok.Find("Let"), "Let").ok());
    EXPECT_FALSE(s.lazy.active());
    ASSERT_TRUE(s.lazy.Accept(open, "<tool_call>").ok());
    EXPECT_TRUE(s.lazy.active());
    EXPECT_FALSE(s.lazy.CanEnd());  // the end of turn waits for the call
    const std::string call = WalkToTheEnd(tok, &s.lazy, open, seed);
    EXPECT_FALSE(s.lazy.active());
    EXPECT_EQ(s.lazy.opened(), 1u);
    ToolCall calls[kMaxToolCalls];
    size_t n = 0;
    std::string_view content;
    const std::string reply = "Let<tool_call>" + call + "\n</tool_call>";
    const Status parsed = ParseToolCalls(ToolCallFormat::kHermes, reply, calls,
                                         kMaxToolCalls, &n, &content);
    ASSERT_TRUE(parsed.ok()) << parsed.message() << ": " << reply;
    ASSERT_EQ(n, 1u) << reply;
    testing::CheckWeatherCall(calls[0]);
    EXPECT_EQ(content, "Let");
  }
}

TEST(ChatToolsTest, ATriggerSplitAcrossTokensOpensTheGrammar) {
  if (!testing::HaveModel("hf-tokenizers/qwen3/tokenizer.json")) return;
  LazyTools& s = Qwen3();
  MakeLazy("qwen3", ToolCallFormat::kHermes, &s);
  ASSERT_TRUE(s.lazy.Reset().ok());
  ASSERT_TRUE(s.lazy.Accept(0, "ok <to").ok());
  EXPECT_FALSE(s.lazy.active());
  ASSERT_TRUE(s.lazy.Accept(0, "ol_").ok());
  EXPECT_FALSE(s.lazy.active());
  // The rest of the tag and the call's first bytes in one token.
  ASSERT_TRUE(s.lazy.Accept(0, "call>\n{").ok());
  EXPECT_TRUE(s.lazy.active());
  const uint32_t* bits = nullptr;
  ASSERT_TRUE(s.lazy.Allowed(&bits).ok());
  ASSERT_NE(bits, nullptr);
  // A token that cannot continue the call is refused.
  EXPECT_FALSE(s.lazy.Accept(0, "}").ok());
  EXPECT_TRUE(s.lazy.Accept(0, "\"name\": \"add\"").ok());
}

TEST(ChatToolsTest, Llama3CallsOnlyAtTheStartOfTheReply) {
  if (!testing::HaveModel("hf-tokenizers/llama3/tokenizer.json")) return;
  LazyTools s;
  MakeLazy("llama3", ToolCallFormat::kLlama3, &s);
  const Tokenizer& tok = s.loaded.tokenizer;
  const int32_t brace = tok.Find("{\"");
  ASSERT_GE(brace, 0);
  for (uint32_t seed = 0; seed < 4; ++seed) {
    ASSERT_TRUE(s.lazy.Reset().ok());
    ASSERT_TRUE(s.lazy.Accept(tok.Find(" "), " ").ok());  // white space keeps it armed
    ASSERT_TRUE(s.lazy.Accept(brace, "{\"").ok());
    ASSERT_TRUE(s.lazy.active());
    const std::string call = "{\"" + WalkToTheEnd(tok, &s.lazy, brace, seed);
    ToolCall calls[kMaxToolCalls];
    size_t n = 0;
    std::string_view content;
    ASSERT_TRUE(
        ParseToolCalls(ToolCallFormat::kLlama3, call, calls, kMaxToolCalls, &n, &content)
            .ok())
        << call;
    ASSERT_EQ(n, 1u);
    testing::CheckWeatherCall(calls[0]);
    // After the call the text is free, and a second '{' opens nothing.
    ASSERT_TRUE(s.lazy.Accept(brace, "{\"").ok());
    EXPECT_FALSE(s.lazy.active());
  }
  // A reply that starts with words is free to its end.
  ASSERT_TRUE(s.lazy.Reset().ok());
  ASSERT_TRUE(s.lazy.Accept(tok.Find("Hello"), "Hello").ok());
  ASSERT_TRUE(s.lazy.Accept(brace, "{\"").ok());
  EXPECT_FALSE(s.lazy.active());
  EXPECT_EQ(s.lazy.opened(), 0u);
}

// A chat over a tiny random model with Qwen3's tokenizer and chat template, its reply
// held to a call (a grammar that starts with the tag, so that the random model makes
// one): the call is parsed, stored as tool_calls, answered, and rendered back.
TEST(ChatToolsTest, AChatStoresAnswersAndRendersACall) {
  if (!testing::HaveModel("hf-tokenizers/qwen3/tokenizer.json")) return;
  testing::AlignedBytes bytes;
  uint32_t vocab = 0;
  testing::Qwen3ChatModel(&bytes, &vocab);
  auto model = Model::FromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(DetectToolCallFormat((*model)->chat_template().tables()),
            ToolCallFormat::kHermes);

  testing::GreedyChat greedy;
  ASSERT_NO_FATAL_FAILURE(greedy.Open(**model, vocab, sizeof(testing::kWeatherTools)));
  Chat& chat = greedy.chat;
  ASSERT_TRUE(chat.SetTools(testing::kWeatherTools).ok());

  // The whole reply is a call: the tag, the call's grammar, the close tag.
  std::vector<grammar::ToolDefinition> defs;
  ASSERT_TRUE(grammar::ReadTools(testing::kWeatherTools, "kWeatherTools", &defs).ok());
  std::string call;
  ASSERT_TRUE(grammar::ToolCallGrammar(defs, ToolCallFormat::kHermes, &call).ok());
  const std::string gbnf = "root ::= \"<tool_call>\" body \"\\n</tool_call>\"\n" +
                           call.replace(call.find("root ::="), 8, "body ::=");
  std::vector<uint32_t> words;
  ASSERT_TRUE(grammar::CompileGbnf(gbnf, "root", &words).ok()) << gbnf;
  grammar::GrammarConstraint whole;
  const ChatProgramTables& t = (*model)->chat_template().tables();
  ASSERT_TRUE(
      whole.Init(words, (*model)->tokenizer(), t.end_of_turn_ids, t.num_end_of_turn_ids)
          .ok());
  const TokenConstraint constraint = whole.AsTokenConstraint();
  chat.set_constraint(&constraint);

  ASSERT_TRUE(chat.Add("user", "Weather in Paris?").ok());
  ChatTurnStats stats;
  const Status replied = chat.Reply(
      300, nullptr, [](void*, int32_t, std::string_view) { return true; }, nullptr,
      &stats);
  ASSERT_TRUE(replied.ok()) << replied.message();
  ASSERT_TRUE(stats.complete);
  ASSERT_TRUE(chat.tool_calls_status().ok()) << chat.tool_calls_status().message();
  ASSERT_EQ(stats.tool_calls, 1u);
  ASSERT_EQ(chat.num_tool_calls(), 1u);
  testing::CheckWeatherCall(chat.tool_call(0));
  char id[10];
  chat.tool_call_id(0, id);
  EXPECT_STREQ(id, "call00001");
  const ChatMessage reply = chat.message(chat.num_messages() - 1);
  EXPECT_EQ(reply.role, "assistant");
  EXPECT_EQ(reply.content, "");
  const tools::Json extra = tools::Json::parse(reply.extra_json, nullptr, false);
  ASSERT_TRUE(extra.is_object()) << reply.extra_json;
  EXPECT_EQ(extra["tool_calls"][0]["id"], "call00001");
  EXPECT_EQ(extra["tool_calls"][0]["function"]["name"],
            std::string(chat.tool_call(0).name));
  EXPECT_EQ(chat.unanswered_tool_calls(), 1u);

  ASSERT_TRUE(chat.Add("tool", "{\"temperature\": 21}").ok());
  EXPECT_EQ(chat.unanswered_tool_calls(), 0u);
  const ChatMessage result = chat.message(chat.num_messages() - 1);
  EXPECT_EQ(result.extra_json, "{\"tool_call_id\": \"call00001\"}");

  // Rendered back as Qwen3's template writes a call and its result.
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < chat.num_messages(); ++i) messages.push_back(chat.message(i));
  ChatTemplateOptions render;
  render.tools_json = testing::kWeatherTools;
  std::string text;
  const Status rendered =
      tools::RenderToString((*model)->chat_template(), messages, render, &text);
  ASSERT_TRUE(rendered.ok()) << rendered.message();
  EXPECT_NE(text.find("<tool_call>\n{\"name\": \"" + std::string(chat.tool_call(0).name) +
                      "\", \"arguments\": "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<tool_response>\n{\"temperature\": 21}\n</tool_response>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"name\": \"get_weather\""), std::string::npos) << text;  // tools
  // The next reply's prompt renders and tokenizes.
  const int32_t* tokens;
  size_t n = 0;
  ASSERT_TRUE(chat.Tokenize(&tokens, &n).ok());
  EXPECT_GT(n, 100u);
}

}  // namespace
}  // namespace ember
