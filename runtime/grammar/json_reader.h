// A JSON text read into a tree (RFC 8259) for the grammar's compile-time converters
// (json_schema.h), and written back as compact JSON. Where a grammar is set, like the
// GBNF compiler, it allocates; it never throws or aborts on input.
//
// What it keeps: an object's keys in their text's order (a repeated key keeps its first
// place and its last value, as nlohmann's ordered_json did for the tools), strings
// unescaped to UTF-8 (\uXXXX and surrogate pairs; a lone surrogate, a raw control
// character or invalid UTF-8 is refused), numbers as their text and a double, and
// whether one is an integer (no fraction or exponent, inside int64 or uint64). A leading
// UTF-8 byte order mark is skipped. Malformed text is InvalidArgument naming the byte
// offset; nesting past `max_depth` arrays and objects is refused before it recurses.
#ifndef EMBER_RUNTIME_GRAMMAR_JSON_READER_H_
#define EMBER_RUNTIME_GRAMMAR_JSON_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/status.h"

namespace ember::grammar {

enum class JsonType : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

class JsonValue {
 public:
  JsonValue() = default;
  static JsonValue Bool(bool value);

  JsonType type() const { return type_; }
  bool is_null() const { return type_ == JsonType::kNull; }
  bool is_bool() const { return type_ == JsonType::kBool; }
  bool is_number() const { return type_ == JsonType::kNumber; }
  bool is_string() const { return type_ == JsonType::kString; }
  bool is_array() const { return type_ == JsonType::kArray; }
  bool is_object() const { return type_ == JsonType::kObject; }

  bool boolean() const { return bool_; }
  // Numbers: integers are written without fraction or exponent and fit int64 (negative)
  // or uint64; any other number (1.0, 1e3, 2^64) is a float, its double in number().
  bool is_integer() const { return is_number() && kind_ != kFloat; }
  bool is_negative_integer() const { return is_number() && kind_ == kSigned; }
  int64_t int64() const { return kind_ == kSigned ? int_ : static_cast<int64_t>(uint_); }
  uint64_t uint64() const { return kind_ == kUnsigned ? uint_ : static_cast<uint64_t>(int_); }
  double number() const { return number_; }
  // A string's contents (UTF-8), or a number's text as written.
  const std::string& text() const { return text_; }

  // An array's elements, an object's members (their values; keys by key(i)).
  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  const JsonValue& operator[](size_t i) const { return values_[i]; }
  const std::string& key(size_t i) const { return keys_[i]; }
  // The member named `key` of an object, or null (also for other types).
  const JsonValue* Find(std::string_view key) const;
  bool Has(std::string_view key) const { return Find(key) != nullptr; }

 private:
  friend class JsonReader;
  enum NumberKind : uint8_t { kSigned, kUnsigned, kFloat };

  JsonType type_ = JsonType::kNull;
  NumberKind kind_ = kFloat;
  bool bool_ = false;
  int64_t int_ = 0;
  uint64_t uint_ = 0;
  double number_ = 0;
  std::string text_;
  std::vector<JsonValue> values_;
  std::vector<std::string> keys_;  // an object's, one per value
};

// Reads the whole of `text` (one value, white space around it) into *out.
Status ReadJson(std::string_view text, int max_depth, JsonValue* out);

// Appends `value` as compact JSON, as nlohmann's dump() writes it: no white space,
// keys in order, strings escaped (\" \\ \b \f \n \r \t, other control characters
// \u00XX, the rest as UTF-8), floats shortest with ".0" or an exponent (1.0, 0.25,
// 1e+20, 1.5e-07). Numbers are written from their value, not their text.
void DumpJson(const JsonValue& value, std::string* out);
void DumpJsonString(std::string_view text, std::string* out);

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_JSON_READER_H_
