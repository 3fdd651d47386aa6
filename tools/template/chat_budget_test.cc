// The tools render chat templates within the buffer a chat gives a conversation
// (ChatRenderBytes), never a buffer doubled up to gigabytes: a template that outgrows it
// on a short conversation is refused at conversion, naming the budget, and every real
// model's template still converts.
#include <dirent.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/chat/chat_template.h"
#include "testing/testing.h"
#include "tools/template/chat_program.h"
#include "tools/template/hf_chat_config.h"
#include "tools/util/files.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

Status Convert(const std::string& source, TokenizerSpec* tok) {
  tok->chat_template = source;
  tok->chat_program = ChatProgramSpec();
  return CompileChatTemplate(tok);
}

// Templates of a few bytes that once made `ember convert` grow a buffer to 1-2 GiB for a
// minute or more, then store a template no chat could render.
TEST(ChatBudgetTest, TemplatesThatOutgrowTheBudgetAreRefusedAtConversion) {
  const char* const hostile[] = {
      // A string doubled 31 times: 2 GiB.
      "{% set s = namespace(t='x') %}{% for i in range(31) %}"
      "{% set s.t = s.t.replace('x', 'xx') %}{% endfor %}{{ s.t }}",
      // One indent of a billion spaces per line.
      "{{ messages | tojson(indent=1000000000) }}",
      // 2^32 + 2, once cut to an int's 2.
      "{{ messages | tojson(indent=65536 * 65536 + 2) }}",
      "{{ 'x' * 1000000000 }}",
      // The same concatenated: one step each, so the step budget never sees them.
      "{% set s = namespace(t='x') %}{% for i in range(31) %}"
      "{% set s.t = s.t ~ s.t %}{% endfor %}{{ s.t }}",
  };
  TokenizerSpec tok = testing::TinyModelSpec().tokenizer;
  for (const char* source : hostile) {
    const Status s = Convert(source, &tok);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << source;
    const std::string want =
        "chat template: a 4-message conversation of 77 bytes does not render: the "
        "buffer of " +
        std::to_string(ChatRenderBytes(77)) + " bytes is too small";
    EXPECT_EQ(std::string(s.message()).substr(0, want.size()), want) << source;
  }
}

// A runaway loop (a billion steps of nothing) would stall every turn of every chat for
// the whole step budget before failing it: refused at conversion, naming the budget.
TEST(ChatBudgetTest, ARunawayTemplateIsRefusedAtConversion) {
  TokenizerSpec tok = testing::TinyModelSpec().tokenizer;
  const Status s = Convert(
      "{% set r = range(1000) %}{% for a in r %}{% for b in r %}{% for c in r %}"
      "{% endfor %}{% endfor %}{% endfor %}{{ messages[0].content }}",
      &tok);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("does not render: more than"), std::string::npos)
      << s.message();
  EXPECT_NE(std::string(s.message()).find("steps (a runaway loop?)"), std::string::npos)
      << s.message();
}

// The budget refuses only what outgrows it: a template that raises on every conversation
// (which a chat reports turn by turn), one that refuses a system message, and an empty
// string repeated 2^62 times (one step: once 4.6e18 empty appends) all convert.
TEST(ChatBudgetTest, TemplatesWithinTheBudgetConvert) {
  TokenizerSpec tok = testing::TinyModelSpec().tokenizer;
  for (const char* source : {
           "{{ raise_exception('no') }}",
           "{% if messages[0].role == 'system' %}{{ raise_exception('no system') }}"
           "{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}",
           "{{ '' * (2147483647 * 2147483647) }}x",
           "{{ messages | tojson(indent=2) }}",
       }) {
    const Status s = Convert(source, &tok);
    EXPECT_TRUE(s.ok()) << source << " -> " << s.message();
  }
  std::string text;
  ASSERT_TRUE(
      RenderProgram(tok.chat_program, 300, {{"user", "a"}}, ChatTemplateOptions(), &text)
          .ok());
  EXPECT_EQ(text, "[\n  {\n    \"role\": \"user\",\n    \"content\": \"a\"\n  }\n]");
  ASSERT_TRUE(Convert("{{ '' * (2147483647 * 2147483647) }}x", &tok).ok());
  ASSERT_TRUE(
      RenderProgram(tok.chat_program, 300, {}, ChatTemplateOptions(), &text).ok());
  EXPECT_EQ(text, "x");
}

// `ember template` renders within the same budget: a conversation's text and 16 KiB of
// markup fit, a template writing more than the budget is refused at once.
TEST(ChatBudgetTest, RenderToStringStopsAtTheChatsBudget) {
  TokenizerSpec tok = testing::TinyModelSpec().tokenizer;
  ASSERT_TRUE(
      Convert("{% for m in messages %}{{ m.content * m.role | length }}{% endfor %}",
              &tok)
          .ok());
  const std::string content(100000, 'a');
  std::string text;
  // "user" writes the content 4 times (400,000 bytes of a budget of 8 x 100,004 + 16
  // KiB), "assistant" 9 (900,000 bytes: past 8 x 100,009 + 16 KiB).
  ASSERT_TRUE(RenderProgram(tok.chat_program, 300, {{"user", content}},
                            ChatTemplateOptions(), &text)
                  .ok());
  EXPECT_EQ(text.size(), 400000u);
  const Status s = RenderProgram(tok.chat_program, 300, {{"assistant", content}},
                                 ChatTemplateOptions(), &text);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(
      std::string(s.message())
          .find("the buffer of " + std::to_string(ChatRenderBytes(100009)) + " bytes"),
      std::string::npos)
      << s.message();
}

// Tools count toward the budget as text: ChatRenderBytes(messages + tools_json +
// extra_json bytes) holds 64 tool definitions with nested schemas written by Llama
// 3.2's template (indent=4, the widest of the templates that read tools) and Qwen2.5's.
TEST(ChatBudgetTest, ToolsRenderWithinTheBudgetOfTheirBytes) {
  Json root;
  ASSERT_TRUE(
      ReadJsonFile(std::string(EMBER_SOURCE_DIR) + "/tests/chat_templates/templates.json",
                   &root)
          .ok());
  std::string tools = "[";
  for (int i = 0; i < 64; ++i) {
    tools += std::string(i ? ", " : "") +
             R"({"type": "function", "function": {"name": "f)" + std::to_string(i) +
             R"(", "description": "M\u00e9t\u00e9o \"now\"", "parameters": {"type": )"
             R"("object", "properties": {"where": {"type": "object", "properties": )"
             R"({"city": {"type": "string"}, "tags": {"type": "array", "items": )"
             R"({"type": "string", "enum": ["a", "b"]}}}}}, "required": ["where"]}}})";
  }
  tools += "]";
  const std::vector<ChatMessage> messages = {
      {"system", "Use tools."},
      {"user", "Weather?"},
      {"assistant", "",
       R"({"tool_calls": [{"type": "function", "function": {"name": "f1", )"
       R"("arguments": {"where": {"city": "Paris"}}}}]})"},
      {"tool", "22", R"({"tool_call_id": "c1"})"},
      {"user", "ok"}};
  for (const char* name : {"llama3.2", "qwen2.5"}) {
    TokenizerSpec tok = testing::TinyModelSpec().tokenizer;
    ASSERT_TRUE(ReadChatConfigFields(root["templates"][name], name, &tok.chat_template,
                                     &tok.chat_program)
                    .ok());
    ASSERT_TRUE(CompileChatTemplate(&tok).ok()) << name;
    ChatTemplateOptions options;
    options.tools_json = tools;
    options.now_seconds = 0;
    std::string text;
    const Status s = RenderProgram(tok.chat_program, 300, messages, options, &text);
    ASSERT_TRUE(s.ok()) << name << ": " << s.message();
    EXPECT_NE(text.find("\"f63\""), std::string::npos) << name;  // the last tool
  }
}

// Every real model's template converts within the budget: the Hugging Face tokenizer
// directories in the shared models and tests/chat_templates.
TEST(ChatBudgetTest, EveryRealTemplateConverts) {
  struct Source {
    std::string name, text;
    ChatProgramSpec tokens;  // the special token texts
  };
  std::vector<Source> sources;
  const std::string dir = std::string(EMBER_SOURCE_DIR) + "/tests/chat_templates";
  Json root;
  ASSERT_TRUE(ReadJsonFile(dir + "/templates.json", &root).ok());
  for (const auto& [name, entry] : root["templates"].items()) {
    Source s{name, "", {}};
    const Status read = ReadChatConfigFields(entry, name, &s.text, &s.tokens);
    ASSERT_TRUE(read.ok()) << read.message();
    sources.push_back(std::move(s));
  }
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(ReadFile(dir + "/stories.jinja", &bytes).ok());
  sources.push_back({"stories.jinja", std::string(bytes.begin(), bytes.end()), {}});
  if (testing::HaveModel("hf-tokenizers")) {
    const std::string hf = testing::ModelsDir() + "/hf-tokenizers";
    DIR* d = opendir(hf.c_str());
    ASSERT_NE(d, nullptr);
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      Source s{e->d_name, "", {}};
      ASSERT_TRUE(ReadHfChatConfig(hf + "/" + s.name, &s.text, &s.tokens).ok()) << s.name;
      if (!s.text.empty()) sources.push_back(std::move(s));
    }
    closedir(d);
  }
  EXPECT_GE(sources.size(), 8u);
  for (const Source& source : sources) {
    TokenizerSpec tok = testing::TinyModelSpec().tokenizer;
    tok.chat_template = source.text;
    tok.chat_program = source.tokens;
    const Status s = CompileChatTemplate(&tok);
    EXPECT_TRUE(s.ok()) << source.name << ": " << s.message();
  }
}

}  // namespace
}  // namespace ember::tools
