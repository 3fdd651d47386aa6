// Attention heatmaps as one self-contained SVG (no scripts, no external fonts or files):
// a grid of panels, one per (layer, head), queries down the side and keys along the top,
// a colour scale, cell values when the cells are large enough to read, and the masked
// upper triangle of a causal model drawn hatched and empty.
#ifndef EMBER_TOOLS_VIZ_HEATMAP_SVG_H_
#define EMBER_TOOLS_VIZ_HEATMAP_SVG_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tools/viz/svg_text.h"  // EscapeXml

namespace ember::tools {

struct HeatmapPanel {
  std::string title;               // "layer 2 · head 5"
  const float* weights = nullptr;  // (n, n) row-major: row = query, column = key
};

struct HeatmapSpec {
  std::string title;                // first line, bold
  std::vector<std::string> notes;   // further lines under it
  std::vector<std::string> labels;  // the n tokens (UTF-8)
  bool causal = true;               // keys after the query are masked
  size_t columns = 4;               // panels per grid row
  enum class Values { kAuto, kOn, kOff } values = Values::kAuto;
  std::vector<HeatmapPanel> panels;  // row by row through the grid
};

// Cell edge in pixels for n tokens (30 for a few tokens down to 3 for hundreds); values
// are printed in the cells (kAuto) when it is at least kMinValueCell.
inline constexpr int kMinValueCell = 20;
int HeatmapCellSize(size_t n);

// The SVG document. Every panel is a <g id="panel-I" data-cell="C"
// transform="translate(X,Y)"> whose origin is the top-left corner of its matrix.
std::string RenderHeatmapSvg(const HeatmapSpec& spec);

// The heatmap colour (#rrggbb) of a weight in [0, 1]: white through blue to navy.
std::string HeatmapColour(float weight);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_VIZ_HEATMAP_SVG_H_
