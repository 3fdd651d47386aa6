// What the bench charts share (see chart_common.h).
#include "tools/viz/chart_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tools/viz/svg_text.h"

namespace ember::tools {
namespace {

constexpr double kTitleFont = 16, kNoteFont = 12, kNoteLine = 17;

}  // namespace

std::string ChartColour(size_t series) {
  static const char* const kColours[] = {"#0072b2", "#e69f00", "#009e73", "#cc79a7",
                                         "#56b4e9", "#d55e00", "#000000"};
  return kColours[series % (sizeof(kColours) / sizeof(kColours[0]))];
}

std::vector<double> LinearTicks(double max, int target) {
  if (!(max > 0) || !std::isfinite(max)) return {0, 1};
  const double raw = max / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power * 10;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  }
  std::vector<double> ticks;
  for (int i = 0;; ++i) {
    // Multiples of the step, so 0.1 + 0.2 rounding never shows as 0.30000000000000004.
    ticks.push_back(i * step);
    if (i * step >= max * (1 - 1e-12)) break;
  }
  return ticks;
}

std::string CompactNumber(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 1e6) {
    snprintf(buf, sizeof(buf), a >= 1e8 ? "%.0fM" : "%.1fM", v / 1e6);
  } else if (a >= 1e4) {
    snprintf(buf, sizeof(buf), a >= 1e5 ? "%.0fk" : "%.1fk", v / 1e3);
  } else if (a >= 100) {
    snprintf(buf, sizeof(buf), "%.0f", v);
  } else if (a >= 10) {
    snprintf(buf, sizeof(buf), "%.1f", v);
  } else if (a >= 1 || a == 0) {
    snprintf(buf, sizeof(buf), "%.2f", v);
  } else {
    snprintf(buf, sizeof(buf), "%.2g", v);
  }
  return buf;
}

std::string TickNumber(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 1e6) {
    snprintf(buf, sizeof(buf), "%gM", v / 1e6);
  } else if (a >= 1e4) {
    snprintf(buf, sizeof(buf), "%gk", v / 1e3);
  } else {
    snprintf(buf, sizeof(buf), "%g", a < 1e-12 ? 0.0 : v);
  }
  return buf;
}

double ChartHeaderHeight(size_t num_notes) {
  return kChartMargin + kTitleFont + 6 + kNoteLine * num_notes;
}

double ChartHeaderWidth(const std::string& title, const std::vector<std::string>& notes) {
  double width = TextWidth(title, kTitleFont);
  for (const std::string& note : notes)
    width = std::max(width, TextWidth(note, kNoteFont));
  return width;
}

double OpenChart(double width, double height, const std::string& title,
                 const std::vector<std::string>& notes, const std::string& extra_style,
                 std::string* out) {
  std::string& o = *out;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + SvgNum(width) +
       "\" height=\"" + SvgNum(height) + "\" viewBox=\"0 0 " + SvgNum(width) + " " +
       SvgNum(height) + "\">\n";
  o += "<title>" + EscapeXml(title) + "</title>\n";
  o += std::string("<style>text{font-family:") + kSvgFontFamily +
       ";font-size:12px;fill:#222}.h{font-size:16px;font-weight:bold}" + extra_style +
       "</style>\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  double y = kChartMargin + kTitleFont;
  o += "<text class=\"h\" x=\"" + SvgNum(kChartMargin) + "\" y=\"" + SvgNum(y) + "\">" +
       EscapeXml(title) + "</text>\n";
  y += 6;
  for (const std::string& note : notes) {
    y += kNoteLine;
    o += "<text x=\"" + SvgNum(kChartMargin) + "\" y=\"" + SvgNum(y - 4) + "\">" +
         EscapeXml(note) + "</text>\n";
  }
  return y;
}

}  // namespace ember::tools
