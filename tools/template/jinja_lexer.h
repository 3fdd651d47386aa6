// Jinja lexer: splits a chat template into text and the tokens inside its tags, with the
// whitespace rules Hugging Face renders chat templates with (trim_blocks, lstrip_blocks,
// "-" markers, one trailing newline dropped), as Python's Jinja2 applies them.
#ifndef EMBER_TOOLS_TEMPLATE_JINJA_LEXER_H_
#define EMBER_TOOLS_TEMPLATE_JINJA_LEXER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace ember::tools::jinja {

enum class TokenKind {
  kText,         // template text (value)
  kOutputOpen,   // {{
  kOutputClose,  // }}
  kStmtOpen,     // {%
  kStmtClose,    // %}
  kName,         // identifier (value)
  kString,       // string literal (value, unescaped)
  kInt,          // integer literal (int_value)
  kFloat,        // float literal (float_value)
  kOperator,     // punctuation or operator (value: "+", "//", "==", "(", ...)
  kEnd,
};

struct Token {
  TokenKind kind;
  std::string value;
  int64_t int_value = 0;
  double float_value = 0;
  int line = 1;  // where it starts in the source, 1-based
  int column = 1;
};

// Tokenizes `source`. Errors (an unclosed tag or string, a character no token starts
// with) name the line and column.
Status Tokenize(const std::string& source, std::vector<Token>* tokens);

}  // namespace ember::tools::jinja

#endif  // EMBER_TOOLS_TEMPLATE_JINJA_LEXER_H_
