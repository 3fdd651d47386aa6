// The JSON Schema converter's state, shared by its walker (json_schema.cc: keywords,
// $ref, types), its containers (json_schema_containers.cc: arrays and objects) and its
// leaves (json_schema_rules.cc: integers, strings, formats, other keys, primitives).
// Internal to runtime/grammar/.
#ifndef EMBER_RUNTIME_GRAMMAR_JSON_SCHEMA_INTERNAL_H_
#define EMBER_RUNTIME_GRAMMAR_JSON_SCHEMA_INTERNAL_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/grammar/json_reader.h"
#include "runtime/grammar/json_schema.h"
#include "runtime/status.h"

namespace ember::grammar::schema {

using Schema = JsonValue;

// Repetition bounds on the sizes GBNF is asked to unroll.
inline constexpr uint64_t kMaxCount = 1000;
// The GBNF text one schema may grow to (its rules and the expression being built): a
// bound on the converter's memory and time (nested arrays double their text a level).
// Thousands of times what real schemas make (a few KB).
inline constexpr size_t kMaxGrammarBytes = size_t{8} << 20;

// A primitive rule (ws, string, number, ...): its body and the primitives it uses.
struct Primitive {
  const char* name;
  const char* body;
  const char* uses[4];  // null-terminated when fewer
};

// The primitive named `name` (one of the table's: the converter asks for no other).
const Primitive& PrimitiveNamed(const std::string& name);

// A schema's JSON text of one value (an enum's, a key's), as the converter writes it.
std::string Dump(const Schema& value);

class Converter {
 public:
  // Rules are named `prefix` s0, s1, ...; primitives (ws, string, ...) are shared.
  Converter(const Schema& root, std::string prefix, std::set<std::string>* used)
      : root_(root), prefix_(std::move(prefix)), used_(*used) {}

  // Rule `name` ::= the schema's texts (no white space around), and the rules it uses.
  Status Rules(const std::string& name, std::string* out);

  // The primitives `used` names, each emitted only when used (with what it uses).
  static void Primitives(const std::set<std::string>& used, std::string* out);

  std::string Use(const std::string& primitive);

 private:
  std::string NewRule() { return prefix_ + "s" + std::to_string(next_rule_++); }

  static Status Refuse(const std::string& path, const char* what);

  // A rule of the schema's own.
  void AddRule(std::string name, std::string body) {
    bytes_ += name.size() + body.size();
    rules_.emplace_back(std::move(name), std::move(body));
  }

  // The walker (json_schema.cc): Expr checks the size ExprOf has grown the grammar to.
  Status Expr(const Schema& s, const std::string& path, int depth, std::string* expr);
  Status ExprOf(const Schema& s, const std::string& path, int depth, std::string* expr);
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
  const Schema any_ = Schema::Bool(true);  // a required name's schema, not listed
  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, std::string> refs_;
  std::set<std::string>& used_;
  std::vector<std::string> unconsumed_;  // $refs entered since the last '{' or '['
  int next_rule_ = 0;
  size_t bytes_ = 0;  // the rules' text so far
};

}  // namespace ember::grammar::schema

#endif  // EMBER_RUNTIME_GRAMMAR_JSON_SCHEMA_INTERNAL_H_
