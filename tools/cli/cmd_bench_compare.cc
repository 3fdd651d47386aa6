// `ember bench-compare OLD NEW`: two bench files' results paired and compared, and
// `ember bench-chart FILE...`: bench files drawn as the chart `ember bench -o svg` draws,
// or tabulated (tools/bench/bench_compare.h, bench_chart.h).
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/model/atomic_file.h"
#include "tools/bench/bench_chart.h"
#include "tools/bench/bench_compare.h"
#include "tools/bench/bench_records.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"

namespace ember::tools {
namespace {

// "a,b" and repeated options, as one list.
std::vector<std::string> SplitAll(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& value : values) {
    for (size_t begin = 0; begin <= value.size();) {
      size_t end = value.find(',', begin);
      if (end == std::string::npos) end = value.size();
      if (end > begin) out.push_back(value.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  return out;
}

// Writes `text` to `path` ("-": stdout) whole or not at all.
Status WriteOutput(const std::string& path, const std::string& text) {
  if (path == "-") {
    fputs(text.c_str(), stdout);
    fflush(stdout);
    return Status::Ok();
  }
  return WriteFileAtomic(path, text.data(), text.size());
}

Status RunCompare(const ArgParser& args) {
  const std::vector<std::string>& files = args.Positional();
  if (files.size() != 2) {
    return InvalidArgument("want two files, OLD and NEW (got %zu)", files.size());
  }
  if (args.Has("--chart")) {
    EMBER_RETURN_IF_ERROR(CheckNotAnInput(args.Get("--chart"), files, "input"));
  }
  CompareFormat format;
  EMBER_RETURN_IF_ERROR(ParseCompareFormat(args.Get("-o", "md"), &format));
  CompareOptions options;
  options.ignore = SplitAll(args.GetAll("--ignore"));
  EMBER_RETURN_IF_ERROR(args.GetFloat("--alpha", 0.05, 1e-6, 0.5, &options.alpha));
  double min_change_pct;
  EMBER_RETURN_IF_ERROR(args.GetFloat("--min-change", 0, 0, 1000, &min_change_pct));
  options.min_change = min_change_pct / 100;
  std::vector<BenchRecord> old_records, new_records;
  EMBER_RETURN_IF_ERROR(ReadBenchRecords(files[0], &old_records));
  EMBER_RETURN_IF_ERROR(ReadBenchRecords(files[1], &new_records));
  Comparison comparison;
  EMBER_RETURN_IF_ERROR(CompareBenchRecords(old_records, new_records, files[0], files[1],
                                            options, &comparison));
  WriteComparison(comparison, format, stdout);
  if (args.Has("--chart")) {
    EMBER_RETURN_IF_ERROR(WriteFileAtomic(args.Get("--chart"), [&](FILE* f) {
      WriteComparison(comparison, CompareFormat::kSvg, f);
      return Status::Ok();
    }));
  }
  return Status::Ok();
}

Status RunChart(const ArgParser& args) {
  const std::vector<std::string>& files = args.Positional();
  if (files.empty()) return InvalidArgument("no bench file to draw");
  // --format, else the output's extension, else svg.
  const std::string output = args.Get("-o", "-");
  EMBER_RETURN_IF_ERROR(CheckNotAnInput(output, files, "input"));
  const bool md_name =
      output.size() > 3 && output.compare(output.size() - 3, 3, ".md") == 0;
  const std::string format = args.Get("--format", md_name ? "md" : "svg");
  if (format != "svg" && format != "md") {
    return InvalidArgument("--format %s: not svg or md", format.c_str());
  }
  std::vector<BenchRecord> records;
  for (const std::string& file : files) {
    std::vector<BenchRecord> more;
    EMBER_RETURN_IF_ERROR(ReadBenchRecords(file, &more));
    records.insert(records.end(), more.begin(), more.end());
  }
  if (format == "svg") return WriteOutput(output, RenderBenchChart(records));
  if (output == "-") {
    WriteBenchTable(records, stdout);
    return Status::Ok();
  }
  return WriteFileAtomic(output, [&](FILE* f) {
    WriteBenchTable(records, f);
    return Status::Ok();
  });
}

}  // namespace

int BenchCompareCommand(int argc, char** argv) {
  ArgParser parser({
      {{"-o", "--output"}, true, "md (default), csv, json or svg (the ratio chart)"},
      {{"--chart"}, true, "also draw the ratio chart into this SVG file"},
      {{"--ignore"}, true, "fields not to pair on, comma-separated (e.g. n_batch)"},
      {{"--alpha"}, true, "significance level of a marked change (default 0.05)"},
      {{"--min-change"},
       true,
       "percent: a significant change smaller than this is not marked (default 0)"},
      {{"-h", "--help"}, false, "show this help"},
  });
  parser.TakePositional();
  return RunSubcommand(
      "bench-compare",
      "usage: ember bench-compare OLD NEW [-o md|csv|json|svg] [--chart FILE.svg]\n"
      "                           [--ignore FIELD,...] [--alpha 0.05] [--min-change "
      "PCT]\n\n"
      "OLD and NEW are files of `ember bench -o json|jsonl` or --history (llama-bench's\n"
      "JSON too). Results pair by test and configuration; fields that hold one value in\n"
      "OLD and another in NEW (build, CPU, model) are what is compared. Per pair: the\n"
      "ratio of the median tokens/s, its interval, and a change marked when a\n"
      "Mann-Whitney test of the repetitions says it is beyond their noise.\n",
      parser, argc, argv, &RunCompare);
}

int BenchChartCommand(int argc, char** argv) {
  ArgParser parser({
      {{"-o", "--output"}, true, "the output file (default: stdout)"},
      {{"--format"},
       true,
       "svg (the chart; default) or md (its numbers as a table; the default for -o "
       "*.md)"},
      {{"-h", "--help"}, false, "show this help"},
  });
  parser.TakePositional();
  return RunSubcommand(
      "bench-chart",
      "usage: ember bench-chart FILE... [-o OUT.svg|OUT.md] [--format svg|md]\n\n"
      "Draws bench results (files of `ember bench -o json|jsonl` or --history) as\n"
      "`ember bench -o svg` does: tokens/s per test, grouped by model, a series per\n"
      "configuration that varies (threads, backend, build ...), the decode roofline.\n"
      "--format md prints the same as a table: median tokens/s per model, test and\n"
      "series, results of one configuration (repeated runs) pooled.\n",
      parser, argc, argv, &RunChart);
}

}  // namespace ember::tools
