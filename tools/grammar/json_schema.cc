// JSON Schema to GBNF: see json_schema.h.
#include "tools/grammar/json_schema.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace ember::tools {
namespace {

using Schema = nlohmann::ordered_json;

// The primitives, each emitted only when used (with what it uses).
const std::map<std::string, std::pair<const char*, std::vector<std::string>>>& Primitives() {
  static const auto* p = new std::map<std::string,
                                      std::pair<const char*, std::vector<std::string>>>{
      {"ws", {R"([ \t\n]{0,20})", {}}},
      {"value",
       {R"(object | array | string | number | "true" | "false" | "null")",
        {"object", "array", "string", "number"}}},
      {"object", {R"("{" ws ( member ( "," ws member )* )? "}")", {"member", "ws"}}},
      {"member", {R"(string ws ":" ws value ws)", {"string", "ws", "value"}}},
      {"array", {R"("[" ws ( value ws ( "," ws value ws )* )? "]")", {"value", "ws"}}},
      {"string", {R"("\"" char* "\"")", {"char"}}},
      {"char", {R"([^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ))", {}}},
      {"number", {R"(integer ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?)", {"integer"}}},
      {"integer", {R"("-"? ( "0" | [1-9] [0-9]* ))", {}}},
      {"boolean", {R"("true" | "false")", {}}},
      {"null", {R"("null")", {}}},
      {"date",
       {R"([0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] ))",
        {}}},
      {"time",
       {R"(( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]+ )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))",
        {}}},
      {"uuid",
       {R"([0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12})",
        {}}},
  };
  return *p;
}

// Keywords that only annotate.
const std::set<std::string>& Annotations() {
  static const auto* a = new std::set<std::string>{
      "$schema", "$id", "$comment", "title", "description", "default", "examples",
      "deprecated", "readOnly", "writeOnly", "$defs", "definitions"};
  return *a;
}

const std::set<std::string>& Supported() {
  static const auto* s = new std::set<std::string>{
      "type", "properties", "required", "additionalProperties", "enum", "const", "items",
      "prefixItems", "minItems", "maxItems", "minLength", "maxLength", "minimum",
      "maximum", "exclusiveMinimum", "exclusiveMaximum", "anyOf", "oneOf", "allOf", "$ref",
      "format"};
  return *s;
}

}  // namespace

std::string GbnfLiteral(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      char hex[8];
      snprintf(hex, sizeof(hex), "\\x%02X", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace {

// Repetition bounds on the sizes GBNF is asked to unroll.
constexpr uint64_t kMaxCount = 1000;

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
    out += " | [" + std::string(1, char(a[0] + 1)) + "-" + std::string(1, char(b[0] - 1)) +
           "] " + tail;
  }
  return out + " | " + GbnfLiteral(b.substr(0, 1)) + " " + SameLength(zeros, rest_b) + " )";
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
    snprintf(out, sizeof(out), "\\x%02X", cp);
  } else if (cp < 0x10000) {
    snprintf(out, sizeof(out), "\\u%04X", cp);
  } else {
    snprintf(out, sizeof(out), "\\U%08X", cp);
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
    for (int k = 1; k < n && i + k < text.size(); ++k) cp = cp << 6 | (text[i + k] & 0x3F);
    out.push_back(cp);
    i += static_cast<size_t>(n);
  }
  return out;
}

class Converter {
 public:
  // Rules are named `prefix` s0, s1, ...; primitives (ws, string, ...) are shared.
  Converter(const Schema& root, std::string prefix, std::set<std::string>* used)
      : root_(root), prefix_(std::move(prefix)), used_(*used) {}

  // Rule `name` ::= the schema's texts (no white space around), and the rules it uses.
  Status Rules(const std::string& name, std::string* out) {
    std::string expr;
    EMBER_RETURN_IF_ERROR(Expr(root_, "", 0, &expr));
    *out += name + " ::= " + expr + "\n";
    for (const auto& [rule, body] : rules_) *out += rule + " ::= " + body + "\n";
    return Status::Ok();
  }

  static void Primitives(std::set<std::string>* used, std::string* out) {
    for (const std::string& name : *used) {
      *out += name + " ::= " + ember::tools::Primitives().at(name).first + "\n";
    }
  }

  std::string Use(const std::string& primitive) {
    if (used_.insert(primitive).second) {
      for (const std::string& dep : ember::tools::Primitives().at(primitive).second) Use(dep);
    }
    return primitive;
  }

 private:
  std::string NewRule() { return prefix_ + "s" + std::to_string(next_rule_++); }

  static Status Refuse(const std::string& path, const char* what) {
    return Unimplemented("JSON Schema at '%s': %s", path.empty() ? "/" : path.c_str(),
                         what);
  }

  Status Count(const Schema& s, const char* key, const std::string& path, uint64_t* n,
               bool* present) {
    *present = s.contains(key);
    if (!*present) return Status::Ok();
    const Schema& v = s[key];
    if (!v.is_number_integer() && !v.is_number_unsigned()) {
      return InvalidArgument("JSON Schema at '%s': %s is not a non-negative integer",
                             path.c_str(), key);
    }
    if (v.is_number_integer() && v.get<int64_t>() < 0) {
      return InvalidArgument("JSON Schema at '%s': %s is negative", path.c_str(), key);
    }
    const uint64_t value = v.get<uint64_t>();
    if (value > kMaxCount) {
      return Unimplemented("JSON Schema at '%s': %s %" PRIu64 " is above %" PRIu64
                           " (the grammar unrolls it)",
                           path.c_str(), key, value, kMaxCount);
    }
    *n = value;
    return Status::Ok();
  }

  Status Expr(const Schema& s, const std::string& path, int depth, std::string* expr) {
    if (depth > kMaxSchemaDepth) {
      return InvalidArgument("JSON Schema nested deeper than %d levels at '%s'",
                             kMaxSchemaDepth, path.c_str());
    }
    if (s.is_boolean()) {
      if (!s.get<bool>()) return Refuse(path, "schema false matches nothing");
      *expr = Use("value");
      return Status::Ok();
    }
    if (!s.is_object()) {
      return InvalidArgument("JSON Schema at '%s' is not an object or a boolean",
                             path.c_str());
    }
    size_t constraints = 0;
    for (auto it = s.begin(); it != s.end(); ++it) {
      if (Annotations().count(it.key())) continue;
      if (!Supported().count(it.key())) {
        return Unimplemented("JSON Schema at '%s': keyword '%s' is not supported",
                             path.empty() ? "/" : path.c_str(), it.key().c_str());
      }
      ++constraints;
    }
    if (s.contains("$ref")) {
      if (constraints > 1) return Refuse(path, "$ref beside other keywords");
      return Ref(s["$ref"], path, depth, expr);
    }
    if (s.contains("const") || s.contains("enum")) {
      if (constraints > (s.contains("type") ? 2u : 1u)) {
        return Refuse(path, "enum or const beside keywords other than type");
      }
      Schema values = s.contains("const") ? Schema::array({s["const"]}) : s["enum"];
      if (!values.is_array() || values.empty()) {
        return InvalidArgument("JSON Schema at '%s': enum is not a non-empty array",
                               path.c_str());
      }
      std::string out = "( ";
      for (size_t i = 0; i < values.size(); ++i) {
        out += (i ? " | " : "") + GbnfLiteral(values[i].dump());
      }
      *expr = out + " )";
      return Status::Ok();
    }
    for (const char* key : {"anyOf", "oneOf", "allOf"}) {
      if (!s.contains(key)) continue;
      if (constraints > 1) return Refuse(path, "anyOf, oneOf or allOf beside other keywords");
      const Schema& list = s[key];
      if (!list.is_array() || list.empty()) {
        return InvalidArgument("JSON Schema at '%s': %s is not a non-empty array",
                               path.c_str(), key);
      }
      if (std::string(key) == "allOf" && list.size() != 1) {
        return Refuse(path, "allOf of more than one schema");
      }
      std::string out = "( ";
      for (size_t i = 0; i < list.size(); ++i) {
        std::string one;
        EMBER_RETURN_IF_ERROR(
            Expr(list[i], path + "/" + key + "/" + std::to_string(i), depth + 1, &one));
        out += (i ? " | " : "") + one;
      }
      *expr = out + " )";
      return Status::Ok();
    }
    std::vector<std::string> types;
    if (s.contains("type")) {
      const Schema& t = s["type"];
      if (t.is_string()) {
        types.push_back(t.get<std::string>());
      } else if (t.is_array() && !t.empty()) {
        for (const Schema& one : t) {
          if (!one.is_string()) {
            return InvalidArgument("JSON Schema at '%s': a type is not a string",
                                   path.c_str());
          }
          types.push_back(one.get<std::string>());
        }
      } else {
        return InvalidArgument("JSON Schema at '%s': type is not a string or a list",
                               path.c_str());
      }
    } else if (s.contains("properties") || s.contains("required") ||
               s.contains("additionalProperties")) {
      types.push_back("object");
    } else if (s.contains("items") || s.contains("prefixItems") || s.contains("minItems") ||
               s.contains("maxItems")) {
      types.push_back("array");
    } else if (s.contains("minLength") || s.contains("maxLength") || s.contains("format")) {
      types.push_back("string");
    } else if (s.contains("minimum") || s.contains("maximum") ||
               s.contains("exclusiveMinimum") || s.contains("exclusiveMaximum")) {
      types.push_back("integer");
    } else {
      *expr = Use("value");
      return Status::Ok();
    }
    std::string out = types.size() > 1 ? "( " : "";
    for (size_t i = 0; i < types.size(); ++i) {
      std::string one;
      EMBER_RETURN_IF_ERROR(Typed(s, types[i], path, depth, &one));
      out += (i ? " | " : "") + one;
    }
    *expr = out + (types.size() > 1 ? " )" : "");
    return Status::Ok();
  }

  Status Ref(const Schema& ref, const std::string& path, int depth, std::string* expr) {
    if (!ref.is_string()) {
      return InvalidArgument("JSON Schema at '%s': $ref is not a string", path.c_str());
    }
    const std::string target = ref.get<std::string>();
    // A reference back to itself before any '{' or '[' would match no text, or recurse
    // without consuming (left recursion).
    for (const std::string& open : unconsumed_) {
      if (open == target) {
        return InvalidArgument(
            "JSON Schema at '%s': $ref '%s' comes back to itself with no object or array "
            "in between",
            path.c_str(), target.c_str());
      }
    }
    const auto found = refs_.find(target);
    if (found != refs_.end()) {
      *expr = found->second;
      return Status::Ok();
    }
    const Schema* at = nullptr;
    if (target == "#") {
      at = &root_;
    } else {
      for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
        const std::string p(prefix);
        if (target.compare(0, p.size(), p) != 0) continue;
        const std::string defs = p.substr(2, p.size() - 3), name = target.substr(p.size());
        if (root_.contains(defs) && root_[defs].is_object() && root_[defs].contains(name)) {
          at = &root_[defs][name];
        }
      }
    }
    if (at == nullptr) {
      return Unimplemented(
          "JSON Schema at '%s': $ref '%s' is not a local #/$defs/NAME or "
          "#/definitions/NAME of this schema",
          path.c_str(), target.c_str());
    }
    const std::string name = NewRule();
    refs_[target] = name;  // before its body: a recursive reference finds it
    const size_t slot = rules_.size();
    rules_.emplace_back(name, "");
    std::string body;
    unconsumed_.push_back(target);
    const Status status = Expr(*at, target.substr(1), depth + 1, &body);
    unconsumed_.pop_back();
    EMBER_RETURN_IF_ERROR(status);
    rules_[slot].second = body;
    *expr = name;
    return Status::Ok();
  }

  Status Typed(const Schema& s, const std::string& type, const std::string& path,
               int depth, std::string* expr) {
    const bool numeric = s.contains("minimum") || s.contains("maximum") ||
                         s.contains("exclusiveMinimum") || s.contains("exclusiveMaximum");
    if (type == "null" || type == "boolean") {
      *expr = Use(type);
    } else if (type == "number") {
      if (numeric) return Refuse(path, "minimum or maximum on type number (integers only)");
      *expr = Use("number");
    } else if (type == "integer") {
      return Integer(s, path, expr);
    } else if (type == "string") {
      return String(s, path, expr);
    } else if (type == "array" || type == "object") {
      // It opens with '[' or '{': a reference inside it consumes that first.
      std::vector<std::string> outer;
      outer.swap(unconsumed_);
      const Status status = type == "array" ? Array(s, path, depth, expr)
                                            : Object(s, path, depth, expr);
      unconsumed_.swap(outer);
      return status;
    } else {
      return InvalidArgument("JSON Schema at '%s': unknown type '%s'", path.c_str(),
                             type.c_str());
    }
    return Status::Ok();
  }

  // Bounds as integers: an inclusive bound rounds inward, an exclusive one steps past.
  Status Bound(const Schema& s, const char* key, bool lower, bool exclusive,
               const std::string& path, bool* has, int64_t* value) {
    if (!s.contains(key)) return Status::Ok();
    const Schema& v = s[key];
    if (!v.is_number()) {
      return InvalidArgument("JSON Schema at '%s': %s is not a number", path.c_str(), key);
    }
    const double d = v.get<double>();
    if (!(std::fabs(d) <= 1e18)) {
      return Unimplemented("JSON Schema at '%s': %s beyond 1e18", path.c_str(), key);
    }
    int64_t b = v.is_number_float()
                    ? static_cast<int64_t>(lower ? std::ceil(d) : std::floor(d))
                    : v.get<int64_t>();
    if (exclusive && static_cast<double>(b) == d) b += lower ? 1 : -1;
    if (!*has || (lower ? b > *value : b < *value)) *value = b;
    *has = true;
    return Status::Ok();
  }

  Status Integer(const Schema& s, const std::string& path, std::string* expr) {
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

  Status String(const Schema& s, const std::string& path, std::string* expr) {
    if (s.contains("format")) {
      if (s.contains("minLength") || s.contains("maxLength")) {
        return Refuse(path, "format beside minLength or maxLength");
      }
      const std::string format = s["format"].is_string() ? s["format"].get<std::string>() : "";
      if (format == "date" || format == "time" || format == "uuid") {
        *expr = "\"\\\"\" " + Use(format) + " \"\\\"\"";
      } else if (format == "date-time") {
        *expr = "\"\\\"\" " + Use("date") + " \"T\" " + Use("time") + " \"\\\"\"";
      } else {
        return Unimplemented("JSON Schema at '%s': format '%s' is not supported (date, "
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

  Status Array(const Schema& s, const std::string& path, int depth, std::string* expr) {
    uint64_t min = 0, max = 0;
    bool has_min = false, has_max = false;
    EMBER_RETURN_IF_ERROR(Count(s, "minItems", path, &min, &has_min));
    EMBER_RETURN_IF_ERROR(Count(s, "maxItems", path, &max, &has_max));
    std::vector<std::string> prefix;
    if (s.contains("prefixItems")) {
      const Schema& p = s["prefixItems"];
      if (!p.is_array()) {
        return InvalidArgument("JSON Schema at '%s': prefixItems is not an array",
                               path.c_str());
      }
      if (p.size() > kMaxCount) return Refuse(path, "more than 1000 prefixItems");
      for (size_t i = 0; i < p.size(); ++i) {
        std::string one;
        EMBER_RETURN_IF_ERROR(
            Expr(p[i], path + "/prefixItems/" + std::to_string(i), depth + 1, &one));
        prefix.push_back(one);
      }
    }
    std::string items = Use("value");
    if (s.contains("items")) {
      if (s["items"].is_boolean() && !s["items"].get<bool>()) {
        if (!has_max || max > prefix.size()) max = prefix.size();
        has_max = true;
      } else {
        EMBER_RETURN_IF_ERROR(Expr(s["items"], path + "/items", depth + 1, &items));
      }
    }
    if (has_max && min > max) return Refuse(path, "minItems above maxItems (or items)");
    Use("ws");
    // Element k (from 0): its schema, then whitespace.
    const auto element = [&](size_t k) {
      return (k < prefix.size() ? prefix[k] : items) + " ws";
    };
    // tail(k): the elements from k on, each after a comma. A rule per prefix element
    // (no deep nesting), then a repetition of `items`.
    std::string after;  // the rule for the elements after the prefix
    if (!prefix.empty()) {
      const uint64_t first = prefix.size();
      const uint64_t need = min > first ? min - first : 0;
      std::string body;
      if (!has_max || max > first) {
        body = "( \",\" ws " + items + " ws ){" + std::to_string(need) + "," +
               (has_max ? std::to_string(max - first) : "") + "}";
      }
      after = NewRule();
      rules_.emplace_back(after, body.empty() ? "\"\"" : body);
    }
    std::string next = after;
    for (size_t k = prefix.size(); k-- > 1;) {
      const std::string name = NewRule();
      std::string body = "\",\" ws " + element(k) + " " + next;
      if (k >= min) body = "( " + body + " )?";
      rules_.emplace_back(name, body);
      next = name;
    }
    // The first element (no comma), then the rest.
    std::string list;
    if (!prefix.empty()) {
      list = element(0) + " " + next;
    } else if (!has_max || max > 0) {
      const uint64_t need = min > 1 ? min - 1 : 0;
      list = element(0) + " ( \",\" ws " + items + " ws ){" + std::to_string(need) + "," +
             (has_max ? std::to_string(max - 1) : "") + "}";
    }
    if (list.empty()) {
      *expr = "\"[\" ws \"]\"";
    } else {
      *expr = "\"[\" ws ( " + list + " )" + (min == 0 ? "?" : "") + " \"]\"";
    }
    return Status::Ok();
  }

  Status Object(const Schema& s, const std::string& path, int depth, std::string* expr) {
    std::vector<std::pair<std::string, const Schema*>> properties;
    if (s.contains("properties")) {
      const Schema& p = s["properties"];
      if (!p.is_object()) {
        return InvalidArgument("JSON Schema at '%s': properties is not an object",
                               path.c_str());
      }
      for (auto it = p.begin(); it != p.end(); ++it) properties.emplace_back(it.key(), &*it);
    }
    std::set<std::string> required;
    if (s.contains("required")) {
      const Schema& r = s["required"];
      if (!r.is_array()) {
        return InvalidArgument("JSON Schema at '%s': required is not an array",
                               path.c_str());
      }
      static const Schema any = true;
      for (const Schema& name : r) {
        if (!name.is_string()) {
          return InvalidArgument("JSON Schema at '%s': a required name is not a string",
                                 path.c_str());
        }
        required.insert(name.get<std::string>());
        bool listed = false;
        for (const auto& p : properties) listed |= p.first == name.get<std::string>();
        if (!listed) properties.emplace_back(name.get<std::string>(), &any);
      }
    }
    // Other keys: with additionalProperties true or a schema; none without it when
    // properties are listed; any object with neither.
    std::string extra;
    if (s.contains("additionalProperties")) {
      const Schema& a = s["additionalProperties"];
      if (!(a.is_boolean() && !a.get<bool>())) {
        std::string value;
        EMBER_RETURN_IF_ERROR(Expr(a, path + "/additionalProperties", depth + 1, &value));
        extra = "\"\\\"\" " + OtherKey(properties) + " \"\\\"\" ws \":\" ws " + value + " ws";
      }
    } else if (properties.empty()) {
      *expr = Use("object");
      return Status::Ok();
    }
    Use("ws");
    std::vector<std::string> members;
    for (const auto& [name, schema] : properties) {
      std::string value;
      EMBER_RETURN_IF_ERROR(Expr(*schema, path + "/properties/" + name, depth + 1, &value));
      members.push_back(GbnfLiteral(Schema(name).dump()) + " ws \":\" ws " + value + " ws");
    }
    // after_i: members i.. each after a comma; first_i: the first present one without.
    const size_t n = members.size();
    std::string after = NewRule();
    rules_.emplace_back(after, extra.empty() ? "\"\"" : "( \",\" ws " + extra + " )*");
    std::string first = NewRule();
    rules_.emplace_back(first, extra.empty() ? "\"\"" : "( " + extra + " " + after + " )?");
    for (size_t i = n; i-- > 0;) {
      const bool optional = !required.count(properties[i].first);
      const std::string a = NewRule(), f = NewRule();
      rules_.emplace_back(a, optional ? "( \",\" ws " + members[i] + " )? " + after
                                      : "\",\" ws " + members[i] + " " + after);
      rules_.emplace_back(f, optional ? members[i] + " " + after + " | " + first
                                      : members[i] + " " + after);
      after = a;
      first = f;
    }
    *expr = "\"{\" ws " + first + " \"}\"";
    return Status::Ok();
  }

  // A key that is none of `properties`' names (whose own schemas apply to them), in
  // plain characters (no escapes: a key's text is then its value): a walk of the names'
  // trie, left at any character no name continues with.
  std::string OtherKey(const std::vector<std::pair<std::string, const Schema*>>& properties) {
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
    rules_.emplace_back(plain, "[^\"\\\\\\x00-\\x1F]");
    std::vector<std::string> names(trie.size());
    for (std::string& name : names) name = NewRule();
    for (size_t n = 0; n < trie.size(); ++n) {
      std::string body, others = "[^\"\\\\\\x00-\\x1F";
      if (!trie[n].name) body = "\"\"";
      for (const auto& [cp, child] : trie[n].next) {
        body += std::string(body.empty() ? "" : " | ") + "[" + CodePoint(cp) + "] " + names[child];
        others += CodePoint(cp);
      }
      body += std::string(body.empty() ? "" : " | ") + others + "] " + plain + "*";
      rules_.emplace_back(names[n], body);
    }
    return names[0];
  }

  const Schema& root_;
  const std::string prefix_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, std::string> refs_;
  std::set<std::string>& used_;
  std::vector<std::string> unconsumed_;  // $refs entered since the last '{' or '['
  int next_rule_ = 0;
};

}  // namespace

Status JsonSchemaToGbnf(const Json& schema, std::string* gbnf) {
  return JsonSchemaTextToGbnf(schema.dump(), "the schema", gbnf);
}

Status CheckNesting(const std::string& text, const std::string& where) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > 2 * kMaxSchemaDepth + 8) {
        return InvalidArgument("%s: JSON nested deeper than %d levels", where.c_str(),
                               2 * kMaxSchemaDepth + 8);
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return Status::Ok();
}

Status JsonSchemaTextToGbnf(const std::string& text, const std::string& where,
                            std::string* gbnf) {
  EMBER_RETURN_IF_ERROR(CheckNesting(text, where));
  Schema schema;
  EMBER_RETURN_IF_ERROR(CatchJsonErrors(where, [&] {
    schema = Schema::parse(text);
    return Status::Ok();
  }));
  std::string value;
  const Status s = JsonSchemasToRules({{"value-root", &schema}}, &value);
  if (!s.ok()) return Status(s.code(), "%s: %s", where.c_str(), s.message());
  // The rules' order does not matter to GBNF: root first, for a reader.
  *gbnf = "root ::= ws value-root ws\n" + value;
  return Status::Ok();
}

Status JsonSchemasToRules(
    const std::vector<std::pair<std::string, const OrderedJson*>>& schemas,
    std::string* rules) {
  std::set<std::string> used = {"ws"};
  std::string out;
  for (const auto& [name, schema] : schemas) {
    EMBER_RETURN_IF_ERROR(CheckNesting(schema->dump(), "the schema"));
    Converter converter(*schema, name + "-", &used);
    EMBER_RETURN_IF_ERROR(converter.Rules(name, &out));
  }
  Converter::Primitives(&used, &out);
  *rules = std::move(out);
  return Status::Ok();
}

}  // namespace ember::tools
