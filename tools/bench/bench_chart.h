// The bench chart: tokens/s per test (a panel each), grouped by model file, a bar per
// series: each combination of the configuration fields that vary among the results (the
// thread count; also the backend, KV type, depth, ISA tier, build ... when they vary),
// with the slowest and fastest repetition as a whisker and, for decode, the roofline.
// The title names the CPU, the notes the build, kernels and date when they are the same
// for every result.
#ifndef EMBER_TOOLS_BENCH_BENCH_CHART_H_
#define EMBER_TOOLS_BENCH_BENCH_CHART_H_

#include <string>
#include <vector>

#include "tools/bench/bench_records.h"
#include "tools/viz/bar_chart.h"

namespace ember::tools {

BarChartSpec BenchChartSpec(const std::vector<BenchRecord>& records);
std::string RenderBenchChart(const std::vector<BenchRecord>& records);

// Decode's roofline in tokens/s: the file read's bandwidth (else the buffer probe's)
// over the bytes a token reads (weights and KV cache); negative when the record lacks
// them or is not a decode test.
double RooflineTokensPerSecond(const BenchJson& record);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_BENCH_CHART_H_
