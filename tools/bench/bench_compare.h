// `ember bench-compare OLD NEW`: pairs the results of two bench files by test and
// configuration and says, per pair, how NEW's tokens/s compare with OLD's and whether the
// difference is beyond the runs' own noise (bench_stats.h); as a table (md, csv, json)
// or a chart (svg).
//
// Pairing: every field both files have that is not a measurement (bench_records.h) pairs
// results, except those that hold one value in OLD and another in NEW: those are what is
// being compared (two builds, two CPUs, two models) and are listed, not matched. Results
// of one file with the same configuration (a history with repeated runs) are pooled.
#ifndef EMBER_TOOLS_BENCH_BENCH_COMPARE_H_
#define EMBER_TOOLS_BENCH_BENCH_COMPARE_H_

#include <cstdio>
#include <string>
#include <vector>

#include "runtime/status.h"
#include "tools/bench/bench_records.h"
#include "tools/bench/bench_stats.h"

namespace ember::tools {

struct CompareOptions {
  std::vector<std::string> ignore;  // fields never paired on (--ignore)
  double alpha = 0.05;              // significance level of a marked change
  double min_change = 0;  // relative: smaller significant changes are not marked
};

// One configuration in one file: its pooled tokens/s.
struct CompareSide {
  BenchSpeed speed;
  int results = 0;  // how many results were pooled
};

struct ComparedPair {
  std::vector<std::string> key;  // the values of Comparison::columns
  std::string test;
  CompareSide old_side, new_side;
  RatioEstimate estimate;  // change is 0 below min_change
};

struct UnpairedResult {
  std::vector<std::string> key;
  std::string test;
  CompareSide side;
};

struct FieldChange {
  std::string field, old_value,
      new_value;  // "(varies)" for a field that varies in one file
};

struct Comparison {
  std::string old_name, new_name;
  size_t old_results = 0, new_results = 0;
  CompareOptions options;
  std::vector<std::string> paired_on;    // every field that pairs
  std::vector<std::string> columns;      // those that vary (shown beside the test)
  std::vector<FieldChange> differences;  // held apart: one value in OLD, another in NEW
  std::vector<std::string> only_old_fields, only_new_fields;  // not in the other file
  std::vector<ComparedPair> pairs;
  std::vector<UnpairedResult> only_old, only_new;
};

// Configurations (values of the fields paired on) one file may hold: each keeps its
// values of every paired field (10,000 of up to 256 fields are some 160 MB). Not a limit
// of reading: a history of many builds holds more until --ignore build_commit pools them.
inline constexpr size_t kMaxCompareConfigurations = 10000;

// Pairs and compares. No pair at all is an error that says what the files differ in; so
// is a file of more than kMaxCompareConfigurations.
Status CompareBenchRecords(const std::vector<BenchRecord>& old_records,
                           const std::vector<BenchRecord>& new_records,
                           const std::string& old_name, const std::string& new_name,
                           const CompareOptions& options, Comparison* out);

enum class CompareFormat { kMarkdown, kCsv, kJson, kSvg };
Status ParseCompareFormat(const std::string& name, CompareFormat* format);
void WriteComparison(const Comparison& c, CompareFormat format, FILE* out);

// The statistical rule, in one sentence, as the reports state it.
std::string CompareRule(const CompareOptions& options);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_BENCH_COMPARE_H_
