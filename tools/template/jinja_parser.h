// Jinja parser: tokens -> syntax tree (jinja_ast.h), with Jinja2's operator precedence.
// What chat templates do not use (macros, blocks, includes, {% raw %}, recursive loops,
// block assignments) is refused with a message naming it and its line.
#ifndef EMBER_TOOLS_TEMPLATE_JINJA_PARSER_H_
#define EMBER_TOOLS_TEMPLATE_JINJA_PARSER_H_

#include <string>

#include "runtime/status.h"
#include "tools/template/jinja_ast.h"

namespace ember::tools::jinja {

// Tokenizes and parses a template's source into its statements.
Status Parse(const std::string& source, Body* body);

}  // namespace ember::tools::jinja

#endif  // EMBER_TOOLS_TEMPLATE_JINJA_PARSER_H_
