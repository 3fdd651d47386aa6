// Tables as text (see text_table.h).
#include "tools/util/text_table.h"

#include <algorithm>

namespace ember::tools {

void WriteMarkdownTable(const std::vector<std::string>& header,
                        const std::vector<bool>& right,
                        const std::vector<std::vector<std::string>>& rows, FILE* out) {
  // Display width: count UTF-8 lead bytes only.
  auto width = [](const std::string& s) {
    size_t w = 0;
    for (unsigned char c : s) w += (c & 0xC0) != 0x80;
    return w;
  };
  std::vector<size_t> widths(header.size(), 3);
  for (size_t c = 0; c < header.size(); ++c)
    widths[c] = std::max(widths[c], width(header[c]));
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c)
      widths[c] = std::max(widths[c], width(row[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size() && c < widths.size(); ++c) {
      const std::string pad(widths[c] - width(cells[c]), ' ');
      fprintf(out, "| %s ",
              right[c] ? (pad + cells[c]).c_str() : (cells[c] + pad).c_str());
    }
    fprintf(out, "|\n");
  };
  line(header);
  for (size_t c = 0; c < header.size(); ++c) {
    fprintf(out, "|%s%s", std::string(widths[c] + 1, '-').c_str(), right[c] ? ":" : "-");
  }
  fprintf(out, "|\n");
  for (const auto& row : rows) line(row);
}

std::string CsvQuote(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace ember::tools
