// JSON Schema to GBNF, the leaves: integers in a range, strings (lengths, formats),
// keys outside an object's properties, and the primitives all schemas share. See
// json_schema.h; the walker is json_schema.cc.
#include <cinttypes>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/grammar/json_schema.h"
#include "runtime/grammar/json_schema_internal.h"

namespace ember::grammar {

std::string GbnfLiteral(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      char hex[8];
      Format(hex, sizeof(hex), "\\x%02X", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace schema {

namespace {

// The primitives, each emitted only when used (with what it uses).
// clang-format off
constexpr Primitive kPrimitives[] = {
    {"ws", R"([ \t\n]{0,20})", {}},
    {"value", R"(object | array | string | number | "true" | "false" | "null")",
     {"object", "array", "string", "number"}},
    {"object", R"("{" ws ( member ( "," ws member )* )? "}")", {"member", "ws"}},
    {"member", R"(string ws ":" ws value ws)", {"string", "ws", "value"}},
    {"array", R"("[" ws ( value ws ( "," ws value ws )* )? "]")", {"value", "ws"}},
    {"string", R"("\"" char* "\"")", {"char"}},
    {"char", R"([^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ))", {}},
    {"number", R"(integer ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?)", {"integer"}},
    {"integer", R"("-"? ( "0" | [1-9] [0-9]* ))", {}},
    {"boolean", R"("true" | "false")", {}},
    {"null", R"("null")", {}},
    {"date",
     R"([0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] ))",
     {}},
    {"time",
     R"(( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]+ )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))",
     {}},
    {"uuid",
     R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})",
     {}},
};
// clang-format on

}  // namespace

const Primitive& PrimitiveNamed(const std::string& name) {
  for (const Primitive& p : kPrimitives) {
    if (name == p.name) return p;
  }
  return kPrimitives[0];  // not reached: the converter names only these
}

namespace {

// Digit strings a..b of one length (leading zeros inside a number are fine here: the
// caller fixed its first digit).
std::string SameLength(const std::string& a, const std::string& b) {
  const size_t n = a.size();
  if (n == 1) {
    return a == b ? GbnfLiteral(a) : "[" + a + "-" + b + "]";
  }
  const std::string rest_a = a.substr(1), rest_b = b.substr(1);
  if (a[0] == b[0]) return GbnfLiteral(a.substr(0, 1)) + " " + SameLength(rest_a, rest_b);
  const std::string zeros(n - 1, '0'), nines(n - 1, '9');
  const std::string tail = "[0-9]{" + std::to_string(n - 1) + "}";
  if (rest_a == zeros && rest_b == nines) {
    return "[" + a.substr(0, 1) + "-" + b.substr(0, 1) + "] " + tail;
  }
  std::string out = "( " + GbnfLiteral(a.substr(0, 1)) + " " + SameLength(rest_a, nines);
  if (b[0] - a[0] > 1) {
    out += " | [" + std::string(1, char(a[0] + 1)) + "-" +
           std::string(1, char(b[0] - 1)) + "] " + tail;
  }
  return out + " | " + GbnfLiteral(b.substr(0, 1)) + " " + SameLength(zeros, rest_b) +
         " )";
}

// Magnitudes a..b (b absent: unbounded), as JSON writes them (no leading zeros).
std::string Magnitudes(uint64_t a, bool bounded, uint64_t b) {
  std::vector<std::string> parts;
  const std::string sa = std::to_string(a);
  const size_t last = bounded ? std::to_string(b).size() : sa.size();
  for (size_t length = sa.size(); length <= last; ++length) {
    uint64_t lo = 1, hi = 9;
    for (size_t i = 1; i < length; ++i) lo *= 10, hi = hi * 10 + 9;
    if (length == 1) lo = 0;
    if (lo < a) lo = a;
    if (bounded && hi > b) hi = b;
    if (lo <= hi) parts.push_back(SameLength(std::to_string(lo), std::to_string(hi)));
  }
  if (!bounded) parts.push_back("[1-9] [0-9]{" + std::to_string(sa.size()) + ",}");
  std::string out = parts.size() > 1 ? "( " : "";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? " | " : "") + parts[i];
  return out + (parts.size() > 1 ? " )" : "");
}

// A class element of one code point, escaped whatever it is.
std::string CodePoint(uint32_t cp) {
  char out[16];
  if (cp < 0x100) {
    Format(out, sizeof(out), "\\x%02X", cp);
  } else if (cp < 0x10000) {
    Format(out, sizeof(out), "\\u%04X", cp);
  } else {
    Format(out, sizeof(out), "\\U%08X", cp);
  }
  return out;
}

// The code points of UTF-8 text (a schema's property names: valid UTF-8, from its JSON).
std::vector<uint32_t> CodePoints(const std::string& text) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = n == 1 ? c : c & (0x3F >> (n - 1));
    for (int k = 1; k < n && i + k < text.size(); ++k)
      cp = cp << 6 | (text[i + k] & 0x3F);
    out.push_back(cp);
    i += static_cast<size_t>(n);
  }
  return out;
}

}  // namespace

Status Converter::Count(const Schema& s, const char* key, const std::string& path,
                        uint64_t* n, bool* present) {
  const Schema* found = s.Find(key);
  *present = found != nullptr;
  if (!*present) return Status::Ok();
  const Schema& v = *found;
  if (!v.is_integer()) {
    return InvalidArgument("JSON Schema at '%s': %s is not a non-negative integer",
                           path.c_str(), key);
  }
  // (2^63 and above read as int64 are negative, as nlohmann's get<int64_t> read them.)
  if (v.int64() < 0) {
    return InvalidArgument("JSON Schema at '%s': %s is negative", path.c_str(), key);
  }
  const uint64_t value = v.uint64();
  if (value > kMaxCount) {
    return Unimplemented("JSON Schema at '%s': %s %" PRIu64 " is above %" PRIu64
                         " (the grammar unrolls it)",
                         path.c_str(), key, value, kMaxCount);
  }
  *n = value;
  return Status::Ok();
}

// Bounds as integers: an inclusive bound rounds inward, an exclusive one steps past.
Status Converter::Bound(const Schema& s, const char* key, bool lower, bool exclusive,
                        const std::string& path, bool* has, int64_t* value) {
  const Schema* found = s.Find(key);
  if (found == nullptr) return Status::Ok();
  const Schema& v = *found;
  if (!v.is_number()) {
    return InvalidArgument("JSON Schema at '%s': %s is not a number", path.c_str(), key);
  }
  const double d = v.number();
  if (!(std::fabs(d) <= 1e18)) {
    return Unimplemented("JSON Schema at '%s': %s beyond 1e18", path.c_str(), key);
  }
  int64_t b = !v.is_integer() ? static_cast<int64_t>(lower ? std::ceil(d) : std::floor(d))
                              : v.int64();
  if (exclusive && static_cast<double>(b) == d) b += lower ? 1 : -1;
  if (!*has || (lower ? b > *value : b < *value)) *value = b;
  *has = true;
  return Status::Ok();
}

Status Converter::Integer(const Schema& s, const std::string& path, std::string* expr) {
  bool has_lo = false, has_hi = false;
  int64_t lo = 0, hi = 0;
  EMBER_RETURN_IF_ERROR(Bound(s, "minimum", true, false, path, &has_lo, &lo));
  EMBER_RETURN_IF_ERROR(Bound(s, "exclusiveMinimum", true, true, path, &has_lo, &lo));
  EMBER_RETURN_IF_ERROR(Bound(s, "maximum", false, false, path, &has_hi, &hi));
  EMBER_RETURN_IF_ERROR(Bound(s, "exclusiveMaximum", false, true, path, &has_hi, &hi));
  if (!has_lo && !has_hi) {
    *expr = Use("integer");
    return Status::Ok();
  }
  if (has_lo && has_hi && lo > hi) return Refuse(path, "no integer is in its range");
  std::vector<std::string> parts;
  if (!has_lo || lo < 0) {  // negatives: "-" and magnitudes
    const uint64_t from = has_hi && hi < 0 ? static_cast<uint64_t>(-hi) : 1;
    parts.push_back("\"-\" " + Magnitudes(from, has_lo, has_lo ? uint64_t(-lo) : 0));
  }
  if (!has_hi || hi >= 0) {
    const uint64_t from = has_lo && lo > 0 ? static_cast<uint64_t>(lo) : 0;
    parts.push_back(Magnitudes(from, has_hi, has_hi ? uint64_t(hi) : 0));
  }
  std::string out = "( ";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? " | " : "") + parts[i];
  *expr = out + " )";
  return Status::Ok();
}

Status Converter::String(const Schema& s, const std::string& path, std::string* expr) {
  if (const Schema* found = s.Find("format")) {
    if (s.Has("minLength") || s.Has("maxLength")) {
      return Refuse(path, "format beside minLength or maxLength");
    }
    const std::string format = found->is_string() ? found->text() : "";
    if (format == "date" || format == "time" || format == "uuid") {
      *expr = "\"\\\"\" " + Use(format) + " \"\\\"\"";
    } else if (format == "date-time") {
      *expr = "\"\\\"\" " + Use("date") + " \"T\" " + Use("time") + " \"\\\"\"";
    } else {
      return Unimplemented(
          "JSON Schema at '%s': format '%s' is not supported (date, "
          "time, date-time, uuid are)",
          path.c_str(), format.c_str());
    }
    return Status::Ok();
  }
  uint64_t min = 0, max = 0;
  bool has_min = false, has_max = false;
  EMBER_RETURN_IF_ERROR(Count(s, "minLength", path, &min, &has_min));
  EMBER_RETURN_IF_ERROR(Count(s, "maxLength", path, &max, &has_max));
  if (!has_min && !has_max) {
    *expr = Use("string");
    return Status::Ok();
  }
  if (has_max && min > max) return Refuse(path, "minLength above maxLength");
  Use("char");
  *expr = "\"\\\"\" char{" + std::to_string(min) + "," +
          (has_max ? std::to_string(max) : "") + "} \"\\\"\"";
  return Status::Ok();
}

// A key that is none of `properties`' names (whose own schemas apply to them), in
// plain characters (no escapes: a key's text is then its value): a walk of the names'
// trie, left at any character no name continues with.
std::string Converter::OtherKey(
    const std::vector<std::pair<std::string, const Schema*>>& properties) {
  struct Node {
    std::map<uint32_t, size_t> next;
    bool name = false;
  };
  std::vector<Node> trie(1);
  for (const auto& p : properties) {
    size_t at = 0;
    for (const uint32_t cp : CodePoints(p.first)) {
      auto found = trie[at].next.find(cp);
      if (found == trie[at].next.end()) {
        trie.push_back(Node());
        found = trie[at].next.emplace(cp, trie.size() - 1).first;
      }
      at = found->second;
    }
    trie[at].name = true;
  }
  const std::string plain = NewRule();
  AddRule(plain, "[^\"\\\\\\x00-\\x1F]");
  std::vector<std::string> names(trie.size());
  for (std::string& name : names) name = NewRule();
  for (size_t n = 0; n < trie.size(); ++n) {
    std::string body, others = "[^\"\\\\\\x00-\\x1F";
    if (!trie[n].name) body = "\"\"";
    for (const auto& [cp, child] : trie[n].next) {
      body += std::string(body.empty() ? "" : " | ") + "[" + CodePoint(cp) + "] " +
              names[child];
      others += CodePoint(cp);
    }
    body += std::string(body.empty() ? "" : " | ") + others + "] " + plain + "*";
    AddRule(names[n], body);
  }
  return names[0];
}

}  // namespace schema
}  // namespace ember::grammar
