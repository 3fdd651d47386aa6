// Tool calls through the C API over a tiny random model with Qwen3's tokenizer and chat
// template (tests/chat_tools_model.h): tools set, their call grammar from the C API
// (ember_tool_grammar, ember_chat_constrain_tools) or given as GBNF, the calls read
// back; a whole-reply grammar that spells a call.
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "gtest/gtest.h"
#include "runtime/grammar/tool_grammar.h"
#include "testing/testing.h"
#include "tests/chat_tools_model.h"

namespace ember {
namespace {

// A chat through the C API over the random Qwen3 model, room for kWeatherTools and for
// the grammar `gbnf` in the session's arena (ember_grammar_bytes); freed at the end.
// An empty `gbnf` becomes the tools' call grammar, as ember_tool_grammar writes it.
struct CApiChat {
  testing::AlignedBytes bytes;
  ember_model* model = nullptr;
  ember_session* session = nullptr;
  ember_chat* chat = nullptr;

  void Open(std::string* gbnf) {
    uint32_t vocab = 0;
    ASSERT_NO_FATAL_FAILURE(testing::Qwen3ChatModel(&bytes, &vocab));
    ASSERT_EQ(ember_model_from_memory(bytes.data(), bytes.size(), &model), EMBER_OK);
    if (gbnf->empty()) {
      const char* tools = testing::kWeatherTools;
      size_t need = 0;  // ask first: no buffer
      ASSERT_EQ(ember_tool_grammar(model, tools, strlen(tools), nullptr, &need),
                EMBER_RESOURCE_EXHAUSTED);
      std::vector<char> text(need);
      size_t length = need;
      ASSERT_EQ(ember_tool_grammar(model, tools, strlen(tools), text.data(), &length),
                EMBER_OK)
          << ember_last_error();
      ASSERT_EQ(length + 1, need);
      gbnf->assign(text.data(), length);
    }
    ember_session_options session_options;
    ember_session_options_default(&session_options);
    ASSERT_EQ(ember_grammar_bytes(model, gbnf->data(), gbnf->size(), nullptr,
                                  &session_options.grammar_bytes),
              EMBER_OK)
        << ember_last_error();
    ASSERT_EQ(
        ember_session_create(model, &session_options, nullptr, nullptr, 0, &session),
        EMBER_OK)
        << ember_last_error();
    ember_chat_options options;
    ember_chat_options_default(&options);
    options.max_tools_bytes = sizeof(testing::kWeatherTools);
    ASSERT_EQ(ember_chat_create(session, &options, &chat), EMBER_OK)
        << ember_last_error();
  }
  ~CApiChat() {
    ember_chat_free(chat);
    ember_session_free(session);
    ember_model_free(model);
  }
};

// The tools' call grammar from the C API: the Hermes one (Qwen3's template), what the
// grammar room writes for them; malformed tools and a buffer too small refused.
TEST(CApiToolsTest, TheToolGrammarIsTheTemplatesSyntax) {
  if (!testing::HaveModel("hf-tokenizers/qwen3/tokenizer.json")) return;
  std::string gbnf;
  CApiChat c;
  ASSERT_NO_FATAL_FAILURE(c.Open(&gbnf));
  std::vector<grammar::ToolDefinition> defs;
  ASSERT_TRUE(grammar::ReadTools(testing::kWeatherTools, "kWeatherTools", &defs).ok());
  std::string hermes;
  ASSERT_TRUE(grammar::ToolCallGrammar(defs, ToolCallFormat::kHermes, &hermes).ok());
  EXPECT_EQ(gbnf, hermes);
  std::vector<char> small(8, 'x');
  size_t length = small.size();
  EXPECT_EQ(ember_tool_grammar(c.model, testing::kWeatherTools,
                               strlen(testing::kWeatherTools), small.data(), &length),
            EMBER_RESOURCE_EXHAUSTED);
  EXPECT_EQ(length, gbnf.size() + 1);
  EXPECT_EQ(small[0], 'x');
  for (const char* bad :
       {"[", "{}", "[{\"name\": \"\"}]", "[{\"name\": \"f\"}, {\"name\": \"f\"}]"}) {
    length = small.size();
    EXPECT_EQ(ember_tool_grammar(c.model, bad, strlen(bad), small.data(), &length),
              EMBER_INVALID_ARGUMENT)
        << bad;
    EXPECT_NE(std::string(ember_last_error()).find("the tools"), std::string::npos)
        << ember_last_error();
  }
  const char* pattern =
      R"([{"name": "f", "parameters": {"type": "object", "properties": {"s":
         {"type": "string", "pattern": "a+"}}}}])";
  length = small.size();
  EXPECT_EQ(ember_tool_grammar(c.model, pattern, strlen(pattern), small.data(), &length),
            EMBER_UNIMPLEMENTED);
  EXPECT_NE(std::string(ember_last_error()).find("'pattern'"), std::string::npos)
      << ember_last_error();
  EXPECT_EQ(ember_tool_grammar(nullptr, pattern, 1, small.data(), &length),
            EMBER_INVALID_ARGUMENT);
}

// Tools set, their call grammar set from them (ember_chat_constrain_tools) or given
// (ember_chat_set_tool_grammar), calls read back; a random model opens no call, so the
// reply stays text.
TEST(CApiToolsTest, TheCApiSetsToolsAndTheirGrammar) {
  if (!testing::HaveModel("hf-tokenizers/qwen3/tokenizer.json")) return;
  std::string gbnf;
  CApiChat c;
  ASSERT_NO_FATAL_FAILURE(c.Open(&gbnf));
  ember_chat* chat = c.chat;
  EXPECT_EQ(ember_chat_set_tool_grammar(chat, gbnf.data(), gbnf.size()),
            EMBER_INVALID_ARGUMENT);  // no tools yet
  EXPECT_NE(std::string(ember_last_error()).find("ember_chat_set_tools"),
            std::string::npos);
  EXPECT_EQ(ember_chat_constrain_tools(chat), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(std::string(ember_last_error()).find("ember_chat_set_tools"),
            std::string::npos);
  const char* tools = testing::kWeatherTools;
  ASSERT_EQ(ember_chat_set_tools(chat, tools, strlen(tools)), EMBER_OK)
      << ember_last_error();
  EXPECT_EQ(ember_chat_set_tool_grammar(chat, "root ::= (", 10), EMBER_INVALID_ARGUMENT);
  ASSERT_EQ(ember_chat_set_tool_grammar(chat, gbnf.data(), gbnf.size()), EMBER_OK)
      << ember_last_error();
  ASSERT_EQ(ember_chat_constrain_tools(chat), EMBER_OK) << ember_last_error();
  ASSERT_EQ(ember_chat_add(chat, "user", "Weather in Oslo?", 16), EMBER_OK);
  size_t generated = 0;
  ASSERT_EQ(ember_chat_generate(
                chat, 12, [](void*, int32_t, const char*, size_t) { return 1; }, nullptr,
                &generated),
            EMBER_OK)
      << ember_last_error();
  EXPECT_GT(generated, 0u);
  size_t n = 9;
  const char* why = nullptr;
  ASSERT_EQ(ember_chat_tool_call_count(chat, &n, &why), EMBER_OK);
  EXPECT_EQ(n, 0u);
  EXPECT_STREQ(why, "");
  EXPECT_EQ(ember_chat_set_tool_grammar(chat, nullptr, 0), EMBER_OK);
}

// A whole-reply grammar through the C API: the reply is the call the grammar spells,
// parsed back as the chat's tool call; cut short by max_new, it is EMBER_OUT_OF_RANGE.
TEST(CApiToolsTest, TheCApiHoldsWholeRepliesToAGrammar) {
  if (!testing::HaveModel("hf-tokenizers/qwen3/tokenizer.json")) return;
  const std::string call =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}"
      "\n</tool_call>";
  std::string gbnf = "root ::= \"";
  for (const char c : call) {  // the call as a GBNF string literal
    gbnf += c == '"' ? "\\\"" : c == '\n' ? "\\n" : std::string(1, c);
  }
  gbnf += "\"";
  CApiChat c;
  ASSERT_NO_FATAL_FAILURE(c.Open(&gbnf));
  ember_chat* chat = c.chat;
  const char* tools = testing::kWeatherTools;
  ASSERT_EQ(ember_chat_set_tools(chat, tools, strlen(tools)), EMBER_OK);
  ember_grammar_options grammar_options;
  ember_grammar_options_default(&grammar_options);
  EXPECT_EQ(ember_chat_set_grammar(chat, "root ::= (", 10, &grammar_options),
            EMBER_INVALID_ARGUMENT);
  ASSERT_EQ(ember_chat_set_grammar(chat, gbnf.data(), gbnf.size(), &grammar_options),
            EMBER_OK)
      << ember_last_error() << "\n"
      << gbnf;
  const auto collect = [](void* user, int32_t, const char* text, size_t length) {
    static_cast<std::string*>(user)->append(text, length);
    return 1;
  };
  ASSERT_EQ(ember_chat_add(chat, "user", "Weather in Oslo?", 16), EMBER_OK);
  std::string reply;
  size_t generated = 0;
  ASSERT_EQ(ember_chat_generate(chat, 200, collect, &reply, &generated), EMBER_OK)
      << ember_last_error();
  EXPECT_EQ(reply, call);
  size_t n = 0;
  ASSERT_EQ(ember_chat_tool_call_count(chat, &n, nullptr), EMBER_OK);
  ASSERT_EQ(n, 1u);
  ember_tool_call parsed;
  parsed.struct_size = sizeof(parsed);
  ASSERT_EQ(ember_chat_tool_call(chat, 0, &parsed), EMBER_OK);
  EXPECT_STREQ(parsed.id, "call00001");
  EXPECT_EQ(std::string(parsed.name, parsed.name_length), "get_weather");
  EXPECT_EQ(std::string(parsed.arguments, parsed.arguments_length),
            "{\"city\": \"Oslo\"}");

  // Cut short: the reply is not a whole sentence of the grammar.
  ASSERT_EQ(ember_chat_add(chat, "tool", "{}", 2), EMBER_OK);
  reply.clear();
  EXPECT_EQ(ember_chat_generate(chat, 3, collect, &reply, &generated),
            EMBER_OUT_OF_RANGE);
  EXPECT_NE(std::string(ember_last_error()).find("grammar"), std::string::npos);
  EXPECT_EQ(generated, 3u);
  // Removed: replies are free again.
  ASSERT_EQ(ember_chat_set_grammar(chat, nullptr, 0, nullptr), EMBER_OK);
  ASSERT_EQ(ember_chat_add(chat, "user", "Thanks", 6), EMBER_OK);
  EXPECT_EQ(ember_chat_generate(chat, 2, collect, &reply, &generated), EMBER_OK);
}

}  // namespace
}  // namespace ember
