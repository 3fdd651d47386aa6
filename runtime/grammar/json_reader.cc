// The JSON reader: see json_reader.h (the writer: json_writer.cc).
#include "runtime/grammar/json_reader.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>

#include "runtime/text/utf8.h"

namespace ember::grammar {

JsonValue JsonValue::Bool(bool value) {
  JsonValue v;
  v.type_ = JsonType::kBool;
  v.bool_ = value;
  return v;
}

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return &values_[i];
  }
  return nullptr;
}

namespace {

// Objects with more keys than this find a repeated key through a hash map (a linear
// search per key would make an object of 100,000 keys quadratic).
constexpr size_t kLinearKeys = 8;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

// A recursive descent over the text, one level of C++ recursion per array or object
// (bounded by max_depth, checked before descending).
class JsonReader {
 public:
  JsonReader(std::string_view text, int max_depth) : text_(text), max_depth_(max_depth) {}

  Status Read(JsonValue* out) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a byte order mark
    EMBER_RETURN_IF_ERROR(Value(0, out));
    SkipSpace();
    if (pos_ != text_.size()) return Error("text after the JSON value");
    return Status::Ok();
  }

 private:
  Status Error(const char* what) const {
    return InvalidArgument("not valid JSON at byte %zu: %s", pos_, what);
  }

  void SkipSpace() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos_;
    }
  }

  bool Literal(const char* word) {
    const size_t n = strlen(word);
    if (text_.substr(pos_, n) != word) return false;
    pos_ += n;
    return true;
  }

  Status Value(int depth, JsonValue* out) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("the text ends where a value should be");
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (depth >= max_depth_) {
        return InvalidArgument("not valid JSON at byte %zu: nested deeper than %d levels",
                               pos_, max_depth_);
      }
      return c == '{' ? Object(depth + 1, out) : Array(depth + 1, out);
    }
    if (c == '"') {
      out->type_ = JsonType::kString;
      return String(&out->text_);
    }
    if (c == '-' || IsDigit(c)) return Number(out);
    const bool is_true = Literal("true");
    if (is_true || Literal("false")) {
      out->type_ = JsonType::kBool;
      out->bool_ = is_true;
      return Status::Ok();
    }
    if (Literal("null")) {
      out->type_ = JsonType::kNull;
      return Status::Ok();
    }
    return Error("not a value (an object, array, string, number, true, false or null)");
  }

  Status Array(int depth, JsonValue* out) {
    out->type_ = JsonType::kArray;
    ++pos_;  // '['
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return Status::Ok();
    }
    while (true) {
      out->values_.emplace_back();
      EMBER_RETURN_IF_ERROR(Value(depth, &out->values_.back()));
      SkipSpace();
      if (pos_ >= text_.size()) return Error("the text ends inside an array");
      const char c = text_[pos_++];
      if (c == ']') return Status::Ok();
      if (c != ',') {
        --pos_;
        return Error("',' or ']' expected");
      }
    }
  }

  Status Object(int depth, JsonValue* out) {
    out->type_ = JsonType::kObject;
    ++pos_;  // '{'
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return Status::Ok();
    }
    std::unordered_map<std::string, size_t> index;  // past kLinearKeys keys
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size()) return Error("the text ends inside an object");
      if (text_[pos_] != '"') return Error("a key (a string) expected");
      std::string key;
      EMBER_RETURN_IF_ERROR(String(&key));
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') return Error("':' expected");
      ++pos_;
      // A repeated key: its first place, its last value.
      size_t slot = out->keys_.size();
      if (out->keys_.size() <= kLinearKeys) {
        for (size_t i = 0; i < out->keys_.size(); ++i) {
          if (out->keys_[i] == key) slot = i;
        }
      } else {
        if (index.empty()) {
          for (size_t i = 0; i < out->keys_.size(); ++i) index.emplace(out->keys_[i], i);
        }
        const auto found = index.find(key);
        if (found != index.end()) slot = found->second;
      }
      JsonValue value;
      EMBER_RETURN_IF_ERROR(Value(depth, &value));
      if (slot < out->keys_.size()) {
        out->values_[slot] = std::move(value);
      } else {
        if (!index.empty()) index.emplace(key, slot);
        out->keys_.push_back(std::move(key));
        out->values_.push_back(std::move(value));
      }
      SkipSpace();
      if (pos_ >= text_.size()) return Error("the text ends inside an object");
      const char c = text_[pos_++];
      if (c == '}') return Status::Ok();
      if (c != ',') {
        --pos_;
        return Error("',' or '}' expected");
      }
    }
  }

  // Four hex digits after "\u" at pos_ (which is past the 'u').
  Status Hex4(uint32_t* unit) {
    if (text_.size() - pos_ < 4) return Error("\\u needs four hex digits");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int d = HexDigit(text_[pos_ + i]);
      if (d < 0) return Error("\\u needs four hex digits");
      v = v << 4 | static_cast<uint32_t>(d);
    }
    pos_ += 4;
    *unit = v;
    return Status::Ok();
  }

  Status String(std::string* out) {
    ++pos_;  // '"'
    while (true) {
      if (pos_ >= text_.size()) return Error("the text ends inside a string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return Status::Ok();
      }
      if (c < 0x20) return Error("a control character inside a string (escape it)");
      if (c >= 0x80) {
        uint32_t cp = 0;
        const size_t n = DecodeUtf8(text_, pos_, &cp);
        if (n == 0) return Error("invalid UTF-8");
        out->append(text_.data() + pos_, n);
        pos_ += n;
        continue;
      }
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      if (++pos_ >= text_.size()) return Error("the text ends inside an escape");
      const char e = text_[pos_++];
      const char* plain = strchr("\"\\/bfnrt", e);
      if (e != '\0' && plain != nullptr) {
        out->push_back("\"\\/\b\f\n\r\t"[plain - "\"\\/bfnrt"]);
        continue;
      }
      if (e != 'u') {
        --pos_;
        return Error("an escape that JSON does not have");
      }
      uint32_t cp = 0;
      EMBER_RETURN_IF_ERROR(Hex4(&cp));
      if (cp >= 0xDC00 && cp <= 0xDFFF) {
        pos_ -= 6;
        return Error("a low surrogate without a high one before it");
      }
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (text_.substr(pos_, 2) != "\\u") {
          pos_ -= 6;
          return Error("a high surrogate without a low one after it");
        }
        pos_ += 2;
        uint32_t low = 0;
        EMBER_RETURN_IF_ERROR(Hex4(&low));
        if (low < 0xDC00 || low > 0xDFFF) {
          pos_ -= 12;
          return Error("a high surrogate without a low one after it");
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      }
      char bytes[4];
      out->append(bytes, AppendUtf8(cp, bytes));
    }
  }

  Status Number(JsonValue* out) {
    const size_t start = pos_;
    bool integer = true;
    if (text_[pos_] == '-') ++pos_;
    const auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
      return pos_ - from;
    };
    if (pos_ >= text_.size() || !IsDigit(text_[pos_])) return Error("a digit expected");
    if (text_[pos_] == '0') {
      ++pos_;
      if (pos_ < text_.size() && IsDigit(text_[pos_])) return Error("a number with a leading 0");
    } else {
      digits();
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      integer = false;
      ++pos_;
      if (digits() == 0) return Error("a digit expected after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integer = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) return Error("a digit expected in the exponent");
    }
    out->type_ = JsonType::kNumber;
    out->text_.assign(text_.data() + start, pos_ - start);
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (integer) {  // past 64 bits, a float (as nlohmann reads it)
      if (*first == '-') {
        const auto r = std::from_chars(first, last, out->int_);
        if (r.ec == std::errc() && r.ptr == last) {
          out->kind_ = JsonValue::kSigned;
          out->number_ = static_cast<double>(out->int_);
          return Status::Ok();
        }
      } else {
        const auto r = std::from_chars(first, last, out->uint_);
        if (r.ec == std::errc() && r.ptr == last) {
          out->kind_ = JsonValue::kUnsigned;
          out->number_ = static_cast<double>(out->uint_);
          return Status::Ok();
        }
      }
    }
    out->kind_ = JsonValue::kFloat;
    const auto r = std::from_chars(first, last, out->number_);
    if (r.ec == std::errc::result_out_of_range) {
      if (!Tiny(out->text_)) {
        pos_ = start;
        return Error("a number beyond a double's range");
      }
      out->number_ = *first == '-' ? -0.0 : 0.0;  // below the smallest: zero
    } else if (r.ec != std::errc() || r.ptr != last || !std::isfinite(out->number_)) {
      pos_ = start;
      return Error("a number beyond a double's range");
    }
    return Status::Ok();
  }

  // Whether a number out of a double's range is too small rather than too large: the
  // decimal exponent of its first significant digit (about: out of range, it is hundreds
  // from zero either way) plus its written exponent is not positive.
  static bool Tiny(const std::string& number) {
    int64_t point = 0;  // digits before the first significant one's place
    bool seen = false, fraction = false;
    size_t i = number[0] == '-' ? 1 : 0;
    for (; i < number.size() && number[i] != 'e' && number[i] != 'E'; ++i) {
      if (number[i] == '.') {
        fraction = true;
      } else if (!seen && number[i] == '0') {
        if (fraction) --point;
      } else {
        if (!seen && fraction) --point;
        seen = true;
        if (!fraction) ++point;
      }
    }
    int64_t exponent = 0;
    if (i < number.size()) {
      bool negative = false;
      ++i;
      if (number[i] == '+' || number[i] == '-') negative = number[i++] == '-';
      for (; i < number.size(); ++i) {
        if (exponent < (int64_t{1} << 40)) exponent = exponent * 10 + (number[i] - '0');
      }
      if (negative) exponent = -exponent;
    }
    return !seen || point + exponent <= 0;
  }

  std::string_view text_;
  int max_depth_;
  size_t pos_ = 0;
};

Status ReadJson(std::string_view text, int max_depth, JsonValue* out) {
  *out = JsonValue();
  return JsonReader(text, max_depth).Read(out);
}

}  // namespace ember::grammar
