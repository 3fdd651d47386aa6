// JSON Schema to GBNF: see json_schema.h.
#include "tools/grammar/json_schema.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tools/grammar/json_schema_internal.h"

namespace ember::tools {
namespace schema {
namespace {

// Keywords that only annotate.
// clang-format off
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
// clang-format on

}  // namespace

Status Converter::Rules(const std::string& name, std::string* out) {
  std::string expr;
  EMBER_RETURN_IF_ERROR(Expr(root_, "", 0, &expr));
  *out += name + " ::= " + expr + "\n";
  for (const auto& [rule, body] : rules_) *out += rule + " ::= " + body + "\n";
  return Status::Ok();
}

void Converter::Primitives(std::set<std::string>* used, std::string* out) {
  for (const std::string& name : *used) {
    *out += name + " ::= " + schema::Primitives().at(name).first + "\n";
  }
}

std::string Converter::Use(const std::string& primitive) {
  if (used_.insert(primitive).second) {
    for (const std::string& dep : schema::Primitives().at(primitive).second) Use(dep);
  }
  return primitive;
}

Status Converter::Refuse(const std::string& path, const char* what) {
  return Unimplemented("JSON Schema at '%s': %s", path.empty() ? "/" : path.c_str(),
                       what);
}

Status Converter::Expr(const Schema& s, const std::string& path, int depth,
                       std::string* expr) {
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
    if (constraints > 1)
      return Refuse(path, "anyOf, oneOf or allOf beside other keywords");
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

Status Converter::Ref(const Schema& ref, const std::string& path, int depth,
                      std::string* expr) {
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

Status Converter::Typed(const Schema& s, const std::string& type, const std::string& path,
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

Status JsonSchemaToGbnf(const Json& schema, std::string* gbnf) {
  return JsonSchemaTextToGbnf(schema.dump(), "the schema", gbnf);
}

Status CheckNesting(const std::string& text, const std::string& where) {
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
