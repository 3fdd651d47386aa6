// Tool calls parsed out of replies in each family's syntax, and the JSON skipper's
// limits. The syntaxes are those the templates teach (Qwen's <tool_call> tags, Llama
// 3's bare object, Mistral's array, Phi-4-mini's marked array); tests/tool_calls_test.cc
// generates them.
#include "runtime/chat/tool_calls.h"

#include <string>

#include "gtest/gtest.h"

namespace ember {
namespace {

struct Parsed {
  Status status;
  std::vector<ToolCall> calls;
  std::string_view content;
};

Parsed Parse(ToolCallFormat format, std::string_view reply, size_t max = kMaxToolCalls) {
  Parsed p;
  ToolCall calls[kMaxToolCalls];
  size_t n = 0;
  p.status = ParseToolCalls(format, reply, calls, max, &n, &p.content);
  p.calls.assign(calls, calls + n);
  return p;
}

TEST(ToolCallsTest, HermesCallsAndTheTextBeforeThem) {
  const Parsed p = Parse(ToolCallFormat::kHermes,
                         "<think>\nweather\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", "
                         "\"arguments\": {\"city\": \"Paris }\\\"\", \"days\": [1, 2]}}\n"
                         "</tool_call>\n<tool_call>\n{\"arguments\": {}, \"name\": \"now\"}\n"
                         "</tool_call>");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].name, "get_weather");
  EXPECT_EQ(p.calls[0].arguments, "{\"city\": \"Paris }\\\"\", \"days\": [1, 2]}");
  EXPECT_EQ(p.calls[1].name, "now");
  EXPECT_EQ(p.calls[1].arguments, "{}");
  EXPECT_EQ(p.content, "<think>\nweather\n</think>\n\n");
}

TEST(ToolCallsTest, HermesReplyWithoutTagsIsContent) {
  const Parsed p = Parse(ToolCallFormat::kHermes, "It is sunny {\"name\": 1}.");
  ASSERT_TRUE(p.status.ok());
  EXPECT_TRUE(p.calls.empty());
  EXPECT_EQ(p.content, "It is sunny {\"name\": 1}.");
}

TEST(ToolCallsTest, ACallWithoutItsCloseTagAtTheEndIsWhole) {
  // The model ended its turn (a stop id) right after the object.
  const Parsed p =
      Parse(ToolCallFormat::kHermes, "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_EQ(p.calls.size(), 1u);
}

TEST(ToolCallsTest, BrokenCallsAreRefusedWithWhere) {
  for (const char* reply : {
           "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": ",  // cut off by -n
           "<tool_call>{\"arguments\": {}}</tool_call>",              // no name
           "<tool_call>{\"name\": \"\"}</tool_call>",                 // empty name
           "<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>",
           "<tool_call>{\"name\": \"f\"} trailing</tool_call>",
           "<tool_call>{\"name\": \"f\\q\"}</tool_call>",  // bad escape
           "<tool_call>{\"name\": tru}</tool_call>",
       }) {
    const Parsed p = Parse(ToolCallFormat::kHermes, reply);
    EXPECT_EQ(p.status.code(), StatusCode::kInvalidArgument) << reply;
    EXPECT_NE(std::string(p.status.message()).find("tool call"), std::string::npos)
        << p.status.message();
  }
}

TEST(ToolCallsTest, Llama3BareObjectsWithParameters) {
  Parsed p = Parse(ToolCallFormat::kLlama3,
                   " {\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": -2.5e3}}; "
                   "{\"name\": \"now\", \"parameters\": {}}");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].name, "add");
  EXPECT_EQ(p.calls[0].arguments, "{\"a\": 1, \"b\": -2.5e3}");
  EXPECT_TRUE(p.content.empty());
  p = Parse(ToolCallFormat::kLlama3, "The answer is 3.");
  ASSERT_TRUE(p.status.ok());
  EXPECT_TRUE(p.calls.empty());
  EXPECT_EQ(p.content, "The answer is 3.");
}

TEST(ToolCallsTest, MistralArrayOfCalls) {
  const Parsed p = Parse(ToolCallFormat::kMistral,
                         "[{\"name\": \"a\", \"arguments\": {\"x\": null}}, "
                         "{\"name\": \"b\", \"arguments\": {\"y\": [true, false]}}]");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[1].name, "b");
  EXPECT_EQ(p.calls[1].arguments, "{\"y\": [true, false]}");
}

TEST(ToolCallsTest, Phi4MiniArraysBetweenItsMarkers) {
  // The markers are the pieces of control tokens that the chat keeps in the reply.
  Parsed p = Parse(ToolCallFormat::kPhi4Mini,
                   "Checking.<|tool_call|>[{\"name\": \"a\", \"arguments\": {\"x\": 1}}, "
                   "{\"name\": \"b\", \"arguments\": {}}]<|/tool_call|>"
                   "<|tool_call|>[{\"name\": \"c\", \"arguments\": {\"s\": \"]\"}}]");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_EQ(p.calls.size(), 3u);
  EXPECT_EQ(p.calls[1].name, "b");
  EXPECT_EQ(p.calls[2].arguments, "{\"s\": \"]\"}");
  EXPECT_EQ(p.content, "Checking.");
  // Objects without the brackets, as the model sometimes writes them.
  p = Parse(ToolCallFormat::kPhi4Mini,
            "<|tool_call|>{\"name\": \"a\", \"arguments\": {}}, "
            "{\"name\": \"b\", \"arguments\": {}}<|/tool_call|>");
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(p.calls.size(), 2u);
  EXPECT_TRUE(p.content.empty());
  // No marker: text, even when it looks like JSON.
  p = Parse(ToolCallFormat::kPhi4Mini, "[{\"name\": \"a\", \"arguments\": {}}]");
  ASSERT_TRUE(p.status.ok());
  EXPECT_TRUE(p.calls.empty());
  for (const char* reply : {
           "<|tool_call|>[{\"name\": \"a\", \"arguments\": {}}",  // cut off by -n
           "<|tool_call|>[{\"name\": \"a\", \"arguments\": {}}] <|tool_call|>",
           "<|tool_call|>[{\"name\": \"a\"}] tail<|/tool_call|>",
       }) {
    EXPECT_EQ(Parse(ToolCallFormat::kPhi4Mini, reply).status.code(),
              StatusCode::kInvalidArgument)
        << reply;
  }
}

TEST(ToolCallsTest, MoreCallsThanRoomIsResourceExhausted) {
  std::string reply;
  for (int i = 0; i < 3; ++i) reply += "<tool_call>{\"name\": \"f\"}</tool_call>";
  const Parsed p = Parse(ToolCallFormat::kHermes, reply, 2);
  EXPECT_EQ(p.status.code(), StatusCode::kResourceExhausted);
}

TEST(ToolCallsTest, NestingIsBoundedWithoutRecursion) {
  // Within the limit, then past it, then far past it (no stack growth either way).
  for (const int depth : {kMaxToolCallDepth - 1, kMaxToolCallDepth + 1, 100000}) {
    const std::string args = std::string(depth, '[') + std::string(depth, ']');
    const std::string reply =
        "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": " + args + "}}</tool_call>";
    const Parsed p = Parse(ToolCallFormat::kHermes, reply);
    if (depth + 1 <= kMaxToolCallDepth) {  // the arguments object is a level too
      EXPECT_TRUE(p.status.ok()) << depth << ": " << p.status.message();
    } else {
      EXPECT_EQ(p.status.code(), StatusCode::kInvalidArgument) << depth;
      EXPECT_NE(std::string(p.status.message()).find("kMaxToolCallDepth"), std::string::npos);
    }
  }
}

TEST(ToolCallsTest, SkipJsonValueFindsTheEnd) {
  size_t end = 0;
  const std::string text = "  {\"a\": [1, {\"b\": \"}]\"}], \"c\": true} tail";
  ASSERT_TRUE(SkipJsonValue(text, 0, &end).ok());
  EXPECT_EQ(text.substr(end), " tail");
  for (const char* bad : {"", "{", "[1,]x", "{\"a\" 1}", "{1: 2}", "\"\x01\"", "nul"}) {
    EXPECT_FALSE(SkipJsonValue(bad, 0, &end).ok()) << bad;
  }
}

TEST(ToolCallsTest, FormatFromTheTemplatesText) {
  const auto detect = [](std::string_view strings) {
    ChatProgramTables t;
    t.string_bytes = reinterpret_cast<const uint8_t*>(strings.data());
    t.string_bytes_size = strings.size();
    return DetectToolCallFormat(t);
  };
  EXPECT_EQ(detect("<|im_start|>\n<tool_call>\n"), ToolCallFormat::kHermes);
  EXPECT_EQ(detect("[AVAILABLE_TOOLS][TOOL_CALLS]"), ToolCallFormat::kMistral);
  EXPECT_EQ(detect("{\"name\": function name, \"parameters\": dictionary"),
            ToolCallFormat::kLlama3);
  EXPECT_EQ(detect("<|system|><|tool|><|/tool|><|end|>"), ToolCallFormat::kPhi4Mini);
  EXPECT_EQ(detect("<start_of_turn>user\n"), ToolCallFormat::kNone);
}

}  // namespace
}  // namespace ember
