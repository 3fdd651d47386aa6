// JSON Schema to GBNF, the containers: arrays (prefixItems, items, their counts) and
// objects (properties in the schema's order, required ones, additionalProperties). See
// json_schema.h; the walker that reaches them is json_schema.cc.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/grammar/json_schema.h"
#include "runtime/grammar/json_schema_internal.h"

namespace ember::grammar::schema {

Status Converter::Array(const Schema& s, const std::string& path, int depth,
                        std::string* expr) {
  uint64_t min = 0, max = 0;
  bool has_min = false, has_max = false;
  EMBER_RETURN_IF_ERROR(Count(s, "minItems", path, &min, &has_min));
  EMBER_RETURN_IF_ERROR(Count(s, "maxItems", path, &max, &has_max));
  std::vector<std::string> prefix;
  if (const Schema* found = s.Find("prefixItems")) {
    const Schema& p = *found;
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
  if (const Schema* found = s.Find("items")) {
    if (found->is_bool() && !found->boolean()) {
      if (!has_max || max > prefix.size()) max = prefix.size();
      has_max = true;
    } else {
      EMBER_RETURN_IF_ERROR(Expr(*found, path + "/items", depth + 1, &items));
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
    AddRule(after, body.empty() ? "\"\"" : body);
  }
  std::string next = after;
  for (size_t k = prefix.size(); k-- > 1;) {
    const std::string name = NewRule();
    std::string body = "\",\" ws " + element(k) + " " + next;
    if (k >= min) body = "( " + body + " )?";
    AddRule(name, body);
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

Status Converter::Object(const Schema& s, const std::string& path, int depth,
                         std::string* expr) {
  std::vector<std::pair<std::string, const Schema*>> properties;
  if (const Schema* found = s.Find("properties")) {
    const Schema& p = *found;
    if (!p.is_object()) {
      return InvalidArgument("JSON Schema at '%s': properties is not an object",
                             path.c_str());
    }
    for (size_t i = 0; i < p.size(); ++i) properties.emplace_back(p.key(i), &p[i]);
  }
  std::set<std::string> required;
  if (const Schema* found = s.Find("required")) {
    const Schema& r = *found;
    if (!r.is_array()) {
      return InvalidArgument("JSON Schema at '%s': required is not an array",
                             path.c_str());
    }
    for (size_t i = 0; i < r.size(); ++i) {
      if (!r[i].is_string()) {
        return InvalidArgument("JSON Schema at '%s': a required name is not a string",
                               path.c_str());
      }
      const std::string& name = r[i].text();
      required.insert(name);
      bool listed = false;
      for (const auto& p : properties) listed |= p.first == name;
      if (!listed) properties.emplace_back(name, &any_);
    }
  }
  // Other keys: with additionalProperties true or a schema; none without it when
  // properties are listed; any object with neither.
  std::string extra;
  if (const Schema* found = s.Find("additionalProperties")) {
    const Schema& a = *found;
    if (!(a.is_bool() && !a.boolean())) {
      std::string value;
      EMBER_RETURN_IF_ERROR(Expr(a, path + "/additionalProperties", depth + 1, &value));
      extra =
          "\"\\\"\" " + OtherKey(properties) + " \"\\\"\" ws \":\" ws " + value + " ws";
    }
  } else if (properties.empty()) {
    *expr = Use("object");
    return Status::Ok();
  }
  Use("ws");
  std::vector<std::string> members;
  for (const auto& [name, schema] : properties) {
    std::string value, key;
    EMBER_RETURN_IF_ERROR(Expr(*schema, path + "/properties/" + name, depth + 1, &value));
    DumpJsonString(name, &key);
    members.push_back(GbnfLiteral(key) + " ws \":\" ws " + value + " ws");
  }
  // after_i: members i.. each after a comma; first_i: the first present one without.
  const size_t n = members.size();
  std::string after = NewRule();
  AddRule(after, extra.empty() ? "\"\"" : "( \",\" ws " + extra + " )*");
  std::string first = NewRule();
  AddRule(first, extra.empty() ? "\"\"" : "( " + extra + " " + after + " )?");
  for (size_t i = n; i-- > 0;) {
    const bool optional = !required.count(properties[i].first);
    const std::string a = NewRule(), f = NewRule();
    AddRule(a, optional ? "( \",\" ws " + members[i] + " )? " + after
                                    : "\",\" ws " + members[i] + " " + after);
    AddRule(f, optional ? members[i] + " " + after + " | " + first
                                    : members[i] + " " + after);
    after = a;
    first = f;
  }
  *expr = "\"{\" ws " + first + " \"}\"";
  return Status::Ok();
}

}  // namespace ember::grammar::schema
