// The JSON writer: compact JSON as nlohmann's dump() spells it (see json_reader.h).
#include <charconv>
#include <cmath>
#include <string>

#include "runtime/grammar/json_reader.h"

namespace ember::grammar {
namespace {

// A float as nlohmann writes it (its to_chars: the shortest digits that read back,
// then format_buffer with exponents -4 < n <= 15 written out).
void DumpFloat(double value, std::string* out) {
  if (value == 0) {
    *out += std::signbit(value) ? "-0.0" : "0.0";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  // buf: [-]d[.ddd]e(+|-)xx
  std::string digits;
  const char* p = buf;
  if (*p == '-') {
    *out += '-';
    ++p;
  }
  for (; p < r.ptr && *p != 'e'; ++p) {
    if (*p != '.') digits += *p;
  }
  int exponent = 0;
  std::from_chars(p + 1 + (p[1] == '+'), r.ptr, exponent);
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;  // the decimal point's place after the first k digits
  if (k <= n && n <= 15) {
    *out += digits + std::string(static_cast<size_t>(n - k), '0') + ".0";
  } else if (0 < n && n <= 15) {
    *out += digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
  } else if (-4 < n && n <= 0) {
    *out += "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  } else {
    *out += digits.substr(0, 1);
    if (k > 1) *out += "." + digits.substr(1);
    const int e = n - 1;
    const int magnitude = e < 0 ? -e : e;
    *out += e < 0 ? "e-" : "e+";
    if (magnitude < 10) *out += '0';
    *out += std::to_string(magnitude);
  }
}

}  // namespace

void DumpJsonString(std::string_view text, std::string* out) {
  *out += '"';
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    const char* short_escape = nullptr;
    switch (c) {
      case '"': short_escape = "\\\""; break;
      case '\\': short_escape = "\\\\"; break;
      case '\b': short_escape = "\\b"; break;
      case '\f': short_escape = "\\f"; break;
      case '\n': short_escape = "\\n"; break;
      case '\r': short_escape = "\\r"; break;
      case '\t': short_escape = "\\t"; break;
      default: break;
    }
    if (short_escape != nullptr) {
      *out += short_escape;
    } else if (u < 0x20) {
      char hex[8];
      Format(hex, sizeof(hex), "\\u%04x", u);
      *out += hex;
    } else {
      *out += c;
    }
  }
  *out += '"';
}

void DumpJson(const JsonValue& value, std::string* out) {
  switch (value.type()) {
    case JsonType::kNull:
      *out += "null";
      return;
    case JsonType::kBool:
      *out += value.boolean() ? "true" : "false";
      return;
    case JsonType::kNumber:
      if (value.is_negative_integer()) {
        *out += std::to_string(value.int64());
      } else if (value.is_integer()) {
        *out += std::to_string(value.uint64());
      } else {
        DumpFloat(value.number(), out);
      }
      return;
    case JsonType::kString:
      DumpJsonString(value.text(), out);
      return;
    case JsonType::kArray:
    case JsonType::kObject: {
      const bool object = value.is_object();
      *out += object ? '{' : '[';
      for (size_t i = 0; i < value.size(); ++i) {
        if (i) *out += ',';
        if (object) {
          DumpJsonString(value.key(i), out);
          *out += ':';
        }
        DumpJson(value[i], out);
      }
      *out += object ? '}' : ']';
      return;
    }
  }
}

}  // namespace ember::grammar
