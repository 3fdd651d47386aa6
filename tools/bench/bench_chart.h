// The bench chart and table: tokens/s per test (a panel each), grouped by model file, a
// bar per series: each combination of the configuration fields that vary among the
// results (the thread count; also the backend, KV type, depth, ISA tier, build ... when
// they vary), with the slowest and fastest repetition as a whisker and, for decode, the
// roofline. The title names the CPU, the notes the build, kernels and date when they are
// the same for every result.
#ifndef EMBER_TOOLS_BENCH_BENCH_CHART_H_
#define EMBER_TOOLS_BENCH_BENCH_CHART_H_

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "tools/bench/bench_records.h"
#include "tools/viz/bar_chart.h"

namespace ember::tools {

// Results arranged as the chart and the table show them: a test per panel (column
// block), a model per group (row), a series per combination of varying configuration
// fields; results of one cell (repeated runs) pooled.
struct BenchGrid {
  struct Cell {
    size_t test, group, series;  // indexes into the lists below
    BenchSpeed speed;            // pooled
    double roofline;             // decode's roofline in tokens/s (mean); negative: none
    int results;                 // how many were pooled
  };
  std::string title;
  std::vector<std::string> notes;
  std::vector<std::string> tests, groups, series;  // groups: "file\ntype"
  std::vector<Cell> cells;                         // in the order results came
  std::set<size_t> repetitions;                    // the samples' counts seen
};
BenchGrid MakeBenchGrid(const std::vector<BenchRecord>& records);

BarChartSpec BenchChartSpec(const std::vector<BenchRecord>& records);
std::string RenderBenchChart(const std::vector<BenchRecord>& records);

// The same as a markdown table: a row per model, a column per test and series, each
// cell the median tokens/s (decode: and its share of the roofline), under the chart's
// title and notes. How docs/benchmarks.md's tables are made.
void WriteBenchTable(const std::vector<BenchRecord>& records, FILE* out);

// Decode's roofline in tokens/s: the file read's bandwidth (else the buffer probe's)
// over the bytes a token reads (weights and KV cache); negative when the record lacks
// them or is not a decode test.
double RooflineTokensPerSecond(const BenchJson& record);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_BENCH_CHART_H_
