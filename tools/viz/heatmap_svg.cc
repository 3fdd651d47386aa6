// Attention heatmaps as SVG (see heatmap_svg.h). Sizes are in CSS pixels; text widths
// are estimated from display columns since no font metrics are at hand.
#include "tools/viz/heatmap_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tools/viz/svg_text.h"

namespace ember::tools {
namespace {

constexpr int kLevels = 64;  // colours per scale: cells of one level share one <path>
constexpr int kMargin = 16;
constexpr int kGapX = 28, kGapY = 24;
constexpr int kPanelTitle = 18;  // panel title line above the key labels
constexpr double kLabelFont = 11, kValueFont = 8.5;

// The scale, white to navy; linear in RGB between these stops.
struct Stop {
  float at;
  int r, g, b;
};
constexpr Stop kStops[] = {
    {0.00f, 247, 251, 255}, {0.15f, 214, 230, 244}, {0.35f, 150, 196, 226},
    {0.55f, 78, 146, 200},  {0.75f, 33, 102, 172},  {1.00f, 8, 40, 100},
};

int Level(float w) {
  if (!(w > 0.0f)) return 0;  // NaN too
  if (w >= 1.0f) return kLevels - 1;
  return static_cast<int>(std::lround(w * (kLevels - 1)));
}

std::string LevelColour(int level) {
  const float t = static_cast<float>(level) / (kLevels - 1);
  size_t i = 1;
  while (i + 1 < sizeof(kStops) / sizeof(kStops[0]) && kStops[i].at < t) ++i;
  const Stop& a = kStops[i - 1];
  const Stop& b = kStops[i];
  const float f = (t - a.at) / (b.at - a.at);
  const auto mix = [f](int x, int y) {
    return static_cast<int>(std::lround(x + (y - x) * f));
  };
  char buf[8];
  snprintf(buf, sizeof(buf), "#%02x%02x%02x", mix(a.r, b.r), mix(a.g, b.g),
           mix(a.b, b.b));
  return buf;
}

// A weight in two decimals as it fits a cell: "1", ".42", "0".
std::string ValueText(float w) {
  if (!(w >= 0.005f)) return "0";
  if (w >= 0.995f) return "1";
  char buf[8];
  snprintf(buf, sizeof(buf), ".%02d", static_cast<int>(std::lround(w * 100)));
  return buf;
}

struct Layout {
  size_t n = 0;
  int cell = 0;
  double label_font = kLabelFont;
  size_t label_every = 1;  // label every k-th token when cells are small
  double label_w = 0;      // room for the labels left of and above a matrix
  double panel_w = 0, panel_h = 0;
  double header_h = 0;
  double width = 0, height = 0;
  size_t columns = 1, rows = 0;
  bool values = false;
};

Layout MakeLayout(const HeatmapSpec& spec) {
  Layout l;
  l.n = spec.labels.size();
  l.cell = HeatmapCellSize(l.n);
  l.label_font = std::min(kLabelFont, std::max(6.0, l.cell - 1.0));
  l.label_every = static_cast<size_t>(std::ceil((l.label_font + 1) / l.cell));
  double widest = 0;
  for (const std::string& label : spec.labels) {
    widest = std::max(widest, TextWidth(label, l.label_font));
  }
  l.label_w = std::ceil(std::max(widest, 2 * l.label_font)) + 6;
  l.values = spec.values == HeatmapSpec::Values::kOn ||
             (spec.values == HeatmapSpec::Values::kAuto && l.cell >= kMinValueCell);
  const double matrix = static_cast<double>(l.n) * l.cell;
  l.panel_w = l.label_w + matrix;
  l.panel_h = kPanelTitle + l.label_w + matrix;
  l.columns = std::max<size_t>(1, std::min(spec.columns, spec.panels.size()));
  l.rows = (spec.panels.size() + l.columns - 1) / l.columns;
  // Title, notes, then the legend: a bar with ticks under it.
  l.header_h = kMargin + 22 + 17.0 * spec.notes.size() + 12 + 14 + 16 + 12;
  double text_w = TextWidth(spec.title, 16);
  for (const std::string& note : spec.notes)
    text_w = std::max(text_w, TextWidth(note, 12));
  const double grid_w = l.columns * l.panel_w + (l.columns - 1) * kGapX;
  l.width = std::ceil(2 * kMargin + std::max({grid_w, text_w, 600.0}));
  l.height = std::ceil(l.header_h + l.rows * l.panel_h + (l.rows - 1) * kGapY + kMargin);
  return l;
}

void Legend(bool causal, double y, std::string* out) {
  const double x = kMargin, bar_w = 240, bar_h = 12;
  std::string& o = *out;
  o += "<defs><linearGradient id=\"scale\">";
  for (int level = 0; level < kLevels; level += 9) {
    o += "<stop offset=\"" + SvgNum(100.0 * level / (kLevels - 1)) + "%\" stop-color=\"" +
         LevelColour(level) + "\"/>";
  }
  o += "<stop offset=\"100%\" stop-color=\"" + LevelColour(kLevels - 1) + "\"/>";
  o += "</linearGradient>";
  // The masked cells: light grey with thin diagonal lines.
  o += "<pattern id=\"masked\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
       "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#f1f1f1\"/>"
       "<path d=\"M0 0V6\" stroke=\"#cfcfcf\" stroke-width=\"1.5\"/></pattern></defs>\n";
  o += "<text x=\"" + SvgNum(x) + "\" y=\"" + SvgNum(y + 10) +
       "\">attention weight</text>\n";
  const double bx = x + 104;
  o += "<rect x=\"" + SvgNum(bx) + "\" y=\"" + SvgNum(y) + "\" width=\"" + SvgNum(bar_w) +
       "\" height=\"" + SvgNum(bar_h) +
       "\" fill=\"url(#scale)\" stroke=\"#888\" "
       "stroke-width=\".5\"/>\n<g class=\"tick\">";
  for (int i = 0; i <= 4; ++i) {
    const double tx = bx + bar_w * i / 4;
    o += "<path d=\"M" + SvgNum(tx) + " " + SvgNum(y + bar_h) + "v4\" stroke=\"#888\"/>";
    static const char* const kTicks[] = {"0", "0.25", "0.5", "0.75", "1"};
    o += "<text x=\"" + SvgNum(tx) + "\" y=\"" + SvgNum(y + bar_h + 14) + "\">" +
         kTicks[i] + "</text>";
  }
  o += "</g>\n";
  if (causal) {
    const double mx = bx + bar_w + 28;
    o += "<rect x=\"" + SvgNum(mx) + "\" y=\"" + SvgNum(y) + "\" width=\"24\" height=\"" +
         SvgNum(bar_h) + "\" fill=\"url(#masked)\" stroke=\"#888\" stroke-width=\".5\"/>";
    o += "<text x=\"" + SvgNum(mx + 30) + "\" y=\"" + SvgNum(y + 10) +
         "\">masked (a query never sees later keys)</text>\n";
  }
}

void Panel(const HeatmapSpec& spec, const Layout& l, size_t index, double x, double y,
           std::string* out) {
  std::string& o = *out;
  const HeatmapPanel& panel = spec.panels[index];
  const size_t n = l.n;
  const int c = l.cell;
  const double mx = x + l.label_w, my = y + kPanelTitle + l.label_w;  // matrix origin
  o += "<g id=\"panel-" + std::to_string(index) + "\" data-cell=\"" + std::to_string(c) +
       "\" transform=\"translate(" + SvgNum(mx) + "," + SvgNum(my) + ")\">\n";
  o += "<text class=\"pt\" x=\"0\" y=\"" + SvgNum(-l.label_w - 5) + "\">" +
       EscapeXml(panel.title) + "</text>\n";
  const double matrix = static_cast<double>(n) * c;
  o += "<rect width=\"" + SvgNum(matrix) + "\" height=\"" + SvgNum(matrix) +
       "\" fill=\"#fff\"/>";
  if (spec.causal && n > 1) {
    // The masked cells (key > query) as one staircase.
    std::string d = "M" + SvgNum(c) + " 0H" + SvgNum(matrix) + "V" + SvgNum(matrix - c);
    for (size_t j = n - 1; j >= 1; --j) {
      d += "H" + SvgNum(static_cast<double>(j) * c) + "V" +
           SvgNum(static_cast<double>(j - 1) * c);
    }
    o += "<path d=\"" + d + "Z\" fill=\"url(#masked)\"/>";
  }
  o += "\n";
  // Cells grouped by colour level; a 1 px white seam between cells large enough for it.
  const int side = c >= 8 ? c - 1 : c;
  std::vector<std::string> paths(kLevels);
  for (size_t q = 0; q < n; ++q) {
    const size_t keys = spec.causal ? q + 1 : n;
    for (size_t k = 0; k < keys; ++k) {
      const int level = Level(panel.weights[q * n + k]);
      paths[level] += "M" + std::to_string(k * c) + " " + std::to_string(q * c) + "h" +
                      std::to_string(side) + "v" + std::to_string(side) + "h-" +
                      std::to_string(side) + "z";
    }
  }
  for (int level = 0; level < kLevels; ++level) {
    if (paths[level].empty()) continue;
    o += "<path fill=\"" + LevelColour(level) + "\" d=\"" + paths[level] + "\"/>\n";
  }
  o += "<rect width=\"" + SvgNum(matrix) + "\" height=\"" + SvgNum(matrix) +
       "\" fill=\"none\" stroke=\"#999\" stroke-width=\".6\"/>\n";
  if (l.values) {
    o += "<g class=\"v\">";
    const double half = (side) / 2.0;
    for (size_t q = 0; q < n; ++q) {
      const size_t keys = spec.causal ? q + 1 : n;
      o += "<text y=\"" + SvgNum(q * c + half) + "\">";
      for (size_t k = 0; k < keys; ++k) {
        const float w = panel.weights[q * n + k];
        const bool dark = Level(w) > kLevels / 2;
        o += "<tspan x=\"" + SvgNum(k * c + half) + "\"" + (dark ? " class=\"w\"" : "") +
             ">" + ValueText(w) + "</tspan>";
      }
      o += "</text>\n";
    }
    o += "</g>\n";
  }
  // Token labels: queries right-aligned on the left; keys on top, read upwards (in the
  // rotated frame, (x, y) lands at (y, -x)).
  std::string queries, keys;
  for (size_t i = 0; i < n; i += l.label_every) {
    const std::string label = EscapeXml(spec.labels[i]);
    const std::string mid = SvgNum((i + 0.5) * c);
    queries += "<text x=\"-4\" y=\"" + mid + "\">" + label + "</text>";
    keys += "<text x=\"4\" y=\"" + mid + "\">" + label + "</text>";
  }
  o += "<g class=\"l\" style=\"font-size:" + SvgNum(l.label_font) +
       "px\"><g class=\"q\">" + queries + "</g>\n<g transform=\"rotate(-90)\">" + keys +
       "</g></g></g>\n";
}

}  // namespace

int HeatmapCellSize(size_t n) {
  if (n == 0) return 30;
  const int cell = static_cast<int>(336 / n);
  return std::max(3, std::min(30, cell));
}

std::string HeatmapColour(float weight) { return LevelColour(Level(weight)); }

std::string RenderHeatmapSvg(const HeatmapSpec& spec) {
  const Layout l = MakeLayout(spec);
  std::string o;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + SvgNum(l.width) +
       "\" height=\"" + SvgNum(l.height) + "\" viewBox=\"0 0 " + SvgNum(l.width) + " " +
       SvgNum(l.height) + "\">\n";
  o += "<title>" + EscapeXml(spec.title) + "</title>\n";
  o += std::string("<style>text{font-family:") + kSvgFontFamily +
       ";font-size:12px;fill:#222}"
       ".h{font-size:16px;font-weight:bold}.pt{font-size:12px;font-weight:bold}"
       ".tick text{font-size:10px;text-anchor:middle;fill:#444}"
       ".l text{dominant-baseline:central;fill:#333}.l .q{text-anchor:end}"
       ".v text{font-size:" +
       SvgNum(kValueFont) +
       "px;text-anchor:middle;dominant-baseline:central}.v .w{fill:#fff}</style>\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  double y = kMargin + 16;
  o += "<text class=\"h\" x=\"" + SvgNum(kMargin) + "\" y=\"" + SvgNum(y) + "\">" +
       EscapeXml(spec.title) + "</text>\n";
  y += 6;
  for (const std::string& note : spec.notes) {
    y += 17;
    o += "<text x=\"" + SvgNum(kMargin) + "\" y=\"" + SvgNum(y) + "\">" +
         EscapeXml(note) + "</text>\n";
  }
  Legend(spec.causal, y + 12, &o);
  for (size_t i = 0; i < spec.panels.size(); ++i) {
    const size_t row = i / l.columns, column = i % l.columns;
    Panel(spec, l, i, kMargin + column * (l.panel_w + kGapX),
          l.header_h + row * (l.panel_h + kGapY), &o);
  }
  o += "</svg>\n";
  return o;
}

}  // namespace ember::tools
