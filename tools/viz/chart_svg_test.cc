// The bench charts' SVG: axis ticks and number formats; a bar chart's bars, whiskers and
// reference marks where the values put them on the drawn axis, its legend and escaping;
// a ratio chart's rows on the logarithmic axis. Rendering in a browser:
// tests/bench_report_test.py.
#include <cmath>
#include <cstddef>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/viz/bar_chart.h"
#include "tools/viz/chart_common.h"
#include "tools/viz/ratio_chart.h"
#include "tools/viz/svg_text.h"

namespace ember::tools {
namespace {

// How many times `pattern` (a regular expression) matches in `svg`.
ptrdiff_t Matches(const std::string& svg, const std::string& pattern) {
  const std::regex re(pattern);
  return std::distance(std::sregex_iterator(svg.begin(), svg.end(), re),
                       std::sregex_iterator());
}

TEST(ChartSvgTest, TicksAndNumbers) {
  EXPECT_EQ(LinearTicks(95), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(LinearTicks(100), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(LinearTicks(1.1), (std::vector<double>{0, 0.25, 0.5, 0.75, 1, 1.25}));
  EXPECT_EQ(LinearTicks(0), (std::vector<double>{0, 1}));
  for (double max : {0.003, 7.0, 66.8, 1458.0, 5.3e5, 2.2e6}) {
    const std::vector<double> t = LinearTicks(max);
    EXPECT_GE(t.back(), max);
    EXPECT_LT(t.back(), max * 2.6);  // steps of 1, 2, 2.5, 5: never far above
    EXPECT_GE(t.size(), 3u);
    EXPECT_LE(t.size(), 11u);
  }
  EXPECT_EQ(TickNumber(0), "0");
  EXPECT_EQ(TickNumber(0.25), "0.25");
  EXPECT_EQ(TickNumber(1500), "1500");
  EXPECT_EQ(TickNumber(250000), "250k");
  EXPECT_EQ(TickNumber(1.2e6), "1.2M");
  EXPECT_EQ(CompactNumber(1458.3), "1458");
  EXPECT_EQ(CompactNumber(66.84), "66.8");
  EXPECT_EQ(CompactNumber(5.123), "5.12");
  EXPECT_EQ(CompactNumber(14567), "14.6k");
  EXPECT_EQ(CompactNumber(0.034), "0.034");
  EXPECT_EQ(SvgNum(12.0), "12");
  EXPECT_EQ(SvgNum(-0.01), "0");
  EXPECT_EQ(CutToColumns("stories110M-q8.ember", 10), "stories11…");
  EXPECT_EQ(CutToColumns("中文中文中文", 7), "中文中…");
}

BarChartSpec TwoPanels() {
  BarChartSpec spec;
  spec.title = "ember bench on <CPU> & co";
  spec.notes = {"ember 0.2.0 (abc1234)"};
  spec.value_label = "tokens/s";
  spec.series = {"1 thread", "2 threads"};
  spec.whisker_legend = "whisker: slowest and fastest";
  spec.reference_legend = "roofline";
  BarChartPanel pp{"pp128 (prefill)", {"a.ember\nllama 15M f32", "b.ember"}, {}};
  pp.bars = {{0, 0, 500, 490, 510, -1},
             {0, 1, 945, 900, 950, -1},
             {1, 0, 1458, 1400, 1500, -1},
             {1, 1, 2836, 2800, 2900, -1}};
  BarChartPanel tg{"tg64 (decode)", {"a.ember\nllama 15M f32", "b.ember"}, {}};
  tg.bars = {{0, 0, 66.8, 65, 68, 73.4}, {1, 1, 288.9, 280, 290, 385.2}};
  spec.panels = {pp, tg};
  return spec;
}

TEST(ChartSvgTest, BarsSitWhereTheirValuesAreOnTheAxis) {
  const BarChartSpec spec = TwoPanels();
  const std::string svg = RenderBarChartSvg(spec);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(Matches(svg, "<svg "), 1);
  EXPECT_EQ(Matches(svg, "</svg>"), 1);
  EXPECT_EQ(Matches(svg, "<g class=\"panel\""), 2);
  EXPECT_EQ(Matches(svg, "<rect class=\"bar\""), 6);
  EXPECT_EQ(Matches(svg, "<path class=\"wh\""), 7);   // 6 bars and the legend's
  EXPECT_EQ(Matches(svg, "<path class=\"ref\""), 3);  // 2 bars and the legend's
  EXPECT_NE(svg.find("ember bench on &lt;CPU&gt; &amp; co"), std::string::npos);
  EXPECT_NE(svg.find(">llama 15M f32</tspan>"), std::string::npos);  // a second line
  EXPECT_EQ(Matches(svg, "script"), 0);
  EXPECT_EQ(Matches(svg, "href"), 0);
  // In each panel a value v is drawn at y = -v * scale, and the ticks agree: the tick
  // for value t sits at y = -t * scale too.
  const std::regex panel_re(
      "<g class=\"panel\" id=\"panel-(\\d)\" data-scale=\"([0-9.]+)\"");
  const std::regex bar_re(
      "<rect class=\"bar\" data-series=\"(\\d)\" data-value=\"([0-9.]+)\" x=\"[0-9.]+\" "
      "y=\"(-?[0-9.]+)\" width=\"26\" height=\"([0-9.]+)\" fill=\"(#[0-9a-f]{6})\"");
  const std::regex tick_re(
      "<g class=\"ytick\" data-value=\"([0-9.e+]+)\"><path d=\"M0 "
      "(-?[0-9.]+)h");
  int panels = 0, bars = 0;
  // Each panel's text runs from its <g> to the next panel's (or the end).
  for (size_t at = svg.find("<g class=\"panel\""); at != std::string::npos; ++panels) {
    const size_t next = svg.find("<g class=\"panel\"", at + 1);
    const std::string body = svg.substr(at, next == std::string::npos ? next : next - at);
    at = next;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(body, m, panel_re));
    const double scale = std::stod(m[2]);
    for (auto t = std::sregex_iterator(body.begin(), body.end(), tick_re);
         t != std::sregex_iterator(); ++t) {
      EXPECT_NEAR(std::stod((*t)[2]), -std::stod((*t)[1]) * scale, 0.051);
    }
    for (auto b = std::sregex_iterator(body.begin(), body.end(), bar_re);
         b != std::sregex_iterator(); ++b, ++bars) {
      const double value = std::stod((*b)[2]);
      EXPECT_NEAR(std::stod((*b)[3]), -value * scale, 0.051);
      EXPECT_NEAR(std::stod((*b)[4]), value * scale, 0.051);
      EXPECT_EQ((*b)[5].str(), ChartColour(std::stoul((*b)[1])));
      // The top of the plot (200 px) is above every bar and its whisker and mark.
      EXPECT_LE(value * scale, 200);
    }
  }
  EXPECT_EQ(panels, 2);
  EXPECT_EQ(bars, 6);
  // The legend names both series in their colours.
  for (size_t s = 0; s < 2; ++s) {
    EXPECT_TRUE(std::regex_search(
        svg, std::regex("width=\"12\" height=\"12\" fill=\"" + ChartColour(s) +
                        "\"/><text x=\"[0-9.]+\" y=\"[0-9.]+\">" + spec.series[s] +
                        "</text>")))
        << s;
  }
}

TEST(ChartSvgTest, RatioRowsSitOnTheLogAxis) {
  RatioChartSpec spec;
  spec.title = "tokens/s, NEW ÷ OLD";
  spec.axis_label = "NEW / OLD";
  spec.higher_legend = "faster";
  spec.lower_legend = "slower";
  spec.none_legend = "within noise";
  spec.rows = {{"a · tg64", 1.25, 1.2, 1.3, RatioRow::Verdict::kHigher, "+25.0 %"},
               {"a · pp128", 0.9, 0.88, 0.92, RatioRow::Verdict::kLower, "-10.0 %"},
               {"b · tg64", 1.0, 0.98, 1.02, RatioRow::Verdict::kNone, "0.0 %"}};
  const std::string svg = RenderRatioChartSvg(spec);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m,
                                std::regex("data-log-min=\"(-?[0-9.]+)\" data-log-max=\""
                                           "(-?[0-9.]+)\" data-width=\"([0-9.]+)\"")));
  const double lo = std::stod(m[1]), hi = std::stod(m[2]), width = std::stod(m[3]);
  EXPECT_LT(lo, std::log(0.88));
  EXPECT_GT(hi, std::log(1.3));
  const std::regex circle_re(
      "<circle cx=\"([0-9.]+)\" cy=\"([0-9.]+)\" r=\"4.5\" "
      "fill=\"(#[0-9a-f]{6})\"/>");
  size_t row = 0;
  for (auto c = std::sregex_iterator(svg.begin(), svg.end(), circle_re);
       c != std::sregex_iterator(); ++c, ++row) {
    ASSERT_LT(row, spec.rows.size());
    const double want = (std::log(spec.rows[row].ratio) - lo) / (hi - lo) * width;
    EXPECT_NEAR(std::stod((*c)[1]), want, 0.051) << row;
    EXPECT_NEAR(std::stod((*c)[2]), (row + 0.5) * 22, 0.051) << row;
    EXPECT_EQ((*c)[3].str(), VerdictColour(spec.rows[row].verdict));
  }
  EXPECT_EQ(row, 3u);
  // A tick at 1, drawn darker.
  EXPECT_NE(svg.find("<g class=\"xtick\" data-value=\"1\"><path d=\"M"),
            std::string::npos);
  EXPECT_NE(svg.find("stroke=\"#57606a\""), std::string::npos);
  EXPECT_NE(VerdictColour(RatioRow::Verdict::kHigher),
            VerdictColour(RatioRow::Verdict::kLower));
}

}  // namespace
}  // namespace ember::tools
