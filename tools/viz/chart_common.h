// What the bench charts share: the series palette, "nice" axis ticks, compact value
// labels, and the document's opening (size, title, style, white background, the title
// and note lines at the top).
#ifndef EMBER_TOOLS_VIZ_CHART_COMMON_H_
#define EMBER_TOOLS_VIZ_CHART_COMMON_H_

#include <cstddef>
#include <string>
#include <vector>

namespace ember::tools {

inline constexpr double kChartMargin = 16;

// Series colours (#rrggbb): Okabe and Ito's palette for colour-blind readers, without its
// yellow (too faint on white); colours repeat after seven series.
std::string ChartColour(size_t series);

// Ticks of a linear axis from 0 that covers `max`: steps of 1, 2, 2.5 or 5 times a power
// of ten, about `target` of them. ticks.back() is the axis' top (>= max).
std::vector<double> LinearTicks(double max, int target = 5);

// A value in a few characters: 1458, 247, 66.8, 5.12, 0.034, 14.6k, 2.4M.
std::string CompactNumber(double value);

// An axis tick (a round number) without trailing zeros: 0, 0.25, 1500, 250k, 1.2M.
std::string TickNumber(double value);

// The opening of a self-contained SVG document of width x height CSS pixels (no scripts,
// no external files): its <title>, the shared style with `extra_style` appended, a white
// background, then the title (bold) and note lines. Returns the y below them.
double OpenChart(double width, double height, const std::string& title,
                 const std::vector<std::string>& notes, const std::string& extra_style,
                 std::string* out);

// Height of OpenChart's title and notes; the widest of them (pixels).
double ChartHeaderHeight(size_t num_notes);
double ChartHeaderWidth(const std::string& title, const std::vector<std::string>& notes);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_VIZ_CHART_COMMON_H_
