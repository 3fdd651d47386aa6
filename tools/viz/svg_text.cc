// Text in SVG documents (see svg_text.h).
#include "tools/viz/svg_text.h"

#include <cstdio>

#include "runtime/text/utf8.h"  // header-only: the charts link nothing of runtime/

namespace ember::tools {

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  uint32_t cp;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = DecodeUtf8(text, pos, &cp);
    const bool allowed = len > 0 &&
                         (cp >= 0x20 || cp == '\t' || cp == '\n' || cp == '\r') &&
                         cp != 0xFFFE && cp != 0xFFFF;
    if (!allowed) {
      out += "\uFFFD";
      pos += len ? len : 1;
      continue;
    }
    switch (cp) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out.append(text, pos, len);
    }
    pos += len;
  }
  return out;
}

bool IsWideCharacter(uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0x303E) ||
         (cp >= 0x3041 && cp <= 0x33FF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xA000 && cp <= 0xA4CF) ||
         (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
         (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF60) ||
         (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
         (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD);
}

size_t DisplayColumns(std::string_view utf8) {
  size_t columns = 0;
  uint32_t cp;
  for (size_t pos = 0; pos < utf8.size();) {
    const size_t len = DecodeUtf8(utf8, pos, &cp);
    columns += len == 0 ? 1 : IsWideCharacter(cp) ? 2 : 1;
    pos += len == 0 ? 1 : len;
  }
  return columns;
}

double TextWidth(std::string_view text, double font_px) {
  return DisplayColumns(text) * 0.62 * font_px;
}

std::string CutToColumns(std::string_view text, size_t max_columns) {
  if (DisplayColumns(text) <= max_columns) return std::string(text);
  std::string out;
  size_t columns = 0;
  uint32_t cp;
  for (size_t pos = 0; pos < text.size();) {
    size_t len = DecodeUtf8(text, pos, &cp);
    const size_t width = len == 0 ? 1 : IsWideCharacter(cp) ? 2 : 1;
    if (len == 0) len = 1;
    if (columns + width + 1 > max_columns) break;  // room for the ellipsis
    out.append(text, pos, len);
    columns += width;
    pos += len;
  }
  return out + "\u2026";  // …
}

std::string SvgNum(double v) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

}  // namespace ember::tools
