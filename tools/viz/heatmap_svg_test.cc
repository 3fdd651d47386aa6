// Heatmap SVG: XML escaping, the colour scale, and the document's structure (panels,
// cells, the masked triangle, values, labels, layout inside the canvas). Rendering in a
// browser: tests/attn_render_test.py.
#include "tools/viz/heatmap_svg.h"

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ember::tools {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos;
       pos = text.find(what, pos + what.size())) {
    ++n;
  }
  return n;
}

TEST(HeatmapSvgTest, EscapeXml) {
  EXPECT_EQ(EscapeXml("a<b>&\"'c"), "a&lt;b&gt;&amp;&quot;&apos;c");
  EXPECT_EQ(EscapeXml("中文 café\t\n"), "中文 café\t\n");
  // Bytes that are not UTF-8 and characters XML 1.0 forbids become U+FFFD.
  EXPECT_EQ(EscapeXml("x\xFFy"), "x\uFFFDy");
  EXPECT_EQ(EscapeXml(std::string("\x01\x00z", 3)), "\uFFFD\uFFFDz");
  EXPECT_EQ(EscapeXml("\xEF\xBF\xBE"), "\uFFFD");    // U+FFFE
  EXPECT_EQ(EscapeXml("\xE4\xB8"), "\uFFFD\uFFFD");  // a cut character
}

double Luminance(const std::string& colour) {
  unsigned r, g, b;
  EXPECT_EQ(sscanf(colour.c_str(), "#%02x%02x%02x", &r, &g, &b), 3) << colour;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

TEST(HeatmapSvgTest, ColourScaleDarkensFromWhiteToNavy) {
  EXPECT_EQ(HeatmapColour(0.0f), "#f7fbff");
  EXPECT_EQ(HeatmapColour(1.0f), "#082864");
  EXPECT_EQ(HeatmapColour(-1.0f), HeatmapColour(0.0f));
  EXPECT_EQ(HeatmapColour(7.0f), HeatmapColour(1.0f));
  double last = 1e9;
  for (int i = 0; i <= 63; ++i) {
    const double y = Luminance(HeatmapColour(i / 63.0f));
    EXPECT_LT(y, last) << i;
    last = y;
  }
}

// Two panels over three tokens with known weights.
struct Fixture {
  std::vector<float> a = {1, 0, 0, .4249f, .5751f, 0, .001f, .2f, .799f};
  std::vector<float> b = {.2f, .3f, .5f, .3f, .3f, .4f, 1, 0, 0};
  HeatmapSpec spec;
  Fixture() {
    spec.title = "Attention <model> & \"heads\"";
    spec.notes = {"note 1", "prompt: \u201C中\u201D"};
    spec.labels = {"<s>", "中1/3", "a&b"};
    spec.columns = 2;
    spec.panels = {{"layer 0 \u00B7 head 0", a.data()},
                   {"layer 0 \u00B7 head 1", b.data()}};
  }
};

TEST(HeatmapSvgTest, CausalPanelsCellsValuesAndLabels) {
  Fixture f;
  const std::string svg = RenderHeatmapSvg(f.spec);
  EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_EQ(Count(svg, "<script"), 0u);
  EXPECT_EQ(Count(svg, "href"), 0u);
  EXPECT_EQ(Count(svg, "<g id=\"panel-"), 2u);
  // Title escaped, in <title> and on the canvas; labels escaped on both axes.
  EXPECT_EQ(Count(svg, "Attention &lt;model&gt; &amp; &quot;heads&quot;"), 2u);
  EXPECT_EQ(Count(svg, ">&lt;s&gt;</text>"), 4u);
  EXPECT_EQ(Count(svg, ">a&amp;b</text>"), 4u);
  EXPECT_EQ(Count(svg, ">中1/3</text>"), 4u);
  EXPECT_EQ(Count(svg, "<s>"), 0u);
  EXPECT_EQ(Count(svg, "layer 0 \u00B7 head 1"), 1u);
  // The masked triangle: the legend swatch and one staircase per panel.
  EXPECT_EQ(Count(svg, "fill=\"url(#masked)\""), 3u);
  // Six visible cells per panel (the lower triangle with the diagonal): 12 in all.
  EXPECT_EQ(Count(svg, "h29v29h-29z"), 12u);
  // Values, two decimals, dark cells in white.
  EXPECT_EQ(Count(svg, "<tspan"), 12u);
  EXPECT_NE(svg.find("class=\"w\">1</tspan>"), std::string::npos);
  EXPECT_NE(svg.find(">.42</tspan>"), std::string::npos);
  EXPECT_NE(svg.find(">.58</tspan>"), std::string::npos);
  EXPECT_NE(svg.find(">0</tspan>"), std::string::npos);
  EXPECT_NE(svg.find(">.80</tspan>"), std::string::npos);
  // The weight-1 cell at (0, 0) of panel 0 has the darkest colour.
  EXPECT_NE(svg.find("<path fill=\"#082864\" d=\"M0 0h29v29h-29z"), std::string::npos);
}

TEST(HeatmapSvgTest, BidirectionalHasNoMaskAndEveryCell) {
  Fixture f;
  f.spec.causal = false;
  const std::string svg = RenderHeatmapSvg(f.spec);
  EXPECT_EQ(Count(svg, "url(#masked)"), 0u);
  EXPECT_EQ(Count(svg, "h29v29h-29z"), 18u);
  EXPECT_EQ(Count(svg, "<tspan"), 18u);
}

TEST(HeatmapSvgTest, ValuesOnlyWhenCellsAreLargeEnoughOrAsked) {
  Fixture f;
  f.spec.values = HeatmapSpec::Values::kOff;
  EXPECT_EQ(Count(RenderHeatmapSvg(f.spec), "<tspan"), 0u);
  // 40 tokens: cells too small for text unless asked.
  const size_t n = 40;
  std::vector<float> w(n * n, 1.0f / n);
  HeatmapSpec big;
  big.labels.assign(n, "tok");
  big.panels = {{"p", w.data()}};
  EXPECT_LT(HeatmapCellSize(n), kMinValueCell);
  EXPECT_EQ(Count(RenderHeatmapSvg(big), "<tspan"), 0u);
  big.values = HeatmapSpec::Values::kOn;
  EXPECT_EQ(Count(RenderHeatmapSvg(big), "<tspan"), n * (n + 1) / 2);
  EXPECT_EQ(HeatmapCellSize(1), 30);
  EXPECT_EQ(HeatmapCellSize(1000), 3);
}

// Every panel's matrix lies inside the canvas and panels do not overlap.
TEST(HeatmapSvgTest, PanelsFitTheCanvas) {
  for (size_t n : {1, 3, 12, 17, 64, 300}) {
    for (size_t panels : {1, 3, 8}) {
      if (n * n * panels > 200000) continue;  // keeps the test fast
      std::vector<float> w(n * n, 0.5f);
      HeatmapSpec spec;
      spec.title = "t";
      spec.labels.assign(n, "label\u4E2D\u6587");
      spec.columns = 4;
      for (size_t i = 0; i < panels; ++i) spec.panels.push_back({"p", w.data()});
      const std::string svg = RenderHeatmapSvg(spec);
      std::smatch m;
      ASSERT_TRUE(
          std::regex_search(svg, m, std::regex("width=\"(\\d+)\" height=\"(\\d+)\"")));
      const double width = std::stod(m[1]), height = std::stod(m[2]);
      const std::regex panel(
          "data-cell=\"(\\d+)\" transform=\"translate\\(([0-9.]+),([0-9.]+)\\)\"");
      std::vector<std::pair<double, double>> origins;
      double size = 0;
      for (auto it = std::sregex_iterator(svg.begin(), svg.end(), panel);
           it != std::sregex_iterator(); ++it) {
        size = std::stod((*it)[1]) * n;
        const double x = std::stod((*it)[2]), y = std::stod((*it)[3]);
        EXPECT_LE(x + size, width) << n << " " << panels;
        EXPECT_LE(y + size, height) << n << " " << panels;
        for (const auto& [ox, oy] : origins) {
          EXPECT_TRUE(std::abs(ox - x) >= size || std::abs(oy - y) >= size)
              << n << " " << panels;
        }
        origins.push_back({x, y});
      }
      EXPECT_EQ(origins.size(), panels);
    }
  }
}

}  // namespace
}  // namespace ember::tools
