// Grouped bar charts as one self-contained SVG (no scripts, fonts or external files):
// panels side by side, each with its own value axis from 0; in a panel, groups along the
// bottom and one bar per series in each group, a whisker from a low to a high value, an
// optional reference mark (a roofline) across the bar, and the value over it. A legend
// names the series. `ember bench` draws tokens/s per test with it (tools/bench/).
#ifndef EMBER_TOOLS_VIZ_BAR_CHART_H_
#define EMBER_TOOLS_VIZ_BAR_CHART_H_

#include <cstddef>
#include <string>
#include <vector>

namespace ember::tools {

struct ChartBar {
  size_t group = 0, series = 0;  // indexes into the panel's groups, the chart's series
  double value = 0;              // the bar's height
  double low = -1, high = -1;    // the whisker; negative: none
  double reference = -1;         // the reference mark; negative: none
};

struct BarChartPanel {
  std::string title;                // over the panel: "tg64 (decode)"
  std::vector<std::string> groups;  // labels under the groups; '\n' starts a second line
  std::vector<ChartBar> bars;
};

struct BarChartSpec {
  std::string title;               // first line, bold
  std::vector<std::string> notes;  // lines under it
  std::string value_label;         // the value axis: "tokens/s"
  std::vector<std::string> series;
  std::string whisker_legend;    // what the whiskers mean; empty: no legend entry
  std::string reference_legend;  // what the reference mark means; empty: none
  std::vector<BarChartPanel> panels;
};

// The SVG document. Each panel is a <g class="panel" id="panel-I"
// transform="translate(X,Y)"> whose origin is the bottom-left corner of its plot (values
// grow upwards: a value v sits at y = -v * data-scale); its ticks are
// <g class="ytick" data-value="V"> and its bars <rect class="bar" data-series="S"
// data-value="V">, drawn in the series' ChartColour.
std::string RenderBarChartSvg(const BarChartSpec& spec);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_VIZ_BAR_CHART_H_
