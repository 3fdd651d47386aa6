// Ratio charts as SVG (see ratio_chart.h). Sizes are in CSS pixels.
#include "tools/viz/ratio_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tools/viz/chart_common.h"
#include "tools/viz/svg_text.h"

namespace ember::tools {
namespace {

constexpr double kRowHeight = 22, kPlotWidth = 440, kMinTickGap = 42;
constexpr double kLegendRow = 20, kAxisHeight = 40;
constexpr size_t kMaxLabelColumns = 48;

// Round ratios, finest first; the axis keeps those at least kMinTickGap apart, from 1
// outwards.
constexpr double kTickCandidates[] = {
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1,  0.2,  0.25, 0.3,  0.4,
    0.5,   0.6,   0.7,   0.8,  0.85, 0.9,  0.95, 0.97, 0.98, 0.99, 1.01,
    1.02,  1.03,  1.05,  1.1,  1.15, 1.2,  1.3,  1.4,  1.5,  1.75, 2,
    2.5,   3,     4,     5,    10,   20,   50,   100,  200,  500,  1000};

std::string TickText(double ratio) {
  char buf[16];
  snprintf(buf, sizeof(buf), "%g", ratio);
  return buf;
}

}  // namespace

std::string VerdictColour(RatioRow::Verdict verdict) {
  switch (verdict) {
    case RatioRow::Verdict::kHigher:
      return "#1a7f37";
    case RatioRow::Verdict::kLower:
      return "#cf222e";
    case RatioRow::Verdict::kNone:
      break;
  }
  return "#8c959f";
}

std::string RenderRatioChartSvg(const RatioChartSpec& spec) {
  // The axis covers every interval and 1, with a little room on both sides.
  double lo = 1 / 1.04, hi = 1.04;
  for (const RatioRow& row : spec.rows) {
    for (double r : {row.ratio, row.low, row.high}) {
      if (r > 0 && std::isfinite(r)) lo = std::min(lo, r), hi = std::max(hi, r);
    }
  }
  const double log_min = std::log(lo) - 0.04 * std::log(hi / lo);
  const double log_max = std::log(hi) + 0.04 * std::log(hi / lo);
  const auto x_of = [&](double r) {
    const double clamped = std::min(std::max(std::log(r), log_min), log_max);
    return (clamped - log_min) / (log_max - log_min) * kPlotWidth;
  };
  std::vector<double> ticks = {1};
  for (int direction : {-1, 1}) {
    double last = x_of(1);
    const int n = sizeof(kTickCandidates) / sizeof(kTickCandidates[0]);
    for (int k = 0; k < n; ++k) {
      const double r = kTickCandidates[direction > 0 ? k : n - 1 - k];
      if ((direction > 0) != (r > 1)) continue;
      if (std::log(r) < log_min || std::log(r) > log_max) continue;
      if (std::fabs(x_of(r) - last) < kMinTickGap) continue;
      ticks.push_back(r);
      last = x_of(r);
    }
  }

  double label_w = 0, note_w = 0;
  std::vector<std::string> labels;
  for (const RatioRow& row : spec.rows) {
    labels.push_back(CutToColumns(row.label, kMaxLabelColumns));
    label_w = std::max(label_w, TextWidth(labels.back(), 12));
    note_w = std::max(note_w, TextWidth(row.note, 12));
  }
  label_w = std::ceil(label_w) + 12;
  const double content_w = std::max(ChartHeaderWidth(spec.title, spec.notes),
                                    label_w + kPlotWidth + 12 + note_w);
  const double header_h = ChartHeaderHeight(spec.notes.size());
  const double plot_y = header_h + 8 + kLegendRow + 8;
  const double plot_h = spec.rows.size() * kRowHeight;
  const double width = std::ceil(content_w + 2 * kChartMargin);
  const double height = std::ceil(plot_y + plot_h + kAxisHeight + kChartMargin);

  std::string o;
  OpenChart(width, height, spec.title, spec.notes,
            ".rl{text-anchor:end;dominant-baseline:central}"
            ".rn{dominant-baseline:central}.xt{font-size:10.5px;text-anchor:middle;"
            "fill:#444}.ax{text-anchor:middle;fill:#444}",
            &o);
  // Legend: the three verdicts.
  double lx = kChartMargin;
  const double ly = header_h + 8;
  o += "<g class=\"legend\">";
  const std::pair<RatioRow::Verdict, const std::string*> entries[] = {
      {RatioRow::Verdict::kHigher, &spec.higher_legend},
      {RatioRow::Verdict::kLower, &spec.lower_legend},
      {RatioRow::Verdict::kNone, &spec.none_legend}};
  for (const auto& entry : entries) {
    if (entry.second->empty()) continue;
    o += "<path d=\"M" + SvgNum(lx) + " " + SvgNum(ly + 6) + "h18\" stroke=\"" +
         VerdictColour(entry.first) + "\" stroke-width=\"2\"/><circle cx=\"" +
         SvgNum(lx + 9) + "\" cy=\"" + SvgNum(ly + 6) + "\" r=\"4\" fill=\"" +
         VerdictColour(entry.first) + "\"/><text x=\"" + SvgNum(lx + 24) + "\" y=\"" +
         SvgNum(ly + 10.5) + "\">" + EscapeXml(*entry.second) + "</text>";
    lx += 24 + TextWidth(*entry.second, 12) + 18;
  }
  o += "</g>\n";

  const double px = kChartMargin + label_w;
  o += "<g class=\"plot\" data-log-min=\"" + std::to_string(log_min) +
       "\" data-log-max=\"" + std::to_string(log_max) + "\" data-width=\"" +
       SvgNum(kPlotWidth) + "\" data-row-height=\"" + SvgNum(kRowHeight) +
       "\" transform=\"translate(" + SvgNum(px) + "," + SvgNum(plot_y) + ")\">\n";
  // Alternate rows shaded, grid lines at the ticks, a darker one at 1.
  for (size_t i = 1; i < spec.rows.size(); i += 2) {
    o += "<rect y=\"" + SvgNum(i * kRowHeight) + "\" width=\"" + SvgNum(kPlotWidth) +
         "\" height=\"" + SvgNum(kRowHeight) + "\" fill=\"#f6f8fa\"/>";
  }
  for (double tick : ticks) {
    const std::string x = SvgNum(x_of(tick));
    o += "<g class=\"xtick\" data-value=\"" + TickText(tick) + "\"><path d=\"M" + x +
         " 0V" + SvgNum(plot_h + 4) + "\" stroke=\"" +
         (tick == 1 ? "#57606a" : "#d8dee4") + "\" stroke-width=\"" +
         (tick == 1 ? "1.5" : "1") + "\"/><text class=\"xt\" x=\"" + x + "\" y=\"" +
         SvgNum(plot_h + 16) + "\">" + TickText(tick) + "</text></g>";
  }
  o += "\n<text class=\"ax\" x=\"" + SvgNum(kPlotWidth / 2) + "\" y=\"" +
       SvgNum(plot_h + 34) + "\">" + EscapeXml(spec.axis_label) + "</text>\n";
  for (size_t i = 0; i < spec.rows.size(); ++i) {
    const RatioRow& row = spec.rows[i];
    const double cy = (i + 0.5) * kRowHeight;
    const std::string colour = VerdictColour(row.verdict);
    o += "<g class=\"row\" id=\"row-" + std::to_string(i) + "\" data-ratio=\"" +
         std::to_string(row.ratio) + "\">";
    o += "<text class=\"rl\" x=\"-10\" y=\"" + SvgNum(cy) + "\">" + EscapeXml(labels[i]) +
         "</text>";
    o += "<path d=\"M" + SvgNum(x_of(row.low)) + " " + SvgNum(cy) + "H" +
         SvgNum(x_of(row.high)) + "M" + SvgNum(x_of(row.low)) + " " + SvgNum(cy - 4) +
         "v8M" + SvgNum(x_of(row.high)) + " " + SvgNum(cy - 4) + "v8\" stroke=\"" +
         colour + "\" stroke-width=\"2\" fill=\"none\"/>";
    o += "<circle cx=\"" + SvgNum(x_of(row.ratio)) + "\" cy=\"" + SvgNum(cy) +
         "\" r=\"4.5\" fill=\"" + colour + "\"/>";
    o += "<text class=\"rn\" x=\"" + SvgNum(kPlotWidth + 12) + "\" y=\"" + SvgNum(cy) +
         "\" style=\"fill:" + colour + "\">" + EscapeXml(row.note) + "</text></g>\n";
  }
  o += "</g>\n</svg>\n";
  return o;
}

}  // namespace ember::tools
