// Tests of the JSON Schema converter (json_schema.h) as a unit: a schema's grammar
// compiles and accepts what the schema does, refusals name the keyword and where it
// stands, malformed JSON names its byte, nesting is bounded. The grammar's sentences
// against python3-jsonschema: tests/grammar/check_schema.py.
#include "runtime/grammar/json_schema.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/grammar/gbnf.h"
#include "runtime/grammar/grammar_matcher.h"
#include "runtime/grammar/grammar_program.h"

namespace ember::grammar {
namespace {

std::string Convert(const std::string& schema) {
  std::string gbnf;
  const Status s = JsonSchemaTextToGbnf(schema, "s.json", &gbnf);
  EXPECT_TRUE(s.ok()) << s.message();
  return gbnf;
}

Status Refusal(const std::string& schema) {
  std::string gbnf = "untouched";
  const Status s = JsonSchemaTextToGbnf(schema, "s.json", &gbnf);
  EXPECT_FALSE(s.ok()) << schema;
  EXPECT_EQ(gbnf, "untouched");
  return s;
}

TEST(JsonSchemaTest, ConvertsToAGrammarThatCompiles) {
  const std::string gbnf = Convert(
      R"({"type": "object", "properties": {"name": {"type": "string", "maxLength": 20},
          "age": {"type": "integer", "minimum": 0, "maximum": 150},
          "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3}},
          "required": ["name", "age"]})");
  EXPECT_EQ(gbnf.rfind("root ::= ws value-root ws\nvalue-root ::= ", 0), 0u) << gbnf;
  EXPECT_NE(gbnf.find("\"\\\"name\\\"\" ws \":\" ws"), std::string::npos) << gbnf;
  EXPECT_NE(gbnf.find("( \"\\\"a\\\"\" | \"\\\"b\\\"\" )"), std::string::npos) << gbnf;
  std::vector<uint32_t> words;
  const Status compiled = CompileGbnf(gbnf, "root", &words);
  ASSERT_TRUE(compiled.ok()) << compiled.message() << "\n" << gbnf;
  Program program;
  EXPECT_TRUE(program.Bind(words.data(), words.size()).ok());
}

TEST(JsonSchemaTest, RefusesUnsupportedKeywordsByName) {
  Status s = Refusal(R"({"type": "string", "pattern": "a+"})");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_STREQ(s.message(), "s.json: JSON Schema at '/': keyword 'pattern' is not supported");
  s = Refusal(R"({"properties": {"a": {"not": {}}}})");
  EXPECT_STREQ(s.message(),
               "s.json: JSON Schema at '/properties/a': keyword 'not' is not supported");
  s = Refusal(R"({"type": "string", "format": "email"})");
  EXPECT_NE(std::string(s.message()).find("format 'email' is not supported"),
            std::string::npos);
  s = Refusal(R"({"type": "number", "minimum": 1})");
  EXPECT_NE(std::string(s.message()).find("integers only"), std::string::npos);
  s = Refusal(R"({"$ref": "http://example.com/s"})");
  EXPECT_NE(std::string(s.message()).find("is not a local"), std::string::npos);
  s = Refusal(R"({"type": "array", "maxItems": 1001})");
  EXPECT_NE(std::string(s.message()).find("maxItems 1001 is above 1000"), std::string::npos);
  s = Refusal(R"({"type": "array", "minItems": 1.5})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("not a non-negative integer"), std::string::npos);
  s = Refusal(R"({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})");
  EXPECT_NE(std::string(s.message()).find("comes back to itself"), std::string::npos);
}

TEST(JsonSchemaTest, MalformedJsonNamesItsByte) {
  const Status s = Refusal(R"({"type": "string",})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_STREQ(s.message(), "s.json: not valid JSON at byte 18: a key (a string) expected");
  EXPECT_NE(std::string(Refusal("{\"enum\": [\"\xFF\"]}").message()).find("invalid UTF-8"),
            std::string::npos);
}

// kMaxSchemaDepth schemas inside schemas; the text's nesting is checked first (about
// twice that in objects and arrays), so a hostile text never reaches the walk.
TEST(JsonSchemaTest, BoundsNesting) {
  const auto nested = [](int n) {  // n properties inside properties
    std::string s;
    for (int i = 0; i < n; ++i) s += R"({"properties": {"a": )";
    return s + "{}" + std::string(2 * static_cast<size_t>(n), '}');
  };
  Convert(nested(kMaxSchemaDepth));
  Status s = Refusal(nested(kMaxSchemaDepth + 1));
  EXPECT_NE(std::string(s.message()).find("nested deeper than 64 levels"), std::string::npos)
      << s.message();
  s = Refusal(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_STREQ(s.message(), "s.json: JSON nested deeper than 136 levels");
  EXPECT_TRUE(CheckNesting(R"({"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["})", "x").ok());
  // Arrays of arrays write their items twice a level: 64 of them would be 2^64 bytes.
  std::string items;
  for (int i = 0; i < kMaxSchemaDepth; ++i) items += R"({"items": )";
  items += "{}" + std::string(kMaxSchemaDepth, '}');
  s = Refusal(items);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(std::string(s.message()).find("grows past"), std::string::npos) << s.message();
}

// Several schemas in one grammar share the primitives, each under its own name.
TEST(JsonSchemaTest, SeveralSchemasShareThePrimitives) {
  std::string rules;
  const std::string a = R"({"type": "object", "properties": {"x": {"type": "string"}}})";
  const std::string b = R"({"enum": [1, 2]})";
  ASSERT_TRUE(JsonSchemasToRules({{"fa", a}, {"fb", b}}, &rules).ok());
  EXPECT_NE(rules.find("fa ::= "), std::string::npos);
  EXPECT_NE(rules.find("fb ::= ( \"1\" | \"2\" )\n"), std::string::npos) << rules;
  EXPECT_NE(rules.find("fa-s0 ::= "), std::string::npos);
  EXPECT_EQ(rules.find("string ::= "), rules.rfind("string ::= "));  // once
  std::vector<uint32_t> words;
  EXPECT_TRUE(CompileGbnf("root ::= fa | fb\n" + rules, "root", &words).ok()) << rules;
  const Status bad = JsonSchemasToRules({{"fa", a}, {"fb", "{"}}, &rules);
  EXPECT_STREQ(bad.message(), "the schema: not valid JSON at byte 1: the text ends inside an object");
}

TEST(JsonSchemaTest, GbnfLiteralEscapes) {
  EXPECT_EQ(GbnfLiteral("a\"b\\c\n\x7F\xC3\xA9"), "\"a\\\"b\\\\c\\x0A\\x7F\xC3\xA9\"");
}

}  // namespace
}  // namespace ember::grammar
