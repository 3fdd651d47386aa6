// QuotePiece and Printable (see quote.h).
#include "tools/util/quote.h"

#include <cstdio>

#include "runtime/text/utf8.h"

namespace ember::tools {
namespace {

// Appends `bytes` to *out with control characters and invalid UTF-8 escaped; inside a
// string literal (`literal`), backslashes and double quotes too.
void AppendEscaped(std::string_view bytes, bool literal, std::string* out) {
  for (size_t pos = 0; pos < bytes.size();) {
    const unsigned char c = static_cast<unsigned char>(bytes[pos]);
    uint32_t cp;
    const size_t len = c >= 0x80 ? DecodeUtf8(bytes, pos, &cp) : 1;
    if (c >= 0x80 && len > 0) {
      // U+0080..U+009F are controls too: some terminals read U+009B as CSI.
      if (cp <= 0x9F) {
        char escaped[8];
        snprintf(escaped, sizeof(escaped), "\\u%04X", static_cast<unsigned>(cp));
        out->append(escaped);
      } else {
        out->append(bytes.substr(pos, len));
      }
      pos += len;
      continue;
    }
    if (c == '\n') {
      out->append("\\n");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (literal && (c == '\\' || c == '"')) {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20 || c >= 0x7F) {
      char hex[5];
      snprintf(hex, sizeof(hex), "\\x%02X", c);
      out->append(hex);
    } else {
      out->push_back(static_cast<char>(c));
    }
    ++pos;
  }
}

}  // namespace

std::string QuotePiece(std::string_view bytes) {
  std::string out = "\"";
  AppendEscaped(bytes, /*literal=*/true, &out);
  return out + "\"";
}

std::string Printable(std::string_view bytes) {
  std::string out;
  AppendEscaped(bytes, /*literal=*/false, &out);
  return out;
}

}  // namespace ember::tools
