// The chat template's JSON reader (ParseJson) against RFC 8259 and Python's json.loads:
// what it reads and how, what it refuses and where, hostile input (deep nesting, huge
// objects and numbers, every truncation) and a heap too small at every size.
#include <chrono>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/chat/template_value.h"

namespace ember::tmpl {
namespace {

// A heap over its own buffer.
struct Scratch {
  explicit Scratch(size_t bytes) : buffer(bytes), heap(buffer.data(), bytes) {}
  std::vector<char> buffer;
  Heap heap;
};

// The text parsed and written back as tojson writes it, or the error's message.
std::string RoundTrip(std::string_view text, size_t heap_bytes = 1 << 20) {
  Scratch s(heap_bytes);
  Value v;
  const Status status = ParseJson(text, &s.heap, &v);
  if (!status.ok()) return std::string("error: ") + status.message();
  s.heap.Begin();
  if (!AppendJson(v, -1, 0, &s.heap)) return "unwritable";
  const Value out = s.heap.End();
  return std::string(out.str());
}

Status Parse(std::string_view text, Value* v, Scratch* s) {
  return ParseJson(text, &s->heap, v);
}

TEST(TemplateJsonTest, ReadsEveryKindAsPythonsJsonDoes) {
  Scratch s(1 << 16);
  Value v;
  ASSERT_TRUE(
      Parse(" {\"a\": [1, -2.5, true, false, null, \"x\"], \"b\": {}} ", &v, &s).ok());
  ASSERT_EQ(v.kind, Kind::kDict);
  ASSERT_EQ(v.dict->count, 2u);
  EXPECT_EQ(v.dict->keys[0].str(), "a");
  const Value a = v.dict->values[0];
  ASSERT_EQ(a.kind, Kind::kList);
  ASSERT_EQ(a.list->count, 6u);
  EXPECT_EQ(a.list->at(0).kind, Kind::kInt);
  EXPECT_EQ(a.list->at(0).i, 1);
  EXPECT_EQ(a.list->at(1).kind, Kind::kFloat);
  EXPECT_EQ(a.list->at(1).f, -2.5);
  EXPECT_EQ(a.list->at(2).kind, Kind::kBool);
  EXPECT_TRUE(a.list->at(2).b);
  EXPECT_FALSE(a.list->at(3).b);
  EXPECT_EQ(a.list->at(4).kind, Kind::kNone);
  EXPECT_EQ(a.list->at(5).str(), "x");
  EXPECT_EQ(v.dict->values[1].kind, Kind::kDict);
  EXPECT_EQ(v.dict->values[1].dict->count, 0u);

  for (const char* scalar : {"0", "-0", "17", "true", "null", "\"s\"", "[]", "{}"}) {
    EXPECT_EQ(RoundTrip(scalar), std::string(scalar) == "-0" ? "0" : scalar) << scalar;
  }
  // Integers that fit int64 stay ints; larger ones, fractions and exponents are floats.
  EXPECT_EQ(RoundTrip("[9223372036854775807, -9223372036854775808]"),
            "[9223372036854775807, -9223372036854775808]");
  EXPECT_EQ(RoundTrip("[9223372036854775808, -9223372036854775809]"),
            "[9.223372036854776e+18, -9.223372036854776e+18]");
  EXPECT_EQ(RoundTrip("[1.0, 1e2, 1E-2, -0.0, 0.1, 2.5e+3, 1e400, -1e400, 1e-400]"),
            "[1.0, 100.0, 0.01, -0.0, 0.1, 2500.0, Infinity, -Infinity, 0.0]");
  // A number of 400 digits (past the 63 read on the stack).
  EXPECT_EQ(RoundTrip(std::string(400, '9')), "Infinity");
  EXPECT_EQ(RoundTrip("0." + std::string(300, '0') + "5"), "5e-301");
}

TEST(TemplateJsonTest, StringsAreUnescapedToUtf8) {
  EXPECT_EQ(RoundTrip(R"("a\"b\\c\/d\b\f\n\r\t")"), R"("a\"b\\c/d\b\f\n\r\t")");
  EXPECT_EQ(RoundTrip(R"("\u00e9\u20AC\ud83d\ude00 caf\u00E9")"),
            "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 caf\xc3\xa9\"");
  EXPECT_EQ(RoundTrip("\"d\xc3\xa9j\xc3\xa0 \xf0\x9f\x98\x80\""),
            "\"d\xc3\xa9j\xc3\xa0 \xf0\x9f\x98\x80\"");
  Scratch s(1 << 12);
  Value v;
  ASSERT_TRUE(Parse(R"("a\u0000b")", &v, &s).ok());
  EXPECT_EQ(v.str(), std::string_view("a\0b", 3));
  // Without escapes a string is a view of the text: nothing copied.
  const std::string text = "[\"plain\"]";
  ASSERT_TRUE(Parse(text, &v, &s).ok());
  EXPECT_EQ(v.list->at(0).s, text.data() + 2);
}

TEST(TemplateJsonTest, ObjectsKeepTheirOrderAndTheLastOfARepeatedKey) {
  EXPECT_EQ(RoundTrip(R"({"z": 1, "a": 2, "m": 3})"), R"({"z": 1, "a": 2, "m": 3})");
  // Python: json.loads('{"a": 1, "b": 2, "a": 3}') == {'a': 3, 'b': 2}.
  EXPECT_EQ(RoundTrip(R"({"a": 1, "b": 2, "a": 3})"), R"({"a": 3, "b": 2})");
  // Past the linear search: 1,000 keys, each written twice.
  std::string big = "{", want = "{";
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 1000; ++i) {
      big += (round || i ? ", \"k" : "\"k") + std::to_string(i) +
             "\": " + std::to_string(round * 1000 + i);
      if (round == 1) {
        want +=
            (i ? ", \"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(1000 + i);
      }
    }
  }
  EXPECT_EQ(RoundTrip(big + "}"), want + "}");
}

TEST(TemplateJsonTest, MalformedTextIsRefusedWithItsOffset) {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {"", "JSON at byte 0: a value is missing"},
      {"   ", "JSON at byte 3: a value is missing"},
      {"[1, 2", "JSON at byte 5: expected ',' or ']'"},
      {"[1, 2,]", "JSON at byte 6: not a JSON value"},
      {"{\"a\": 1,}", "JSON at byte 8: expected a key"},
      {"{\"a\" 1}", "JSON at byte 5: expected ':'"},
      {"{a: 1}", "JSON at byte 1: expected a key"},
      {"{'a': 1}", "JSON at byte 1: expected a key"},
      {"[1] [2]", "JSON at byte 4: text after the value"},
      {"[1] // comment", "JSON at byte 4: text after the value"},
      {"\"abc", "JSON at byte 0: unterminated string"},
      {"\"a\\", "JSON at byte 0: unterminated string"},
      {"\"a\nb\"", "JSON at byte 2: a control character in a string"},
      {"\"\\x41\"", "JSON at byte 1: an unknown escape"},
      {"\"\\u12G4\"", "JSON at byte 1: \\u needs four hex digits"},
      {"\"\\u12\"", "JSON at byte 1: \\u needs four hex digits"},
      {"\"\\ud800\"", "JSON at byte 1: a high surrogate without its low surrogate"},
      {"\"\\ud800\\u0041\"",
       "JSON at byte 1: a high surrogate without its low surrogate"},
      {"\"x\\udc00\"", "JSON at byte 2: a lone low surrogate"},
      {"01", "JSON at byte 0: a leading zero"},
      {"-", "JSON at byte 0: a number needs digits"},
      {"+1", "JSON at byte 0: not a JSON value"},
      {".5", "JSON at byte 0: not a JSON value"},
      {"1.", "JSON at byte 2: a fraction needs digits"},
      {"1e", "JSON at byte 2: an exponent needs digits"},
      {"1e+", "JSON at byte 3: an exponent needs digits"},
      {"NaN", "JSON at byte 0: not a JSON value"},
      {"Infinity", "JSON at byte 0: not a JSON value"},
      {"-Infinity", "JSON at byte 0: a number needs digits"},
      {"tru", "JSON at byte 0: not a JSON value"},
      {"nul", "JSON at byte 0: not a JSON value"},
      {"\xef\xbb\xbf[]", "JSON at byte 0: not a JSON value"},  // a BOM
      {"\"\xc0\xaf\"", "JSON at byte 1: invalid UTF-8"},       // overlong '/'
      {"\"\xed\xa0\x80\"", "JSON at byte 1: invalid UTF-8"},   // an encoded surrogate
      {"[\"\xe2\x82\"]", "JSON at byte 2: invalid UTF-8"},     // truncated
      {"\"\xff\"", "JSON at byte 1: invalid UTF-8"},
  };
  for (const auto& c : cases) {
    Scratch s(1 << 12);
    Value v;
    const Status status = Parse(c.text, &v, &s);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_EQ(std::string(status.message()), c.message) << c.text;
  }
}

// Every proper prefix of a document is refused (none is a document itself), never read
// past its end (ASan runs this too).
TEST(TemplateJsonTest, EveryTruncationIsRefused) {
  const std::string doc =
      R"({"tools": [{"name": "f\u00e9", "n": -12.5e-3, "ok": [true, false, null]}],)"
      "\"s\": \"\\ud83d\\ude00 caf\xc3\xa9\"}";
  ASSERT_EQ(RoundTrip(doc).substr(0, 6), "{\"tool");
  for (size_t n = 0; n < doc.size(); ++n) {
    // Held in a buffer of exactly n bytes so that ASan sees a read past it.
    std::vector<char> prefix(doc.begin(), doc.begin() + n);
    Scratch s(1 << 14);
    Value v;
    const Status status = Parse(std::string_view(prefix.data(), n), &v, &s);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << n;
  }
}

// Nesting stops at kMaxJsonDepth with a message naming it, however deep the text goes,
// and quickly.
TEST(TemplateJsonTest, NestingIsLimited) {
  const auto nested = [](int depth, const char* open, const char* close) {
    std::string s;
    for (int i = 0; i < depth; ++i) s += open;
    s += "1";
    for (int i = 0; i < depth; ++i) s += close;
    return s;
  };
  EXPECT_EQ(RoundTrip(nested(kMaxJsonDepth, "[", "]")), nested(kMaxJsonDepth, "[", "]"));
  const std::string too_deep = RoundTrip(nested(kMaxJsonDepth + 1, "[", "]"));
  EXPECT_NE(too_deep.find("nested deeper than kMaxJsonDepth (64 arrays and objects)"),
            std::string::npos)
      << too_deep;
  EXPECT_NE(RoundTrip(nested(kMaxJsonDepth + 1, "{\"a\": ", "}")).find("kMaxJsonDepth"),
            std::string::npos);
  const auto start = std::chrono::steady_clock::now();
  for (const char* open : {"[", "{\"k\":", "[{\"a\":[", "[[[[[[[[[["}) {
    std::string hostile;
    while (hostile.size() < 100000) hostile += open;
    EXPECT_NE(RoundTrip(hostile).find("JSON at byte"), std::string::npos);
    EXPECT_NE(RoundTrip(hostile + nested(0, "", "")).find("kMaxJsonDepth"),
              std::string::npos);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// Hostile sizes: a huge object or array either fits the heap or is ResourceExhausted;
// it never takes quadratic time.
TEST(TemplateJsonTest, HugeInputsFitOrExhaustTheHeap) {
  std::string keys = "{";
  for (int i = 0; i < 100000; ++i) {
    keys += (i ? ",\"" : "\"") + std::to_string(i % 50000) + "\":" + std::to_string(i);
  }
  keys += "}";
  const auto start = std::chrono::steady_clock::now();
  {
    Scratch s(size_t{16} << 20);
    Value v;
    ASSERT_TRUE(Parse(keys, &v, &s).ok());
    ASSERT_EQ(v.dict->count, 50000u);
    EXPECT_EQ(v.dict->values[7].i, 50007);
  }
  Scratch small(1 << 16);
  Value v;
  EXPECT_EQ(Parse(keys, &v, &small).code(), StatusCode::kResourceExhausted);
  std::string zeros = "[";
  for (int i = 0; i < 200000; ++i) zeros += i ? ",0" : "0";
  EXPECT_EQ(Parse(zeros + "]", &v, &small).code(), StatusCode::kResourceExhausted);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// A heap too small is ResourceExhausted at every size until the value fits, then the
// value is whole.
TEST(TemplateJsonTest, ATooSmallHeapIsResourceExhaustedAtEverySize) {
  const std::string doc =
      R"([{"type": "function", "function": {"name": "get_weather", "description": )"
      R"("the \"weather\"", "parameters": {"type": "object", "properties": {"city": )"
      R"({"type": "string"}}, "required": ["city"]}}}, 12345678901234567890123])";
  const std::string want = RoundTrip(doc);
  ASSERT_EQ(want.substr(0, 10), "[{\"type\": ");
  for (size_t bytes = 0;; ++bytes) {
    ASSERT_LT(bytes, 1u << 16);
    Scratch s(bytes);
    Value v;
    const Status status = Parse(doc, &v, &s);
    if (status.ok()) {
      // Written back in a fresh heap: this one is full.
      Scratch out(1 << 16);
      out.heap.Begin();
      ASSERT_TRUE(AppendJson(v, -1, 0, &out.heap));
      EXPECT_EQ(std::string(out.heap.End().str()), want);
      break;
    }
    ASSERT_EQ(status.code(), StatusCode::kResourceExhausted) << bytes << status.message();
  }
}

}  // namespace
}  // namespace ember::tmpl
