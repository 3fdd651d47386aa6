// Chat templates with tools: the `tools` input (bytecode version 2), messages with extra
// keys (tool calls, content None), what the render refuses and how, and version-1
// programs (compiled before tools) still rendering, refusing tools by name.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/chat/chat_template.h"
#include "runtime/chat/chat_template_format.h"
#include "tools/template/chat_program.h"
#include "tools/template/jinja_compiler.h"
#include "tools/template/jinja_parser.h"

namespace ember::tools {
namespace {

const char kTools[] =
    R"([{"type": "function", "function": {"name": "get_weather", "description": )"
    R"("M\u00e9t\u00e9o \"now\"", "parameters": {"type": "object", "properties": )"
    R"({"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}}}}},)"
    R"( {"type": "function", "function": {"name": "search"}}])";

// Renders `source` compiled, or the error's message prefixed "error: ".
std::string Render(const std::string& source, const std::vector<ChatMessage>& messages,
                   std::string_view tools_json = {}) {
  jinja::Body body;
  ChatProgramSpec program;
  Status s = jinja::Parse(source, &body);
  if (s.ok()) s = jinja::Compile(body, &program);
  if (!s.ok()) return std::string("compile error: ") + s.message();
  ChatTemplateOptions options;
  options.tools_json = tools_json;
  std::string text;
  s = RenderProgram(program, 1, messages, options, &text);
  return s.ok() ? text : std::string("error: ") + s.message();
}

TEST(TemplateToolsTest, ToolsAreTheTemplatesInput) {
  const std::vector<ChatMessage> hi = {{"user", "hi"}};
  // No tools: None, as transformers passes tools=None.
  EXPECT_EQ(Render("{{ tools is defined }} {{ tools is none }} {{ tools }}", hi),
            "True True None");
  EXPECT_EQ(Render("{{ tools is none }}", hi, "null"), "True");
  EXPECT_EQ(
      Render("{{ tools is none }} {{ tools | length }} {{ 'x' if tools }}", hi, " [] "),
      "False 0 ");
  EXPECT_EQ(Render("{% for t in tools %}{{ t.function.name }};{% endfor %}"
                   "{{ tools[0].function.parameters.properties.unit.enum }}",
                   hi, kTools),
            "get_weather;search;['c', 'f']");
  EXPECT_EQ(
      Render("{{ tools[0] | tojson }}", hi, kTools),
      R"({"type": "function", "function": {"name": "get_weather", "description": )"
      "\"M\xc3\xa9t\xc3\xa9o \\\"now\\\"\", \"parameters\": {\"type\": \"object\", "
      R"("properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}}}}})");
  // A template may still assign it (Llama 3.2: set tools = custom_tools).
  EXPECT_EQ(Render("{% set tools = [1] %}{{ tools }}", hi, kTools), "[1]");
}

TEST(TemplateToolsTest, MessagesKeepTheirExtraKeys) {
  const std::vector<ChatMessage> messages = {
      {"user", "Weather?"},
      {"assistant", "",
       R"({"content": null, "tool_calls": [{"id": "c1", "type": "function", )"
       R"("function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]})"},
      {"tool", "22", R"({"tool_call_id": "c1", "name": "get_weather"})"},
      {"user", "ok", R"({"role": "human", "x": [1.5, true]})"},
  };
  EXPECT_EQ(Render("{% for m in messages %}{{ m | tojson }}\n{% endfor %}", messages),
            R"({"role": "user", "content": "Weather?"})"
            "\n"
            R"({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", )"
            R"("type": "function", "function": {"name": "get_weather", "arguments": )"
            R"({"city": "Paris"}}}]})"
            "\n"
            R"({"role": "tool", "content": "22", "tool_call_id": "c1", "name": )"
            R"("get_weather"})"
            "\n"
            R"({"role": "human", "content": "ok", "x": [1.5, true]})"
            "\n");
  EXPECT_EQ(Render("{% for m in messages %}{{ m.role }}:{{ m.content is none }}:"
                   "{{ 'tool_calls' in m }}:"
                   "{{ m.tool_calls[0].function.arguments.city if m.tool_calls }};"
                   "{% endfor %}{{ messages[1:] | map(attribute='role') | join(',') }}",
                   messages),
            "user:False:False:;assistant:True:True:Paris;tool:False:False:;"
            "human:False:False:;assistant,tool,human");
  // Equality across plain messages and dicts, as Mistral's template compares them.
  EXPECT_EQ(
      Render("{{ messages[0] == messages[1] }}{{ messages[0] == messages[2] }}",
             {{"user", "a"}, {"user", "a", "{}"}, {"user", "a", R"({"name": "n"})"}}),
      "TrueFalse");
}

TEST(TemplateToolsTest, MalformedToolsOrExtraKeysAreRefused) {
  const std::vector<ChatMessage> hi = {{"user", "hi"}};
  EXPECT_EQ(Render("x", hi, "{}"),
            "error: tools_json: not a JSON array of tool definitions");
  EXPECT_EQ(Render("x", hi, "[1,"),
            "error: tools_json: JSON at byte 3: a value is missing");
  EXPECT_EQ(Render("x", {{"user", "a"}, {"assistant", "b", "[]"}}),
            "error: message 1: extra_json is not a JSON object");
  EXPECT_EQ(Render("x", {{"user", "a", "{\"k\": tru}"}}),
            "error: message 0: extra_json: JSON at byte 6: not a JSON value");
  const std::string deep(100000, '[');
  EXPECT_NE(Render("x", hi, deep)
                .find("error: tools_json: JSON at byte 64: nested deeper "
                      "than kMaxJsonDepth"),
            std::string::npos);
}

// A program as version 1 wrote it: nine inputs, so slot 9 is its own variable.
struct V1Program {
  std::vector<uint8_t> code;
  std::vector<uint8_t> strings;
  std::vector<uint32_t> offsets;
  ChatProgramTables tables;

  void Emit(tmpl::Op op, uint32_t operand) {
    code.push_back(static_cast<uint8_t>(op));
    for (int i = 0; i < 4; ++i) code.push_back(static_cast<uint8_t>(operand >> (8 * i)));
  }
  explicit V1Program(uint32_t num_slots) {
    const std::string text = "v1:";
    strings.assign(text.begin(), text.end());
    offsets = {0, static_cast<uint32_t>(text.size())};
    // {% set x = 'v1:' %}{{ x }}{{ messages[0].content }}, x in slot 9
    Emit(tmpl::Op::kPushString, 0);
    Emit(tmpl::Op::kStore, 9);
    Emit(tmpl::Op::kLoad, 9);
    code.push_back(static_cast<uint8_t>(tmpl::Op::kOutput));
    Emit(tmpl::Op::kLoad, tmpl::kSlotMessages);
    Emit(tmpl::Op::kPushInt, 0);
    code.push_back(static_cast<uint8_t>(tmpl::Op::kGetItem));
    Emit(tmpl::Op::kGetAttr, 1);  // the string "content"
    code.push_back(static_cast<uint8_t>(tmpl::Op::kOutput));
    const std::string content = "content";
    strings.insert(strings.end(), content.begin(), content.end());
    offsets.push_back(static_cast<uint32_t>(strings.size()));
    tables.format_version = 1;
    tables.code = code.data();
    tables.code_size = code.size();
    tables.string_bytes = strings.data();
    tables.string_bytes_size = strings.size();
    tables.string_offsets = offsets.data();
    tables.num_strings = offsets.size() - 1;
    tables.num_slots = num_slots;
    tables.max_stack = 2;
  }
};

TEST(TemplateToolsTest, VersionOneProgramsRenderAndRefuseTools) {
  V1Program v1(10);
  ChatTemplate t;
  ASSERT_TRUE(t.Init(v1.tables, 1).ok());
  const ChatMessage messages[] = {{"user", "hello", R"({"name": "n"})"}};
  char buffer[4096];
  size_t length = 0;
  ChatTemplateOptions options;
  ASSERT_TRUE(t.Render(messages, 1, options, buffer, sizeof(buffer), &length).ok());
  EXPECT_EQ(std::string(buffer, length), "v1:hello");
  options.tools_json = "[]";
  const Status s = t.Render(messages, 1, options, buffer, sizeof(buffer), &length);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_STREQ(s.message(),
               "this model's chat template was compiled before tools were supported: "
               "convert it again");
  // Nine slots were enough for version 1; version 2 needs ten; others are refused.
  V1Program nine(9);
  nine.tables.max_stack = 2;
  std::vector<uint8_t> code = nine.code;
  code[6] = code[11] = 8;  // x in slot 8 (raise_exception's: only to fit nine)
  nine.tables.code = code.data();
  EXPECT_TRUE(t.Init(nine.tables, 1).ok());
  nine.tables.format_version = 2;
  EXPECT_FALSE(t.Init(nine.tables, 1).ok());
  for (uint32_t version : {0u, 3u}) {
    v1.tables.format_version = version;
    const Status bad = t.Init(v1.tables, 1);
    EXPECT_EQ(bad.code(), StatusCode::kInvalidModel);
    EXPECT_NE(std::string(bad.message()).find("this build runs versions 1 to 2"),
              std::string::npos)
        << bad.message();
  }
}

// What the compiler writes now: version 2, with `tools` in slot 9.
TEST(TemplateToolsTest, TheCompilerWritesVersionTwo) {
  jinja::Body body;
  ChatProgramSpec program;
  ASSERT_TRUE(jinja::Parse("{{ tools }}", &body).ok());
  ASSERT_TRUE(jinja::Compile(body, &program).ok());
  ProgramStorage storage;
  const ChatProgramTables t = TablesOf(program, &storage);
  EXPECT_EQ(t.format_version, 2u);
  EXPECT_EQ(tmpl::kFormatVersion, 2u);
  EXPECT_GE(t.num_slots, 10u);
  EXPECT_EQ(std::string(tmpl::kInputNames[tmpl::kSlotTools]), "tools");
}

}  // namespace
}  // namespace ember::tools
