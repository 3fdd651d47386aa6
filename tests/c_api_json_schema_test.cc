// JSON Schema through the C API (ember_grammar.h) on stories260K: the GBNF into caller
// memory (the size asked first, a buffer too small refused), a malformed schema and an
// unsupported keyword refused with messages that say where and what, and a session whose
// greedy output under a schema is JSON the schema accepts (read back with the runtime's
// JSON reader).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "gtest/gtest.h"
#include "runtime/grammar/json_reader.h"
#include "testing/testing.h"
#include "tests/c_api_stories.h"
#include "tests/stories260k.h"

namespace ember {
namespace {

constexpr char kPerson[] =
    R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
        "age": {"type": "integer", "minimum": 1, "maximum": 99},
        "pet": {"enum": ["cat", "dog", null]}}, "required": ["name", "age"]})";

TEST(CApiJsonSchemaTest, WritesTheGrammarIntoCallerMemory) {
  size_t need = 0;  // ask first: no buffer
  ASSERT_EQ(ember_json_schema_to_grammar(kPerson, strlen(kPerson), nullptr, &need),
            EMBER_RESOURCE_EXHAUSTED);
  ASSERT_GT(need, 1u);
  std::vector<char> buffer(need, 'x');
  size_t length = need - 1;  // one byte short: nothing written, the need again
  EXPECT_EQ(ember_json_schema_to_grammar(kPerson, strlen(kPerson), buffer.data(), &length),
            EMBER_RESOURCE_EXHAUSTED);
  EXPECT_EQ(length, need);
  EXPECT_EQ(buffer[0], 'x');
  EXPECT_NE(std::string(cpp::LastError()).find("needs " + std::to_string(need) + " bytes"),
            std::string::npos)
      << cpp::LastError();
  length = need;
  ASSERT_EQ(ember_json_schema_to_grammar(kPerson, strlen(kPerson), buffer.data(), &length),
            EMBER_OK)
      << cpp::LastError();
  EXPECT_EQ(length, need - 1);  // the text's length, its NUL after it
  EXPECT_EQ(strlen(buffer.data()), length);
  const std::string gbnf(buffer.data(), length);
  EXPECT_EQ(gbnf.rfind("root ::= ws value-root ws\n", 0), 0u) << gbnf;
  EXPECT_NE(gbnf.find(R"("\"cat\"")"), std::string::npos) << gbnf;

  EXPECT_EQ(ember_json_schema_to_grammar(nullptr, 0, nullptr, &length),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_json_schema_to_grammar(kPerson, strlen(kPerson), nullptr, nullptr),
            EMBER_INVALID_ARGUMENT);
  length = 10;  // a capacity without a buffer
  EXPECT_EQ(ember_json_schema_to_grammar(kPerson, strlen(kPerson), nullptr, &length),
            EMBER_INVALID_ARGUMENT);
}

TEST(CApiJsonSchemaTest, RefusesWithMessagesThatSayWhereAndWhat) {
  char buffer[4096];
  size_t length = sizeof(buffer);
  const char kMalformed[] = R"({"type": "object", "properties": {"a": }})";
  EXPECT_EQ(ember_json_schema_to_grammar(kMalformed, strlen(kMalformed), buffer, &length),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(cpp::LastError(),
               "the schema: not valid JSON at byte 39: not a value (an object, array, "
               "string, number, true, false or null)");
  length = sizeof(buffer);
  const char kPattern[] = R"({"properties": {"code": {"type": "string", "pattern": "[A-Z]+"}}})";
  EXPECT_EQ(ember_json_schema_to_grammar(kPattern, strlen(kPattern), buffer, &length),
            EMBER_UNIMPLEMENTED);
  EXPECT_EQ(cpp::LastError(),
               "the schema: JSON Schema at '/properties/code': keyword 'pattern' is not "
               "supported");
  // A length that cuts the text: only those bytes are read.
  length = sizeof(buffer);
  EXPECT_EQ(ember_json_schema_to_grammar(kPerson, 10, buffer, &length),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cpp::LastError()).find("at byte 10"), std::string::npos)
      << cpp::LastError();
}

using CApiJsonSchemaSessionTest = CApiStoriesTest;  // stories260K, tests/c_api_stories.h

// The session plans the schema's room (ember_json_schema_bytes), then greedy generation
// under it makes JSON the schema accepts.
TEST_F(CApiJsonSchemaSessionTest, GenerationFollowsTheSchema) {
  size_t bytes = 0;
  ASSERT_EQ(ember_json_schema_bytes(model_.get(), kPerson, strlen(kPerson), &bytes), EMBER_OK)
      << cpp::LastError();
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(model_.JsonSchemaBytes(kPerson), bytes);
  ember_session_options options;
  ember_session_options_default(&options);
  options.grammar_bytes = bytes;
  cpp::Session session;
  ASSERT_EQ(session.Create(model_, &options), EMBER_OK) << cpp::LastError();
  ember_sampler_options greedy;
  ember_sampler_options_default(&greedy);
  greedy.temperature = 0;
  ASSERT_EQ(session.SetSampler(greedy), EMBER_OK);
  ASSERT_EQ(session.SetJsonSchema(kPerson), EMBER_OK) << cpp::LastError();
  std::vector<int32_t> prompt;
  ASSERT_EQ(session.Tokenize("Once upon a time", true, &prompt), EMBER_OK);
  std::string text;
  auto collect = [&](int32_t, std::string_view piece) {
    text.append(piece);
    return true;
  };
  ASSERT_EQ(session.Generate(prompt, 400, collect), EMBER_OK) << cpp::LastError();
  EXPECT_TRUE(session.GrammarComplete());
  grammar::JsonValue value;
  const Status read = grammar::ReadJson(text, 8, &value);
  ASSERT_TRUE(read.ok()) << read.message() << ": " << text;
  ASSERT_TRUE(value.is_object()) << text;
  const grammar::JsonValue* name = value.Find("name");
  const grammar::JsonValue* age = value.Find("age");
  ASSERT_TRUE(name != nullptr && name->is_string()) << text;
  ASSERT_TRUE(age != nullptr && age->is_integer()) << text;
  EXPECT_GE(age->int64(), 1) << text;
  EXPECT_LE(age->int64(), 99) << text;
  for (size_t i = 0; i < value.size(); ++i) {
    EXPECT_TRUE(value.key(i) == "name" || value.key(i) == "age" || value.key(i) == "pet")
        << text;
  }
  if (const grammar::JsonValue* pet = value.Find("pet")) {
    EXPECT_TRUE(pet->is_null() || pet->text() == "cat" || pet->text() == "dog") << text;
  }

  // A refused schema leaves the grammar as it was; NULL removes it.
  const char kBad[] = R"({"type": "string", "pattern": "a"})";
  EXPECT_EQ(ember_session_set_json_schema(session.get(), kBad, strlen(kBad)),
            EMBER_UNIMPLEMENTED);
  EXPECT_NE(std::string(cpp::LastError()).find("keyword 'pattern'"), std::string::npos);
  EXPECT_EQ(ember_session_set_json_schema(session.get(), nullptr, 0), EMBER_OK);
  text.clear();
  ASSERT_EQ(session.Generate(prompt, 8, collect), EMBER_OK) << cpp::LastError();
  EXPECT_NE(text.front(), '{') << text;  // free text again: the story
  EXPECT_EQ(ember_session_set_json_schema(nullptr, kPerson, strlen(kPerson)),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_chat_set_json_schema(nullptr, kPerson, strlen(kPerson)),
            EMBER_INVALID_ARGUMENT);
}

// A session planned without grammar room refuses the schema's grammar, naming its bytes.
TEST_F(CApiJsonSchemaSessionTest, ASessionWithoutRoomRefusesIt) {
  cpp::Session session;
  ASSERT_EQ(session.Create(model_), EMBER_OK);
  EXPECT_EQ(session.SetJsonSchema(kPerson), EMBER_RESOURCE_EXHAUSTED);
  EXPECT_NE(std::string(cpp::LastError()).find("planned 0"), std::string::npos)
      << cpp::LastError();
}

}  // namespace
}  // namespace ember
