// The chat template compiler and machine on what they must refuse or survive: constructs
// the runtime cannot run are refused naming them and their line; a corrupted program is
// refused at load or fails its render cleanly (never a crash: ASan runs this too); a
// buffer too small is an error at every size until the render fits, then the output is
// exact; a runaway template stops at the step budget.
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/chat/chat_template.h"
#include "runtime/chat/chat_template_format.h"
#include "runtime/model/model.h"
#include "testing/testing.h"
#include "tools/template/chat_program.h"
#include "tools/template/hf_chat_config.h"
#include "tools/template/jinja_compiler.h"
#include "tools/template/jinja_parser.h"

namespace ember::tools {
namespace {

Status CompileSource(const std::string& source, ChatProgramSpec* program) {
  jinja::Body body;
  EMBER_RETURN_IF_ERROR(jinja::Parse(source, &body));
  return jinja::Compile(body, program);
}

TEST(JinjaTest, UnsupportedConstructsAreRefusedByNameAndLine) {
  const struct {
    const char* source;
    const char* message;
  } cases[] = {
      {"a\n{% macro f() %}x{% endmacro %}",
       "line 2, column 4: {% macro %} is not supported"},
      {"{% include 'x' %}", "{% include %} is not supported"},
      {"{% raw %}x{% endraw %}", "{% raw %} is not supported"},
      {"{{ x | wordcount }}", "line 1, column 8: filter 'wordcount' is not supported"},
      {"{{ x is callable }}", "test 'callable' is not supported"},
      {"{{ x.format(1) }}", "method 'format' is not supported"},
      {"{% for x in y %}{{ loop.cycle('a') }}{% endfor %}",
       "loop.cycle() is not supported"},
      {"{% for x in y %}{{ loop.depth }}{% endfor %}", "loop.depth is not supported"},
      {"{% for x in y %}{% set l = loop %}{% endfor %}", "`loop` as a value"},
      {"{% for x in y recursive %}{% endfor %}", "recursive loops are not supported"},
      {"{% set x %}a{% endset %}", "block assignments"},
      {"{{ f(*args) }}", "*args and **kwargs are not supported"},
      {"{{ x | map('upper') }}", "map with a filter name is not supported"},
      {"{{ x | join(foo=1) }}", "filter 'join' has no argument 'foo'"},
      {"{{ 'a' | replace('a', 'b', 1, 2) }}",
       "filter 'replace' takes at most 3 arguments"},
      {"{% if x %}", "{% if %} without {% endif %}"},
      {"{% for x in y %}", "{% for %} without {% endfor %}"},
      {"{% endif %}", "unexpected {% endif %}"},
      {"{{ 'abc }}", "unclosed string"},
      {"{{ x", "unclosed tag"},
      {"{# x", "unclosed comment"},
      {"{{ x ? y }}", "unexpected character in a tag"},
      {"{% break %}", "{% break %} outside a loop"},
      {"{{ 99999999999 }}", "integer literal too large"},
  };
  for (const auto& c : cases) {
    ChatProgramSpec program;
    const Status s = CompileSource(c.source, &program);
    EXPECT_FALSE(s.ok()) << c.source;
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos)
        << c.source << " -> " << s.message();
  }
}

std::string Repeat(const std::string& piece, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += piece;
  return out;
}

// Nesting and chains past the limits are refused with a message, whatever builds them
// (the parser once overflowed an 8 MB stack on 1,760 nested brackets); within the
// limits they compile. Bounded far below a phone's 1 MB thread stack.
TEST(JinjaTest, DeepNestingIsRefusedNotAStackOverflow) {
  const std::string nest = "nest deeper than the 64 levels";
  const std::string deep = "an expression deeper than the 256 levels";
  const struct {
    std::string source;
    const char* message;  // null: compiles
  } cases[] = {
      {"{{ " + Repeat("(", 100000) + "1" + Repeat(")", 100000) + " }}", nest.c_str()},
      {"{{ " + Repeat("[", 2000) + "1" + Repeat("]", 2000) + " }}", nest.c_str()},
      {"{{ " + Repeat("{'a': ", 2000) + "1" + Repeat("}", 2000) + " }}", nest.c_str()},
      {"{{ " + Repeat("not ", 100000) + "x }}", nest.c_str()},
      {"{{ " + Repeat("- ", 100000) + "1 }}", nest.c_str()},
      {"{{ " + Repeat("1 if x else ", 100000) + "1 }}", nest.c_str()},
      {"{{ x" + Repeat("[(", 2000) + "0" + Repeat(")]", 2000) + " }}", nest.c_str()},
      {"{{ f" + Repeat("(g", 2000) + Repeat(")", 2000) + " }}", nest.c_str()},
      {Repeat("{% if x %}", 100000) + Repeat("{% endif %}", 100000), nest.c_str()},
      {Repeat("{% for x in y %}", 2000) + Repeat("{% endfor %}", 2000), nest.c_str()},
      {"{{ x" + Repeat(" ~ x", 100000) + " }}", deep.c_str()},
      {"{{ x" + Repeat(" + x", 300) + " }}", deep.c_str()},
      {"{{ x" + Repeat(" == x", 300) + " }}", deep.c_str()},
      {"{{ x" + Repeat(".a", 100000) + " }}", deep.c_str()},
      {"{{ x" + Repeat("[0]", 300) + " }}", deep.c_str()},
      {"{{ x" + Repeat(" | trim", 100000) + " }}", deep.c_str()},
      {"{{ x" + Repeat(" is string", 300) + " }}", deep.c_str()},
      {"{{ " + Repeat("(", 50) + "1" + Repeat(")", 50) + " }}", nullptr},
      {"{{ " + Repeat("- ", 50) + "1 }}", nullptr},
      {Repeat("{% if x %}", 50) + Repeat("{% endif %}", 50), nullptr},
      {"{{ x" + Repeat(" ~ x", 200) + " }}", nullptr},
      {"{{ x" + Repeat(".a", 200) + " }}", nullptr},
  };
  for (const auto& c : cases) {
    ChatProgramSpec program;
    const Status s = CompileSource(c.source, &program);
    const std::string head = c.source.substr(0, 40);
    if (!c.message) {
      EXPECT_TRUE(s.ok()) << head << " -> " << s.message();
      continue;
    }
    EXPECT_FALSE(s.ok()) << head;
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos)
        << head << " -> " << s.message();
  }
}

// Qwen3's template (the longest of the ones shipped here), or a stand-in without it.
std::string BigTemplate() {
  const std::string path = testing::ModelsDir() + "/hf-tokenizers/qwen3";
  std::string source;
  ChatProgramSpec texts;
  if (ReadHfChatConfig(path, &source, &texts).ok() && !source.empty()) return source;
  return "{% set ns = namespace(n=0) %}{% for m in messages[::-1] %}{% if m.role == "
         "'user' "
         "%}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}{% for m in messages %}"
         "{{ '<' ~ m.role ~ '>' ~ m.content | trim ~ '\\n' }}{% endfor %}{{ ns.n }}";
}

const std::vector<ChatMessage> kConversation = {
    {"system", "Be brief."},
    {"user", "Hi"},
    {"assistant", "<think>\nhm\n</think>\n\nHello!"},
    {"user", "And?"}};

TEST(JinjaTest, ACorruptedProgramIsRefusedOrFailsCleanly) {
  ChatProgramSpec program;
  ASSERT_TRUE(CompileSource(BigTemplate(), &program).ok());
  std::string want;
  ASSERT_TRUE(
      RenderProgram(program, 1, kConversation, ChatTemplateOptions(), &want).ok());
  std::mt19937 rng(7);
  std::vector<char> buffer(1 << 16);
  int refused = 0, failed = 0, rendered = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    ChatProgramSpec bad = program;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      switch (rng() % 4) {
        case 0:
        case 1:
          bad.code[rng() % bad.code.size()] = static_cast<uint8_t>(rng());
          break;
        case 2:
          bad.num_slots = static_cast<uint32_t>(rng() % (program.num_slots + 2));
          break;
        case 3:
          bad.max_stack = static_cast<uint32_t>(rng() % (program.max_stack + 2));
          bad.max_loops = static_cast<uint32_t>(rng() % (program.max_loops + 2));
          break;
      }
    }
    ProgramStorage storage;
    ChatTemplate t;
    if (!t.Init(TablesOf(bad, &storage), 1).ok()) {
      ++refused;
      continue;
    }
    size_t length = 0;
    const Status s =
        t.Render(kConversation.data(), kConversation.size(), ChatTemplateOptions(),
                 buffer.data(), buffer.size(), &length);
    (s.ok() ? rendered : failed) += 1;
    EXPECT_LE(length, buffer.size());
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(failed + rendered, 0);
}

TEST(JinjaTest, EveryTooSmallBufferIsAnErrorThenTheOutputIsExact) {
  ChatProgramSpec program;
  ASSERT_TRUE(CompileSource(BigTemplate(), &program).ok());
  ProgramStorage storage;
  ChatTemplate t;
  ASSERT_TRUE(t.Init(TablesOf(program, &storage), 1).ok());
  std::string want;
  ASSERT_TRUE(RenderToString(t, kConversation, ChatTemplateOptions(), &want).ok());
  bool fitted = false;
  for (size_t capacity = 0; capacity < 65536 && !fitted; capacity += 1 + capacity / 64) {
    std::vector<char> buffer(capacity + 1, '\x7f');
    size_t length = 0;
    const Status s = t.Render(kConversation.data(), kConversation.size(),
                              ChatTemplateOptions(), buffer.data(), capacity, &length);
    EXPECT_EQ(buffer[capacity], '\x7f') << "wrote past a buffer of " << capacity;
    if (s.ok()) {
      EXPECT_EQ(std::string(buffer.data(), length), want) << capacity;
      fitted = true;
    } else {
      EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.message();
    }
  }
  EXPECT_TRUE(fitted);
}

TEST(JinjaTest, ARunawayTemplateStopsAtTheStepBudget) {
  ChatProgramSpec program;
  // One list, walked 10^9 times over: no allocation, only steps.
  ASSERT_TRUE(CompileSource("{% set r = range(1000) %}{% for a in r %}{% for b in r %}"
                            "{% for c in r %}{% endfor %}{% endfor %}{% endfor %}",
                            &program)
                  .ok());
  ProgramStorage storage;
  ChatTemplate t;
  ASSERT_TRUE(t.Init(TablesOf(program, &storage), 1).ok());
  std::vector<char> buffer(1 << 16);
  size_t length = 0;
  ChatTemplateOptions options;
  options.max_steps = 100000;  // the default, 2^24, takes a second to reach
  const Status s = t.Render(nullptr, 0, options, buffer.data(), buffer.size(), &length);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(s.message()).find("more than 100000 steps"), std::string::npos)
      << s.message();
}

// The loader checks a model's program: a jump into the middle of an instruction is a
// file the writer refuses to write.
TEST(JinjaTest, TheLoaderRefusesABadProgram) {
  ModelSpec spec = testing::TinyModelSpec();
  spec.tokenizer.chat_template = "{% if messages %}x{% endif %}";
  ASSERT_TRUE(CompileChatTemplate(&spec.tokenizer).ok());
  std::vector<uint8_t>& code = spec.tokenizer.chat_program.code;
  for (size_t i = 0; i < code.size(); i += 1) {
    if (code[i] == static_cast<uint8_t>(tmpl::Op::kJumpIfFalse)) {
      code[i + 1] = static_cast<uint8_t>(code[i + 1] + 1);  // one byte further
      break;
    }
  }
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(SerializeModel(spec, &bytes).ok());
  testing::AlignedBytes aligned(bytes);
  auto model = Model::FromMemory(aligned.data(), aligned.size());
  ASSERT_FALSE(model.ok());
  EXPECT_NE(std::string(model.status().message()).find("chat template"),
            std::string::npos)
      << model.status().message();
}

// tokenizer_config.json's chat fields (ember template --tokenizer, convert --hf): a field
// of the wrong type is an error naming it, never an empty template or token text.
TEST(HfChatConfigTest, WrongTypesAreErrorsNamingTheKey) {
  const struct {
    const char* json;
    const char* message;  // null: read
  } cases[] = {
      {"7", "cfg: not a JSON object"},
      {R"(["{{ x }}"])", "cfg: not a JSON object"},
      {R"({"chat_template": {"default": "x"}})", "chat_template is neither"},
      {R"({"chat_template": ["x"]})", "chat_template lists string"},
      {R"({"chat_template": [{"name": 1, "template": "x"}]})",
       "cfg chat_template: 'name' must be a string"},
      {R"({"bos_token": true})", "cfg: 'bos_token' must be a string"},
      {R"({"unk_token": {"text": "<unk>"}})", "cfg: 'unk_token' must be a string"},
      {R"({"chat_template": null, "bos_token": {"content": "<s>"}, "pad_token": null})",
       nullptr},
  };
  for (const auto& c : cases) {
    std::string source;
    ChatProgramSpec program;
    const Status s = ReadChatConfigFields(Json::parse(c.json), "cfg", &source, &program);
    if (!c.message) {
      EXPECT_TRUE(s.ok()) << c.json << ": " << s.message();
      EXPECT_EQ(program.bos_token, "<s>");
      continue;
    }
    EXPECT_FALSE(s.ok()) << c.json;
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace ember::tools
