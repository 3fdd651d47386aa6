// JSON Schema to GBNF: see json_schema.h. The walker: keywords, $ref, types.
#include "runtime/grammar/json_schema.h"

#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/grammar/json_reader.h"
#include "runtime/grammar/json_schema_internal.h"

namespace ember::grammar {
namespace schema {
namespace {

// Keywords that only annotate.
constexpr const char* kAnnotations[] = {
    "$schema", "$id", "$comment", "title", "description", "default", "examples",
    "deprecated", "readOnly", "writeOnly", "$defs", "definitions"};

constexpr const char* kSupported[] = {
    "type", "properties", "required", "additionalProperties", "enum", "const", "items",
    "prefixItems", "minItems", "maxItems", "minLength", "maxLength", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "anyOf", "oneOf", "allOf", "$ref",
    "format"};

template <size_t N>
bool OneOf(const char* const (&words)[N], const std::string& key) {
  for (const char* w : words) {
    if (key == w) return true;
  }
  return false;
}

}  // namespace

std::string Dump(const Schema& value) {
  std::string out;
  DumpJson(value, &out);
  return out;
}

Status Converter::Rules(const std::string& name, std::string* out) {
  std::string expr;
  EMBER_RETURN_IF_ERROR(Expr(root_, "", 0, &expr));
  *out += name + " ::= " + expr + "\n";
  for (const auto& [rule, body] : rules_) *out += rule + " ::= " + body + "\n";
  return Status::Ok();
}

void Converter::Primitives(const std::set<std::string>& used, std::string* out) {
  for (const std::string& name : used) {
    *out += name + " ::= " + PrimitiveNamed(name).body + "\n";
  }
}

std::string Converter::Use(const std::string& primitive) {
  if (used_.insert(primitive).second) {
    for (const char* dep : PrimitiveNamed(primitive).uses) {
      if (dep == nullptr) break;
      Use(dep);
    }
  }
  return primitive;
}

Status Converter::Refuse(const std::string& path, const char* what) {
  return Unimplemented("JSON Schema at '%s': %s", path.empty() ? "/" : path.c_str(),
                       what);
}

Status Converter::Expr(const Schema& s, const std::string& path, int depth,
                       std::string* expr) {
  EMBER_RETURN_IF_ERROR(ExprOf(s, path, depth, expr));
  // An array's items stand twice in its expression, and a list of types walks the
  // schema once for each: nested, they would grow without bound.
  if (bytes_ + expr->size() > kMaxGrammarBytes) {
    // Unimplemented, as counts past kMaxCount are (ResourceExhausted would read as the
    // caller's buffer in ember_json_schema_to_grammar). The path last: it may be cut off.
    return Unimplemented("JSON Schema's grammar grows past %zu bytes at '%s'",
                         kMaxGrammarBytes, path.empty() ? "/" : path.c_str());
  }
  return Status::Ok();
}

Status Converter::ExprOf(const Schema& s, const std::string& path, int depth,
                         std::string* expr) {
  if (depth > kMaxSchemaDepth) {
    return InvalidArgument("JSON Schema nested deeper than %d levels at '%s'",
                           kMaxSchemaDepth, path.c_str());
  }
  if (s.is_bool()) {
    if (!s.boolean()) return Refuse(path, "schema false matches nothing");
    *expr = Use("value");
    return Status::Ok();
  }
  if (!s.is_object()) {
    return InvalidArgument("JSON Schema at '%s' is not an object or a boolean",
                           path.c_str());
  }
  size_t constraints = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (OneOf(kAnnotations, s.key(i))) continue;
    if (!OneOf(kSupported, s.key(i))) {
      return Unimplemented("JSON Schema at '%s': keyword '%s' is not supported",
                           path.empty() ? "/" : path.c_str(), s.key(i).c_str());
    }
    ++constraints;
  }
  if (const Schema* ref = s.Find("$ref")) {
    if (constraints > 1) return Refuse(path, "$ref beside other keywords");
    return Ref(*ref, path, depth, expr);
  }
  if (s.Has("const") || s.Has("enum")) {
    if (constraints > (s.Has("type") ? 2u : 1u)) {
      return Refuse(path, "enum or const beside keywords other than type");
    }
    std::vector<const Schema*> values;
    if (const Schema* one = s.Find("const")) {
      values.push_back(one);
    } else {
      const Schema& list = *s.Find("enum");
      if (!list.is_array() || list.empty()) {
        return InvalidArgument("JSON Schema at '%s': enum is not a non-empty array",
                               path.c_str());
      }
      for (size_t i = 0; i < list.size(); ++i) values.push_back(&list[i]);
    }
    std::string out = "( ";
    for (size_t i = 0; i < values.size(); ++i) {
      out += (i ? " | " : "") + GbnfLiteral(Dump(*values[i]));
    }
    *expr = out + " )";
    return Status::Ok();
  }
  for (const char* key : {"anyOf", "oneOf", "allOf"}) {
    const Schema* found = s.Find(key);
    if (found == nullptr) continue;
    if (constraints > 1) return Refuse(path, "anyOf, oneOf or allOf beside other keywords");
    const Schema& list = *found;
    if (!list.is_array() || list.empty()) {
      return InvalidArgument("JSON Schema at '%s': %s is not a non-empty array",
                             path.c_str(), key);
    }
    if (strcmp(key, "allOf") == 0 && list.size() != 1) {
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
  if (const Schema* t = s.Find("type")) {
    if (t->is_string()) {
      types.push_back(t->text());
    } else if (t->is_array() && !t->empty()) {
      for (size_t i = 0; i < t->size(); ++i) {
        if (!(*t)[i].is_string()) {
          return InvalidArgument("JSON Schema at '%s': a type is not a string",
                                 path.c_str());
        }
        types.push_back((*t)[i].text());
      }
    } else {
      return InvalidArgument("JSON Schema at '%s': type is not a string or a list",
                             path.c_str());
    }
  } else if (s.Has("properties") || s.Has("required") || s.Has("additionalProperties")) {
    types.push_back("object");
  } else if (s.Has("items") || s.Has("prefixItems") || s.Has("minItems") ||
             s.Has("maxItems")) {
    types.push_back("array");
  } else if (s.Has("minLength") || s.Has("maxLength") || s.Has("format")) {
    types.push_back("string");
  } else if (s.Has("minimum") || s.Has("maximum") || s.Has("exclusiveMinimum") ||
             s.Has("exclusiveMaximum")) {
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

Status Converter::Ref(const Schema& ref, const std::string& path, int depth,
                      std::string* expr) {
  if (!ref.is_string()) {
    return InvalidArgument("JSON Schema at '%s': $ref is not a string", path.c_str());
  }
  const std::string target = ref.text();
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
      const Schema* table = root_.Find(defs);
      if (table != nullptr && table->Has(name)) at = table->Find(name);
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
  bytes_ += name.size();
  std::string body;
  unconsumed_.push_back(target);
  const Status status = Expr(*at, target.substr(1), depth + 1, &body);
  unconsumed_.pop_back();
  EMBER_RETURN_IF_ERROR(status);
  bytes_ += body.size();
  rules_[slot].second = body;
  *expr = name;
  return Status::Ok();
}

Status Converter::Typed(const Schema& s, const std::string& type, const std::string& path,
                        int depth, std::string* expr) {
  const bool numeric = s.Has("minimum") || s.Has("maximum") || s.Has("exclusiveMinimum") ||
                       s.Has("exclusiveMaximum");
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
    const Status status =
        type == "array" ? Array(s, path, depth, expr) : Object(s, path, depth, expr);
    unconsumed_.swap(outer);
    return status;
  } else {
    return InvalidArgument("JSON Schema at '%s': unknown type '%s'", path.c_str(),
                           type.c_str());
  }
  return Status::Ok();
}

}  // namespace schema

using schema::Converter;
using schema::Schema;

Status CheckNesting(std::string_view text, const char* where) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > 2 * kMaxSchemaDepth + 8) {
        return InvalidArgument("%s: JSON nested deeper than %d levels", where,
                               2 * kMaxSchemaDepth + 8);
      }
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return Status::Ok();
}

namespace {

// A schema's text, checked for nesting and read; errors start with `where`.
Status ReadSchema(std::string_view text, const char* where, Schema* schema) {
  EMBER_RETURN_IF_ERROR(CheckNesting(text, where));
  const Status read = ReadJson(text, 2 * kMaxSchemaDepth + 8, schema);
  if (!read.ok()) return Status(read.code(), "%s: %s", where, read.message());
  return Status::Ok();
}

}  // namespace

Status JsonSchemaTextToGbnf(std::string_view text, const char* where, std::string* gbnf) {
  Schema schema;
  EMBER_RETURN_IF_ERROR(ReadSchema(text, where, &schema));
  std::set<std::string> used = {"ws"};
  std::string value;
  Converter converter(schema, "value-root-", &used);
  const Status s = converter.Rules("value-root", &value);
  if (!s.ok()) return Status(s.code(), "%s: %s", where, s.message());
  Converter::Primitives(used, &value);
  // The rules' order does not matter to GBNF: root first, for a reader.
  *gbnf = "root ::= ws value-root ws\n" + value;
  return Status::Ok();
}

Status JsonSchemasToRules(
    const std::vector<std::pair<std::string, std::string_view>>& schemas,
    std::string* rules) {
  std::set<std::string> used = {"ws"};
  std::string out;
  for (const auto& [name, text] : schemas) {
    Schema schema;
    EMBER_RETURN_IF_ERROR(ReadSchema(text, "the schema", &schema));
    Converter converter(schema, name + "-", &used);
    EMBER_RETURN_IF_ERROR(converter.Rules(name, &out));
  }
  Converter::Primitives(used, &out);
  *rules = std::move(out);
  return Status::Ok();
}

}  // namespace ember::grammar
