// Text in SVG documents: XML escaping, display widths of UTF-8 text (no font metrics are
// at hand, so widths are estimated from columns), compact numbers, and the font stack
// every ember SVG uses (the heatmaps, the bench charts).
#ifndef EMBER_TOOLS_VIZ_SVG_TEXT_H_
#define EMBER_TOOLS_VIZ_SVG_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ember::tools {

// Text for XML character data and attribute values: & < > " ' escaped; bytes that are not
// valid UTF-8 and characters XML 1.0 forbids (control characters other than tab, newline,
// carriage return; U+FFFE, U+FFFF) become U+FFFD.
std::string EscapeXml(std::string_view text);

// East Asian Wide (W) and Fullwidth (F) blocks, coarsely: enough to size labels.
bool IsWideCharacter(uint32_t code_point);

// Display columns of UTF-8 text: 2 for East Asian wide and fullwidth characters (CJK,
// Hangul, fullwidth forms, most emoji), 1 otherwise; invalid bytes count 1 each.
size_t DisplayColumns(std::string_view utf8);

// Estimated width in pixels of `text` at `font_px` (an average advance of 0.62 em per
// column, about right for DejaVu Sans and Arial).
double TextWidth(std::string_view text, double font_px);

// `text` cut to at most `max_columns` display columns, ending in "…" when cut.
std::string CutToColumns(std::string_view text, size_t max_columns);

// A coordinate or length with one decimal, without a trailing ".0": 12, 12.5.
std::string SvgNum(double value);

// The CSS font-family list: DejaVu/Noto on Linux, then CJK families, then any sans-serif.
inline constexpr const char* kSvgFontFamily =
    "'DejaVu Sans','Noto Sans',Arial,'Noto Sans CJK SC','Microsoft YaHei','PingFang SC',"
    "sans-serif";

}  // namespace ember::tools

#endif  // EMBER_TOOLS_VIZ_SVG_TEXT_H_
