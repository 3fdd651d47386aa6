// Tables as text: markdown tables padded to their widest cells (readable in a terminal
// too) and CSV cells quoted as RFC 4180 asks.
#ifndef EMBER_TOOLS_UTIL_TEXT_TABLE_H_
#define EMBER_TOOLS_UTIL_TEXT_TABLE_H_

#include <cstdio>
#include <string>
#include <vector>

namespace ember::tools {

// Columns padded to their widest cell (UTF-8 counted in characters: "±" is one);
// `right` marks right-aligned (numeric) columns.
void WriteMarkdownTable(const std::vector<std::string>& header,
                        const std::vector<bool>& right,
                        const std::vector<std::vector<std::string>>& rows, FILE* out);

// `text` as one CSV cell: in double quotes (doubled inside) when it holds a comma, a
// quote or a line break.
std::string CsvQuote(const std::string& text);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_TEXT_TABLE_H_
