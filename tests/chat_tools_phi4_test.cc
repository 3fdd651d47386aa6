// Phi-4-mini's tool calls end to end: its chat template (tests/chat_templates/
// templates.json, as published) over Qwen3's tokenizer given Phi-4-mini's markers as
// control tokens (<|tool_call|> decodes to no text), and a tiny random model. A script
// holds the reply to <|tool_call|>, a call the lazy call grammar must allow token by
// token, <|/tool_call|> and the end of turn; the chat must keep the markers' pieces in
// the reply, parse its call, keep the reply as the assistant's content (the template
// renders nothing else) and render the tools into the system message.
#include <fstream>
#include <string>
#include <vector>

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
#include "tools/template/hf_chat_config.h"
#include "tools/util/json_util.h"

namespace ember {
namespace {

constexpr char kTools[] = R"([
 {"type": "function", "function": {"name": "get_weather", "description": "Météo",
  "parameters": {"type": "object", "properties": {"city": {"type": "string",
  "maxLength": 12}}, "required": ["city"]}}}])";

constexpr const char* kMarkers[] = {"<|system|>",    "<|end|>",       "<|user|>",
                                    "<|assistant|>", "<|tool|>",      "<|/tool|>",
                                    "<|tool_call|>", "<|/tool_call|>"};

// Qwen3's tokenizer.json with Phi-4-mini's markers added as special tokens, and its
// tokenizer_config.json with Phi-4-mini's chat template, in `dir`.
void WritePhi4Tokenizer(const std::string& dir) {
  const std::string qwen3 = testing::ModelsDir() + "/hf-tokenizers/qwen3";
  tools::Json tokenizer, config, templates;
  ASSERT_TRUE(tools::ReadJsonFile(qwen3 + "/tokenizer.json", &tokenizer).ok());
  ASSERT_TRUE(tools::ReadJsonFile(qwen3 + "/tokenizer_config.json", &config).ok());
  ASSERT_TRUE(tools::ReadJsonFile(
                  std::string(EMBER_SOURCE_DIR) + "/tests/chat_templates/templates.json",
                  &templates)
                  .ok());
  int64_t id = 0;
  for (const tools::Json& t : tokenizer["added_tokens"]) {
    id = std::max<int64_t>(id, t["id"].get<int64_t>() + 1);
  }
  for (const char* marker : kMarkers) {
    tools::Json t = {{"id", id},        {"content", marker}, {"single_word", false},
                     {"lstrip", false}, {"rstrip", false},   {"normalized", false},
                     {"special", true}};
    tokenizer["added_tokens"].push_back(t);
    t.erase("id");
    config["added_tokens_decoder"][std::to_string(id)] = t;
    ++id;
  }
  config["chat_template"] = templates["templates"]["phi4-mini"]["chat_template"];
  config["eos_token"] = "<|endoftext|>";
  std::ofstream(dir + "/tokenizer.json") << tokenizer.dump();
  std::ofstream(dir + "/tokenizer_config.json") << config.dump();
}

void Phi4Model(testing::AlignedBytes* bytes, uint32_t* vocab) {
  testing::ScratchDir dir("ember_phi4_");
  ASSERT_NO_FATAL_FAILURE(WritePhi4Tokenizer(dir.path()));
  TokenizerSpec tokenizer;
  Status s = tools::ReadHfTokenizer(dir.path(), 0, tools::SpecialTokens(), &tokenizer);
  ASSERT_TRUE(s.ok()) << s.message();
  s = tools::ReadHfChatConfig(dir.path(), &tokenizer.chat_template,
                              &tokenizer.chat_program);
  ASSERT_TRUE(s.ok()) << s.message();
  s = tools::CompileChatTemplate(&tokenizer);
  ASSERT_TRUE(s.ok()) << s.message();
  *vocab = static_cast<uint32_t>(tokenizer.pieces.size());
  ModelSpec spec = testing::TinyModelSpec(16, 1, 2, 2, 32, *vocab, 2048, 13);
  spec.tokenizer = std::move(tokenizer);
  std::vector<uint8_t> raw;
  ASSERT_TRUE(SerializeModel(spec, &raw).ok());
  *bytes = testing::AlignedBytes(raw);
}

// The reply's script: <|tool_call|>, then the call's tokens (each one the lazy call
// grammar, opened by that control token, must allow) until the grammar lets go, then
// <|/tool_call|>, then the end of turn.
struct Script {
  grammar::LazyConstraint* lazy;
  int32_t open, close, end;
  std::vector<int32_t> call;
  std::vector<uint32_t> bits;
  int stage = 0;
  size_t next = 0;  // of call

  const uint32_t* Only(int32_t id) {
    std::fill(bits.begin(), bits.end(), 0u);
    bits[static_cast<size_t>(id) >> 5] |= 1u << (id & 31);
    return bits.data();
  }
  static Status Allowed(void* p, const uint32_t** out) {
    auto* s = static_cast<Script*>(p);
    if (s->stage == 1) {
      const uint32_t* grammar = nullptr;
      EMBER_RETURN_IF_ERROR(s->lazy->Allowed(&grammar));
      const int32_t id = s->call[s->next];
      if (grammar == nullptr || !((grammar[id >> 5] >> (id & 31)) & 1)) {
        return InvalidArgument("the call grammar refuses token %zu of the call", s->next);
      }
      *out = s->Only(id);
      return Status::Ok();
    }
    *out = s->Only(s->stage == 0 ? s->open : s->stage == 2 ? s->close : s->end);
    return Status::Ok();
  }
  static Status Accept(void* p, int32_t id, std::string_view text) {
    auto* s = static_cast<Script*>(p);
    if (s->stage <= 1) {
      EMBER_RETURN_IF_ERROR(s->lazy->Accept(id, text));
      if (s->stage == 1) ++s->next;
      s->stage = s->next < s->call.size() ? 1 : 2;
      if (s->stage == 2 && s->lazy->active()) {
        return InvalidArgument("the call grammar holds on after the call");
      }
    } else {
      ++s->stage;
    }
    return Status::Ok();
  }
  static bool CanEnd(const void* p) { return static_cast<const Script*>(p)->stage == 3; }
  static Status Reset(void* p) {
    auto* s = static_cast<Script*>(p);
    s->stage = 0;
    s->next = 0;
    return s->lazy->Reset();
  }
};

TEST(ChatToolsPhi4Test, CallsKeepTheirMarkersAndToolsGoInTheSystemMessage) {
  if (!testing::HaveModel("hf-tokenizers/qwen3/tokenizer.json")) return;
  testing::AlignedBytes bytes;
  uint32_t vocab = 0;
  ASSERT_NO_FATAL_FAILURE(Phi4Model(&bytes, &vocab));
  auto model = Model::FromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Tokenizer& tok = (*model)->tokenizer();
  const ChatProgramTables& t = (*model)->chat_template().tables();
  ASSERT_EQ(DetectToolCallFormat(t), ToolCallFormat::kPhi4Mini);
  // The markers' ids (control pieces, which Find does not look up).
  const auto id_of = [&](std::string_view piece) {
    for (uint32_t id = 0; id < tok.vocab_size(); ++id) {
      if (tok.piece(id) == piece) return static_cast<int32_t>(id);
    }
    return -1;
  };
  const int32_t open = id_of("<|tool_call|>"), close = id_of("<|/tool_call|>");
  const int32_t end = id_of("<|end|>");
  ASSERT_GE(open, 0);
  ASSERT_GE(close, 0);
  ASSERT_TRUE(tok.Decode(-1, open).empty());  // a control token: no text
  ASSERT_EQ(t.num_end_of_turn_ids, 1u);
  ASSERT_EQ(t.end_of_turn_ids[0], end);

  testing::GreedyChat greedy;
  ASSERT_NO_FATAL_FAILURE(greedy.Open(**model, vocab, sizeof(kTools)));
  Chat& chat = greedy.chat;
  ASSERT_TRUE(chat.SetTools(kTools).ok());
  EXPECT_EQ(chat.tool_call_format(), ToolCallFormat::kPhi4Mini);

  // No system text: the tools go in an empty system message ember adds, as the
  // functions' JSON ("function" of each definition).
  ASSERT_TRUE(chat.Add("user", "Weather in Paris?").ok());
  const int32_t* tokens;
  size_t n = 0;
  ASSERT_TRUE(chat.Tokenize(&tokens, &n).ok());
  std::string prompt;
  for (size_t i = 0; i < n; ++i) {
    prompt += tok.piece(static_cast<uint32_t>(tokens[i])) == "<|tool|>" ? "<|tool|>" : "";
  }
  EXPECT_EQ(prompt, "<|tool|>");  // the marker tokenized as its control token

  // The reply: a call under the lazy grammar, between the markers.
  std::vector<grammar::ToolDefinition> defs;
  ASSERT_TRUE(grammar::ReadTools(kTools, "kTools", &defs).ok());
  std::string gbnf;
  ASSERT_TRUE(grammar::ToolCallGrammar(defs, ToolCallFormat::kPhi4Mini, &gbnf).ok());
  std::vector<uint32_t> words;
  ASSERT_TRUE(grammar::CompileGbnf(gbnf, "root", &words).ok()) << gbnf;
  grammar::GrammarConstraint call_grammar;
  ASSERT_TRUE(
      call_grammar.Init(words, tok, t.end_of_turn_ids, t.num_end_of_turn_ids).ok());
  grammar::LazyConstraint lazy;
  ASSERT_TRUE(lazy.Init(&call_grammar,
                        grammar::ToolCallTrigger(SyntaxOf(ToolCallFormat::kPhi4Mini)),
                        tok)
                  .ok());
  const std::string call = R"([{"name": "get_weather", "arguments": {"city": "Oslo"}}])";
  std::vector<int32_t> call_ids(tok.EncodeCapacity(call.size()));
  size_t num_ids = 0;
  ASSERT_TRUE(tok.Encode(call, false, call_ids.data(), call_ids.size(), &num_ids).ok());
  call_ids.resize(num_ids);
  Script script{&lazy, open,     close,
                end,   call_ids, std::vector<uint32_t>((vocab + 31) / 32)};
  const TokenConstraint constraint{&script, &Script::Allowed, &Script::Accept,
                                   &Script::CanEnd, &Script::Reset};
  chat.set_constraint(&constraint);
  std::string streamed;
  ChatTurnStats stats;
  const Status replied = chat.Reply(
      200, nullptr,
      [](void* user, int32_t, std::string_view text) {
        static_cast<std::string*>(user)->append(text);
        return true;
      },
      &streamed, &stats);
  ASSERT_TRUE(replied.ok()) << replied.message();
  ASSERT_EQ(script.stage, 3) << streamed;
  EXPECT_EQ(streamed, call);
  ASSERT_TRUE(chat.tool_calls_status().ok()) << chat.tool_calls_status().message();
  ASSERT_EQ(stats.tool_calls, 1u) << streamed;
  EXPECT_EQ(chat.tool_call(0).name, "get_weather");
  EXPECT_EQ(chat.tool_call(0).arguments, R"({"city": "Oslo"})");
  // The stream has no marker (control tokens add no text); the stored reply has both.
  EXPECT_EQ(streamed.find("<|"), std::string::npos) << streamed;
  const ChatMessage reply = chat.message(chat.num_messages() - 1);
  EXPECT_EQ(reply.content, "<|tool_call|>" + streamed + "<|/tool_call|>");
  ASSERT_TRUE(chat.Add("tool", "{\"temperature\": 21}").ok());

  // Rendered back: the tools in the system message, the call with its markers.
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < chat.num_messages(); ++i) messages.push_back(chat.message(i));
  ChatTemplateOptions render;
  render.tools_json = kTools;
  std::string text;
  const Status rendered =
      tools::RenderToString((*model)->chat_template(), messages, render, &text);
  ASSERT_TRUE(rendered.ok()) << rendered.message();
  EXPECT_EQ(
      text,
      "<|system|><|tool|>[{\"name\": \"get_weather\", \"description\": \"Météo\", "
      "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": "
      "\"string\", \"maxLength\": 12}}, \"required\": [\"city\"]}}]<|/tool|><|end|>"
      "<|user|>Weather in Paris?<|end|><|assistant|><|tool_call|>" +
          streamed +
          "<|/tool_call|><|end|><|tool|>{\"temperature\": 21}<|end|>"
          "<|assistant|>");
  // The next prompt holds the call's markers as their control tokens.
  ASSERT_TRUE(chat.Tokenize(&tokens, &n).ok());
  EXPECT_EQ(std::count(tokens, tokens + n, open), 1);
  EXPECT_EQ(std::count(tokens, tokens + n, close), 1);

  // A system text keeps its place; the tools join it.
  ASSERT_TRUE(chat.SetSystem("Be brief.").ok());
  messages.assign(1, chat.message(0));
  ASSERT_TRUE(
      tools::RenderToString((*model)->chat_template(), messages, render, &text).ok());
  EXPECT_EQ(text.rfind("<|system|>Be brief.<|tool|>[{\"name\": \"get_weather\"", 0), 0u)
      << text;
}

}  // namespace
}  // namespace ember
