// Tests of the JSON reader (json_reader.h): values read, key order and repeated keys,
// escapes and surrogates, numbers (integers, floats, past 64 bits, past a double), and
// hostile text refused with a byte offset: deep nesting, bad escapes, lone surrogates,
// invalid UTF-8, truncation. Then the writer against nlohmann's dump() spellings.
#include "runtime/grammar/json_reader.h"

#include <string>

#include "gtest/gtest.h"

namespace ember::grammar {
namespace {

std::string Dumped(const JsonValue& v) {
  std::string out;
  DumpJson(v, &out);
  return out;
}

JsonValue Read(std::string_view text) {
  JsonValue v;
  const Status s = ReadJson(text, 16, &v);
  EXPECT_TRUE(s.ok()) << text << ": " << s.message();
  return v;
}

// The error's message, or "" when the text reads.
std::string Refusal(std::string_view text, int max_depth = 16) {
  JsonValue v;
  const Status s = ReadJson(text, max_depth, &v);
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  return s.message();
}

TEST(JsonReaderTest, ReadsValuesKeepingKeyOrder) {
  const JsonValue v = Read(" {\"b\": [1, -2, 3.5, true, false, null], \"a\": {\"x\": \"y\"}} ");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v.key(0), "b");
  EXPECT_EQ(v.key(1), "a");
  const JsonValue& b = *v.Find("b");
  ASSERT_TRUE(b.is_array());
  ASSERT_EQ(b.size(), 6u);
  EXPECT_TRUE(b[0].is_integer());
  EXPECT_EQ(b[0].uint64(), 1u);
  EXPECT_TRUE(b[1].is_negative_integer());
  EXPECT_EQ(b[1].int64(), -2);
  EXPECT_FALSE(b[2].is_integer());
  EXPECT_EQ(b[2].number(), 3.5);
  EXPECT_EQ(b[2].text(), "3.5");
  EXPECT_TRUE(b[3].is_bool() && b[3].boolean());
  EXPECT_TRUE(b[4].is_bool() && !b[4].boolean());
  EXPECT_TRUE(b[5].is_null());
  EXPECT_EQ(v.Find("a")->Find("x")->text(), "y");
  EXPECT_EQ(v.Find("c"), nullptr);
  EXPECT_EQ(b.Find("a"), nullptr);  // not an object
  EXPECT_EQ(Dumped(v), R"({"b":[1,-2,3.5,true,false,null],"a":{"x":"y"}})");
  EXPECT_TRUE(Read("\xEF\xBB\xBF 7").is_integer());  // a byte order mark is skipped
}

// A repeated key keeps its first place and takes its last value (nlohmann's
// ordered_json did the same); objects with many keys find it through a map.
TEST(JsonReaderTest, RepeatedKeysKeepTheirFirstPlaceAndLastValue) {
  EXPECT_EQ(Dumped(Read(R"({"a": 1, "b": 2, "a": 3})")), R"({"a":3,"b":2})");
  std::string many = "{";
  for (int i = 0; i < 100; ++i) many += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",";
  many += "\"k5\": \"again\", \"k99\": null}";
  const JsonValue v = Read(many);
  EXPECT_EQ(v.size(), 100u);
  EXPECT_EQ(v.key(5), "k5");
  EXPECT_EQ(v[5].text(), "again");
  EXPECT_TRUE(v[99].is_null());
}

TEST(JsonReaderTest, UnescapesStrings) {
  const JsonValue v = Read(R"(["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "\u0000"])");
  EXPECT_EQ(v[0].text(), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(v[1].text(), "\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(v[2].text(), "\xF0\x9F\x98\x80");
  EXPECT_EQ(v[3].text(), std::string(1, '\0'));
  EXPECT_EQ(Read("\"\xF0\x9F\x98\x80 \xC3\xA9\"").text(), "\xF0\x9F\x98\x80 \xC3\xA9");
  // Written back as nlohmann writes them: short escapes, \u00XX, UTF-8 as it is.
  EXPECT_EQ(Dumped(v), "[\"a\\\"b\\\\c/d\\b\\f\\n\\r\\t\",\"\xC3\xA9\xE2\x82\xAC\","
                       "\"\xF0\x9F\x98\x80\",\"\\u0000\"]");
  EXPECT_EQ(Dumped(Read(R"("\u001f\u007f")")), "\"\\u001f\x7F\"");
}

TEST(JsonReaderTest, RefusesBadEscapesAndSurrogatesWithTheirOffset) {
  EXPECT_EQ(Refusal(R"("ab\x")"), "not valid JSON at byte 4: an escape that JSON does not have");
  EXPECT_NE(Refusal(R"("\u12")").find("four hex digits"), std::string::npos);
  EXPECT_NE(Refusal(R"("\u12G4")").find("four hex digits"), std::string::npos);
  EXPECT_EQ(Refusal(R"(["\ud800"])"),
            "not valid JSON at byte 2: a high surrogate without a low one after it");
  EXPECT_NE(Refusal(R"("\ud800\u0041")").find("without a low one"), std::string::npos);
  EXPECT_NE(Refusal(R"("\ud800\ud800")").find("without a low one"), std::string::npos);
  EXPECT_EQ(Refusal(R"("x\udc00")"),
            "not valid JSON at byte 2: a low surrogate without a high one before it");
  EXPECT_NE(Refusal("\"a\nb\"").find("control character"), std::string::npos);
  EXPECT_NE(Refusal(std::string("\"a\0b\"", 5)).find("control character"), std::string::npos);
}

TEST(JsonReaderTest, RefusesInvalidUtf8) {
  EXPECT_EQ(Refusal("\"ab\xFF\""), "not valid JSON at byte 3: invalid UTF-8");
  EXPECT_NE(Refusal("\"\xC0\xAF\"").find("invalid UTF-8"), std::string::npos);      // overlong
  EXPECT_NE(Refusal("\"\xED\xA0\x80\"").find("invalid UTF-8"), std::string::npos);  // surrogate
  EXPECT_NE(Refusal("\"\xF4\x90\x80\x80\"").find("invalid UTF-8"), std::string::npos);
  EXPECT_NE(Refusal("\"\xE2\x82\"").find("invalid UTF-8"), std::string::npos);  // cut short
  EXPECT_NE(Refusal("{\"\xE2\x82\": 1}").find("invalid UTF-8"), std::string::npos);  // a key
}

TEST(JsonReaderTest, ReadsNumbersAsNlohmannDid) {
  const JsonValue v = Read(
      "[18446744073709551615, 18446744073709551616, -9223372036854775808, "
      "-9223372036854775809, -0, 1E2, 1e-400, 0.000001e-400]");
  EXPECT_TRUE(v[0].is_integer());
  EXPECT_EQ(v[0].uint64(), UINT64_MAX);
  EXPECT_FALSE(v[1].is_integer());  // past 64 bits: a float
  EXPECT_EQ(v[1].number(), 18446744073709551616.0);
  EXPECT_TRUE(v[2].is_negative_integer());
  EXPECT_EQ(v[2].int64(), INT64_MIN);
  EXPECT_FALSE(v[3].is_integer());
  EXPECT_TRUE(v[4].is_integer());
  EXPECT_EQ(v[4].int64(), 0);
  EXPECT_FALSE(v[5].is_integer());
  EXPECT_EQ(v[6].number(), 0.0);  // below a double's smallest: zero
  EXPECT_EQ(v[7].number(), 0.0);
  EXPECT_EQ(Dumped(v), "[18446744073709551615,1.8446744073709552e+19,-9223372036854775808,"
                       "-9.223372036854776e+18,0,100.0,0.0,0.0]");
  // Huge numbers are refused, not infinity.
  EXPECT_EQ(Refusal("[1e400]"), "not valid JSON at byte 1: a number beyond a double's range");
  EXPECT_NE(Refusal("-1" + std::string(400, '0') + ".5").find("beyond"), std::string::npos);
  EXPECT_TRUE(Read("1" + std::string(400, '0') + "e-390").is_number());
}

// Floats as nlohmann's dump() spells them: shortest digits, ".0" on whole values below
// 1e15, exponents with a sign and two digits past that or below 1e-4.
TEST(JsonReaderTest, WritesFloatsAsNlohmann) {
  const char* const kCases[][2] = {
      {"1.5", "1.5"},       {"1.0", "1.0"},         {"2.50", "2.5"},
      {"-0.0", "-0.0"},     {"0.0", "0.0"},         {"1e20", "1e+20"},
      {"1e14", "100000000000000.0"},                {"1e15", "1e+15"},
      {"0.0001", "0.0001"}, {"0.00001", "1e-05"},   {"1.5e-7", "1.5e-07"},
      {"0.1", "0.1"},       {"12345678.9", "12345678.9"},
      {"1234567890123456.7", "1.2345678901234568e+15"},
      {"1.7976931348623157e308", "1.7976931348623157e+308"},
      {"5e-324", "5e-324"}, {"123e-2", "1.23"},     {"-2.5E+3", "-2500.0"},
  };
  for (const auto& c : kCases) EXPECT_EQ(Dumped(Read(c[0])), c[1]) << c[0];
}

TEST(JsonReaderTest, RefusesMalformedAndTruncatedText) {
  const char* const kBad[] = {
      "",        "   ",      "{",          "[",          "[1,",       "[1 2]",  "{\"a\"",
      "{\"a\":", "{\"a\" 1}", "{\"a\":1,}", "[1,]",       "{'a': 1}",  "{a: 1}", "tru",
      "nul",     "01",       "1.",         ".5",         "-",         "1e",     "1e+",
      "+1",      "\"abc",    "\"\\",       "[1]]",       "{} {}",     "NaN",    "Infinity",
      "[1,,2]",  "\"\\u",    "{\"a\":1 \"b\":2}",
  };
  for (const char* text : kBad) {
    const std::string message = Refusal(text);
    EXPECT_EQ(message.rfind("not valid JSON at byte ", 0), 0u) << "'" << text << "': " << message;
  }
  // Truncated anywhere, a good text is refused with an offset inside it.
  const std::string good = R"({"a": [1, 2.5, {"b": "c\u00e9\ud83d\ude00"}], "d": null})";
  for (size_t n = 0; n < good.size(); ++n) {
    const std::string message = Refusal(good.substr(0, n));
    EXPECT_EQ(message.rfind("not valid JSON at byte ", 0), 0u) << n << ": " << message;
  }
}

TEST(JsonReaderTest, RefusesNestingPastTheLimitBeforeRecursing) {
  EXPECT_EQ(Refusal(std::string(16, '[') + std::string(16, ']')), "");
  EXPECT_EQ(Refusal(std::string(17, '[') + std::string(17, ']')),
            "not valid JSON at byte 16: nested deeper than 16 levels");
  // A million levels: refused at the limit, never a stack overflow.
  std::string deep;
  for (int i = 0; i < 1000000; ++i) deep += "{\"a\":[";
  EXPECT_NE(Refusal(deep, 200).find("nested deeper than 200 levels"), std::string::npos);
}

}  // namespace
}  // namespace ember::grammar
