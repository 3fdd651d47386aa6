// Grouped bar charts as SVG (see bar_chart.h). Sizes are in CSS pixels.
#include "tools/viz/bar_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tools/viz/chart_common.h"
#include "tools/viz/svg_text.h"

namespace ember::tools {
namespace {

constexpr double kPlotHeight = 200;
constexpr double kBarWidth = 26, kBarGap = 4, kGroupPad = 10;
constexpr double kPanelTitle = 20, kPlotTop = 10, kLabelLine = 13;
constexpr double kAxisTitle = 16;  // the rotated value label left of the ticks
constexpr double kTickFont = 10.5, kGroupFont = 11, kValueFont = 10;
constexpr double kPanelGap = 28, kMaxRowWidth = 1040, kLegendRow = 20;
constexpr size_t kMaxLabelColumns = 26;

std::vector<std::string> Lines(const std::string& label) {
  std::vector<std::string> lines;
  size_t begin = 0;
  for (size_t nl; (nl = label.find('\n', begin)) != std::string::npos; begin = nl + 1) {
    lines.push_back(CutToColumns(label.substr(begin, nl - begin), kMaxLabelColumns));
  }
  lines.push_back(CutToColumns(label.substr(begin), kMaxLabelColumns));
  return lines;
}

struct PanelLayout {
  std::vector<size_t> slots;  // the series drawn in this panel, in order
  std::vector<double> ticks;
  double axis_w = 0;   // tick labels
  double group_w = 0;  // every group of the panel is this wide
  size_t label_lines = 1;
  double width = 0, height = 0;
  double x = 0, y = 0;  // top-left corner in the document
  double scale() const { return kPlotHeight / ticks.back(); }
  double plot_x() const { return x + kAxisTitle + axis_w; }
  double plot_bottom() const { return y + kPanelTitle + kPlotTop + kPlotHeight; }
};

PanelLayout LayOut(const BarChartPanel& panel) {
  PanelLayout l;
  double max = 0;
  for (const ChartBar& bar : panel.bars) {
    if (std::find(l.slots.begin(), l.slots.end(), bar.series) == l.slots.end()) {
      l.slots.push_back(bar.series);
    }
    max = std::max({max, bar.value, bar.high, bar.reference});
  }
  std::sort(l.slots.begin(), l.slots.end());
  // Room over the tallest mark for its value label (about 14 of the 200 pixels).
  l.ticks = LinearTicks(max * 1.08);
  for (double tick : l.ticks) {
    l.axis_w = std::max(l.axis_w, TextWidth(TickNumber(tick), kTickFont));
  }
  l.axis_w = std::ceil(l.axis_w) + 10;
  double label_w = 0;
  for (const std::string& group : panel.groups) {
    const std::vector<std::string> lines = Lines(group);
    l.label_lines = std::max(l.label_lines, lines.size());
    for (const std::string& line : lines)
      label_w = std::max(label_w, TextWidth(line, kGroupFont));
  }
  const double n = static_cast<double>(std::max<size_t>(1, l.slots.size()));
  l.group_w = std::ceil(
      std::max(n * kBarWidth + (n - 1) * kBarGap + 2 * kGroupPad, label_w + 10));
  const double plot_w = std::max(l.group_w * panel.groups.size(), 80.0);
  l.width = std::max(kAxisTitle + l.axis_w + plot_w + 6, TextWidth(panel.title, 12) + 4);
  l.height = kPanelTitle + kPlotTop + kPlotHeight + 8 + kLabelLine * l.label_lines;
  return l;
}

// The series swatches, then the whisker and the reference mark, wrapping at `width`.
// Returns the height used.
double Legend(const BarChartSpec& spec, double x0, double y0, double width,
              std::string* out) {
  std::string& o = *out;
  double x = x0, y = y0;
  auto place = [&](double item_w) {
    if (x > x0 && x + item_w > x0 + width) {
      x = x0;
      y += kLegendRow;
    }
    const double at = x;
    x += item_w + 18;
    return at;
  };
  o += "<g class=\"legend\">";
  for (size_t s = 0; s < spec.series.size(); ++s) {
    const double at = place(18 + TextWidth(spec.series[s], 12));
    o += "<rect x=\"" + SvgNum(at) + "\" y=\"" + SvgNum(y) +
         "\" width=\"12\" height=\"12\" fill=\"" + ChartColour(s) + "\"/><text x=\"" +
         SvgNum(at + 17) + "\" y=\"" + SvgNum(y + 10.5) + "\">" +
         EscapeXml(spec.series[s]) + "</text>";
  }
  if (!spec.reference_legend.empty()) {
    const double at = place(30 + TextWidth(spec.reference_legend, 12));
    o += "<path class=\"ref\" d=\"M" + SvgNum(at) + " " + SvgNum(y + 6) +
         "h24\"/><text x=\"" + SvgNum(at + 30) + "\" y=\"" + SvgNum(y + 10.5) + "\">" +
         EscapeXml(spec.reference_legend) + "</text>";
  }
  if (!spec.whisker_legend.empty()) {
    const double at = place(16 + TextWidth(spec.whisker_legend, 12));
    o += "<path class=\"wh\" d=\"M" + SvgNum(at + 5) + " " + SvgNum(y) + "v12M" +
         SvgNum(at + 1) + " " + SvgNum(y) + "h8M" + SvgNum(at + 1) + " " +
         SvgNum(y + 12) + "h8\"/><text x=\"" + SvgNum(at + 16) + "\" y=\"" +
         SvgNum(y + 10.5) + "\">" + EscapeXml(spec.whisker_legend) + "</text>";
  }
  o += "</g>\n";
  return y + kLegendRow - y0;
}

void Panel(const BarChartPanel& panel, size_t index, const PanelLayout& l,
           const std::string& value_label, std::string* out) {
  std::string& o = *out;
  const double scale = l.scale();
  const double plot_w = l.group_w * panel.groups.size();
  o += "<g class=\"panel\" id=\"panel-" + std::to_string(index) + "\" data-scale=\"" +
       std::to_string(scale) + "\" transform=\"translate(" + SvgNum(l.plot_x()) + "," +
       SvgNum(l.plot_bottom()) + ")\">\n";
  o += "<text class=\"pt\" x=\"" + SvgNum(-l.axis_w - kAxisTitle) + "\" y=\"" +
       SvgNum(-kPlotHeight - kPlotTop - 6) + "\">" + EscapeXml(panel.title) + "</text>\n";
  // Grid lines and tick labels; the value label read upwards beside them.
  for (double tick : l.ticks) {
    const std::string y = SvgNum(-tick * scale);
    char value[32];
    snprintf(value, sizeof(value), "%.10g", tick);
    o += "<g class=\"ytick\" data-value=\"" + std::string(value) + "\"><path d=\"M0 " +
         y + "h" + SvgNum(plot_w) + "\" stroke=\"" + (tick == 0 ? "#888" : "#e4e4e4") +
         "\"/><text x=\"-6\" y=\"" + y + "\">" + TickNumber(tick) + "</text></g>\n";
  }
  o += "<text class=\"at\" transform=\"rotate(-90)\" x=\"" + SvgNum(kPlotHeight / 2) +
       "\" y=\"" + SvgNum(-l.axis_w - 4) + "\">" + EscapeXml(value_label) + "</text>\n";
  const double slots_w = l.slots.size() * (kBarWidth + kBarGap) - kBarGap;
  for (size_t g = 0; g < panel.groups.size(); ++g) {
    const double gx = g * l.group_w;
    const std::vector<std::string> lines = Lines(panel.groups[g]);
    o += "<text class=\"gl\" x=\"" + SvgNum(gx + l.group_w / 2) + "\" y=\"" +
         SvgNum(kLabelLine + 2) + "\">";
    for (size_t i = 0; i < lines.size(); ++i) {
      o += "<tspan x=\"" + SvgNum(gx + l.group_w / 2) + "\"" +
           (i ? " dy=\"" + SvgNum(kLabelLine) + "\"" : std::string()) + ">" +
           EscapeXml(lines[i]) + "</tspan>";
    }
    o += "</text>\n";
  }
  for (const ChartBar& bar : panel.bars) {
    if (bar.group >= panel.groups.size()) continue;
    const size_t slot =
        std::find(l.slots.begin(), l.slots.end(), bar.series) - l.slots.begin();
    const double bx =
        bar.group * l.group_w + (l.group_w - slots_w) / 2 + slot * (kBarWidth + kBarGap);
    const double cx = bx + kBarWidth / 2;
    const double top = std::max(0.0, bar.value) * scale;
    o += "<rect class=\"bar\" data-series=\"" + std::to_string(bar.series) +
         "\" data-value=\"" + std::to_string(bar.value) + "\" x=\"" + SvgNum(bx) +
         "\" y=\"" + SvgNum(-top) + "\" width=\"" + SvgNum(kBarWidth) + "\" height=\"" +
         SvgNum(top) + "\" fill=\"" + ChartColour(bar.series) + "\"/>";
    double label_y = top;
    if (bar.low >= 0 && bar.high >= 0) {
      const double lo = bar.low * scale, hi = bar.high * scale;
      o += "<path class=\"wh\" d=\"M" + SvgNum(cx) + " " + SvgNum(-lo) + "V" +
           SvgNum(-hi) + "M" + SvgNum(cx - 4) + " " + SvgNum(-hi) + "h8M" +
           SvgNum(cx - 4) + " " + SvgNum(-lo) + "h8\"/>";
      label_y = std::max(label_y, hi);
    }
    if (bar.reference >= 0) {
      const double ref = bar.reference * scale;
      o += "<path class=\"ref\" d=\"M" + SvgNum(bx - 3) + " " + SvgNum(-ref) + "h" +
           SvgNum(kBarWidth + 6) + "\"/>";
      // The value goes over the mark when the mark would cross it.
      if (ref >= label_y && ref < label_y + kValueFont + 4) label_y = ref;
    }
    o += "<text class=\"bv\" x=\"" + SvgNum(cx) + "\" y=\"" + SvgNum(-label_y - 4) +
         "\">" + CompactNumber(bar.value) + "</text>\n";
  }
  o += "</g>\n";
}

}  // namespace

std::string RenderBarChartSvg(const BarChartSpec& spec) {
  std::vector<PanelLayout> layouts;
  for (const BarChartPanel& panel : spec.panels) layouts.push_back(LayOut(panel));
  // Panels left to right, wrapping into rows no wider than kMaxRowWidth.
  const double header_w = ChartHeaderWidth(spec.title, spec.notes);
  double content_w = std::max(480.0, header_w);
  double row_x = 0, row_h = 0, y = 0;
  for (PanelLayout& l : layouts) {
    if (row_x > 0 && row_x + l.width > kMaxRowWidth) {
      y += row_h + kPanelGap;
      row_x = row_h = 0;
    }
    l.x = row_x;
    l.y = y;
    row_x += l.width + kPanelGap;
    row_h = std::max(row_h, l.height);
    content_w = std::max(content_w, row_x - kPanelGap);
  }
  const double panels_h = y + row_h;
  // The legend's height depends on the width; lay it out once to measure.
  std::string legend;
  const double header_h = ChartHeaderHeight(spec.notes.size());
  const double legend_h = Legend(spec, kChartMargin, header_h + 8, content_w, &legend);
  const double top = header_h + 8 + legend_h + 6;
  const double width = std::ceil(content_w + 2 * kChartMargin);
  const double height = std::ceil(top + panels_h + kChartMargin);

  std::string o;
  OpenChart(width, height, spec.title, spec.notes,
            ".pt{font-weight:bold}.ytick text{font-size:10.5px;text-anchor:end;"
            "dominant-baseline:central;fill:#444}.at{text-anchor:middle;fill:#444}"
            ".gl{font-size:11px;text-anchor:middle;fill:#333}"
            ".bv{font-size:10px;text-anchor:middle;fill:#333}"
            ".wh{stroke:#333;stroke-width:1.2;fill:none}"
            ".ref{stroke:#222;stroke-width:2;stroke-dasharray:4 2;fill:none}",
            &o);
  o += legend;
  for (size_t i = 0; i < spec.panels.size(); ++i) {
    PanelLayout l = layouts[i];
    l.x += kChartMargin;
    l.y += top;
    Panel(spec.panels[i], i, l, spec.value_label, &o);
  }
  o += "</svg>\n";
  return o;
}

}  // namespace ember::tools
