// JSON Schema to GBNF: the grammar of the JSON texts a schema accepts, for generation
// that must fill a form or call a function. The supported subset (docs/structured-
// output.md): type (one or a list), properties, required, additionalProperties,
// enum, const, items, prefixItems, minItems, maxItems, minLength, maxLength, minimum,
// maximum, exclusiveMinimum, exclusiveMaximum (integers only), anyOf, oneOf (as
// anyOf: the alternatives should not overlap), allOf of one schema, local $ref into
// $defs or definitions, string formats date, time, date-time and uuid; annotations
// (title, description, default, examples, ...) are ignored. Any other keyword is
// refused by name, as is nesting deeper than kMaxSchemaDepth.
//
// Objects list their properties in the schema's order, required or not; without
// additionalProperties (or with false) no other key is allowed, with true or a schema
// other keys follow them. Whitespace between tokens is at most 20 characters.
#ifndef EMBER_TOOLS_GRAMMAR_JSON_SCHEMA_H_
#define EMBER_TOOLS_GRAMMAR_JSON_SCHEMA_H_

#include <string>
#include <utility>
#include <vector>

#include "runtime/status.h"
#include "tools/util/json_util.h"

namespace ember::tools {

inline constexpr int kMaxSchemaDepth = 64;

// Schemas keep their keys' order: an object's properties are written in it.
using OrderedJson = nlohmann::ordered_json;

// The grammar (rule root) of the texts `schema` accepts, into *gbnf.
Status JsonSchemaToGbnf(const Json& schema, std::string* gbnf);

// The same from a schema's JSON text (`where` names it in messages).
Status JsonSchemaTextToGbnf(const std::string& text, const std::string& where,
                            std::string* gbnf);

// Several schemas in one grammar (no root rule): schema i becomes rule names[i], its own
// rules named after it (names[i] + "-s0", ...), all sharing one set of primitives (ws,
// string, number, ...). A name must be a GBNF rule name no other rule uses.
Status JsonSchemasToRules(
    const std::vector<std::pair<std::string, const OrderedJson*>>& schemas,
                          std::string* rules);

// Refuses JSON text nested deeper than a schema may be (objects and arrays outside
// strings, about 2 x kMaxSchemaDepth): the schema's walk recurses once per level.
Status CheckNesting(const std::string& text, const std::string& where);

// A GBNF literal of UTF-8 text: quotes, backslashes and control characters escaped.
std::string GbnfLiteral(const std::string& text);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_GRAMMAR_JSON_SCHEMA_H_
