// JSON Schema to GBNF: the grammar of the JSON texts a schema accepts, for generation
// that must fill a form or call a function (the C API's ember_json_schema_to_grammar,
// the CLI's --json-schema and the tools' parameters). The supported subset (docs/
// structured-output.md): type (one or a list), properties, required,
// additionalProperties, enum, const, items, prefixItems, minItems, maxItems, minLength,
// maxLength, minimum, maximum, exclusiveMinimum, exclusiveMaximum (integers only),
// anyOf, oneOf (as anyOf: the alternatives should not overlap), allOf of one schema,
// local $ref into $defs or definitions, string formats date, time, date-time and uuid;
// annotations (title, description, default, examples, ...) are ignored. Any other
// keyword is refused by name, as is nesting deeper than kMaxSchemaDepth.
//
// Objects list their properties in the schema's order, required or not; without
// additionalProperties (or with false) no other key is allowed, with true or a schema
// other keys follow them. Whitespace between tokens is at most 20 characters.
//
// Converting allocates (where a grammar is set, like compiling GBNF); the schema's text
// is read by json_reader.h, never trusted.
#ifndef EMBER_RUNTIME_GRAMMAR_JSON_SCHEMA_H_
#define EMBER_RUNTIME_GRAMMAR_JSON_SCHEMA_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/status.h"

namespace ember::grammar {

inline constexpr int kMaxSchemaDepth = 64;

// The grammar (rule root) of the texts the schema `text` accepts, into *gbnf; errors
// start with `where` (e.g. the file's name).
Status JsonSchemaTextToGbnf(std::string_view text, const char* where, std::string* gbnf);

// Several schemas' texts in one grammar (no root rule): schema i becomes rule names[i],
// its own rules named after it (names[i] + "-s0", ...), all sharing one set of
// primitives (ws, string, number, ...). A name must be a GBNF rule name no other rule
// uses.
Status JsonSchemasToRules(
    const std::vector<std::pair<std::string, std::string_view>>& schemas,
    std::string* rules);

// Refuses JSON text nested deeper than a schema may be (objects and arrays outside
// strings, about 2 x kMaxSchemaDepth): the schema's walk recurses once per level.
Status CheckNesting(std::string_view text, const char* where);

// A GBNF literal of UTF-8 text: quotes, backslashes and control characters escaped.
std::string GbnfLiteral(std::string_view text);

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_JSON_SCHEMA_H_
