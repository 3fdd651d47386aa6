// Ratio charts as one self-contained SVG: one row per compared pair, its ratio as a dot
// and its interval as a line on a logarithmic axis with 1 (no change) marked, coloured by
// the verdict, the change in percent at the right. `ember bench-compare -o svg` draws
// NEW/OLD tokens/s with it.
#ifndef EMBER_TOOLS_VIZ_RATIO_CHART_H_
#define EMBER_TOOLS_VIZ_RATIO_CHART_H_

#include <string>
#include <vector>

namespace ember::tools {

struct RatioRow {
  std::string label;  // left of the row: "stories110M · tg64 · 2 threads"
  double ratio = 1, low = 1, high = 1;
  enum class Verdict { kNone, kHigher, kLower } verdict = Verdict::kNone;
  std::string note;  // right of the row: "+12.3 % faster"
};

struct RatioChartSpec {
  std::string title;
  std::vector<std::string> notes;
  std::string axis_label;  // under the axis: "NEW / OLD tokens/s"
  std::string higher_legend, lower_legend, none_legend;  // the verdicts' legend entries
  std::vector<RatioRow> rows;
};

// Colours of the verdicts: green, red, grey.
std::string VerdictColour(RatioRow::Verdict verdict);

// The SVG document. The plot is a <g class="plot" data-log-min="A" data-log-max="B"
// data-width="W" transform="translate(X,Y)">: a ratio r sits at
// x = (ln r - A) / (B - A) * W; row i is a <g class="row" id="row-I"> centred on
// y = (i + 0.5) * data-row-height, holding a <circle> at its ratio.
std::string RenderRatioChartSvg(const RatioChartSpec& spec);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_VIZ_RATIO_CHART_H_
