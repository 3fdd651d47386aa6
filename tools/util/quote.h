// QuotePiece: token bytes as a readable, unambiguous C-style string literal.
#ifndef EMBER_TOOLS_UTIL_QUOTE_H_
#define EMBER_TOOLS_UTIL_QUOTE_H_

#include <string>
#include <string_view>

namespace ember::tools {

// "..." with \n \r \t \\ \" escaped, other control bytes and bytes that are not part of
// valid UTF-8 (a token may hold half a character) as \xNN, the rest as is.
std::string QuotePiece(std::string_view bytes);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_QUOTE_H_
