// QuotePiece (see quote.h).
#include "tools/util/quote.h"

#include <cstdio>

#include "runtime/text/utf8.h"

namespace ember::tools {

std::string QuotePiece(std::string_view bytes) {
  std::string out = "\"";
  for (size_t pos = 0; pos < bytes.size();) {
    const unsigned char c = static_cast<unsigned char>(bytes[pos]);
    uint32_t cp;
    const size_t len = c >= 0x80 ? DecodeUtf8(bytes, pos, &cp) : 1;
    if (c >= 0x80 && len > 0) {
      out.append(bytes.substr(pos, len));
      pos += len;
      continue;
    }
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7F) {
      char hex[5];
      snprintf(hex, sizeof(hex), "\\x%02X", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
    ++pos;
  }
  return out + "\"";
}

}  // namespace ember::tools
