// The JSON Schema converter's state, shared by its walker (json_schema.cc: keywords,
// $ref, types), its containers (json_schema_containers.cc: arrays and objects) and its
// leaves (json_schema_rules.cc: integers, strings, formats, other keys, primitives).
#ifndef EMBER_TOOLS_GRAMMAR_JSON_SCHEMA_INTERNAL_H_
#define EMBER_TOOLS_GRAMMAR_JSON_SCHEMA_INTERNAL_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/status.h"
#include "tools/grammar/json_schema.h"

namespace ember::tools::schema {

using Schema = nlohmann::ordered_json;

// Repetition bounds on the sizes GBNF is asked to unroll.
inline constexpr uint64_t kMaxCount = 1000;

// The primitives, each emitted only when used (with what it uses).
const std::map<std::string, std::pair<const char*, std::vector<std::string>>>&
Primitives();

class Converter {
 public:
  // Rules are named `prefix` s0, s1, ...; primitives (ws, string, ...) are shared.
  Converter(const Schema& root, std::string prefix, std::set<std::string>* used)
      : root_(root), prefix_(std::move(prefix)), used_(*used) {}

  // Rule `name` ::= the schema's texts (no white space around), and the rules it uses.
  Status Rules(const std::string& name, std::string* out);

  static void Primitives(std::set<std::string>* used, std::string* out);

  std::string Use(const std::string& primitive);

 private:
  std::string NewRule() { return prefix_ + "s" + std::to_string(next_rule_++); }

  static Status Refuse(const std::string& path, const char* what);

  // The walker (json_schema.cc).
  Status Expr(const Schema& s, const std::string& path, int depth, std::string* expr);
  Status Ref(const Schema& ref, const std::string& path, int depth, std::string* expr);
  Status Typed(const Schema& s, const std::string& type, const std::string& path,
               int depth, std::string* expr);

  // The containers (json_schema_containers.cc).
  Status Array(const Schema& s, const std::string& path, int depth, std::string* expr);
  Status Object(const Schema& s, const std::string& path, int depth, std::string* expr);

  // The leaves (json_schema_rules.cc).
  Status Count(const Schema& s, const char* key, const std::string& path, uint64_t* n,
               bool* present);
  Status Bound(const Schema& s, const char* key, bool lower, bool exclusive,
               const std::string& path, bool* has, int64_t* value);
  Status Integer(const Schema& s, const std::string& path, std::string* expr);
  Status String(const Schema& s, const std::string& path, std::string* expr);
  std::string OtherKey(
      const std::vector<std::pair<std::string, const Schema*>>& properties);

  const Schema& root_;
  const std::string prefix_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, std::string> refs_;
  std::set<std::string>& used_;
  std::vector<std::string> unconsumed_;  // $refs entered since the last '{' or '['
  int next_rule_ = 0;
};

}  // namespace ember::tools::schema

#endif  // EMBER_TOOLS_GRAMMAR_JSON_SCHEMA_INTERNAL_H_
