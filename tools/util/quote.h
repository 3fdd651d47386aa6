// Text read from a file, made safe to print: QuotePiece (token bytes as a C-style string
// literal) and Printable (names and messages as they are, minus what a terminal obeys).
#ifndef EMBER_TOOLS_UTIL_QUOTE_H_
#define EMBER_TOOLS_UTIL_QUOTE_H_

#include <string>
#include <string_view>

namespace ember::tools {

// "..." with \n \r \t \\ \" escaped, other control bytes and bytes that are not part of
// valid UTF-8 (a token may hold half a character) as \xNN, the C1 controls U+0080 to
// U+009F as \uNNNN, the rest as is.
std::string QuotePiece(std::string_view bytes);

// `bytes` with control characters escaped as QuotePiece escapes them (\n, \xNN, \uNNNN;
// no quotes added, quotes and backslashes left alone), for text a model file or any input
// provides (a description, a tensor name, a template's error) printed to a terminal: an
// escape sequence in it would recolour, retitle or clear the terminal, or fake output.
std::string Printable(std::string_view bytes);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_QUOTE_H_
