// Bench results as JSON records, read back from the files `ember bench` writes (-o json,
// -o jsonl, --history) and from llama-bench's -o json / -o jsonl, for the charts, the
// comparisons and the history: which fields configure a test and which measure it, and
// each record's tokens/s.
#ifndef EMBER_TOOLS_BENCH_BENCH_RECORDS_H_
#define EMBER_TOOLS_BENCH_BENCH_RECORDS_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime/status.h"

namespace ember::tools {

using BenchJson = nlohmann::ordered_json;

// Mean (0 for none) and sample standard deviation (n - 1; 0 for fewer than two), as
// llama-bench and ember bench report them.
double MeanOf(const std::vector<double>& v);
double SampleStdDev(const std::vector<double>& v);

// Tokens/s of one result (or of several pooled).
struct BenchSpeed {
  std::vector<double> samples;  // one per repetition; empty when a file has only the mean
  double mean = 0, stddev = 0;  // of the samples, or as the file states them
  double Min() const;           // the slowest repetition (mean - stddev without samples)
  double Max() const;
  double Median() const;  // the mean without samples
  // Samples of both when both have them; otherwise the pooled mean and spread.
  static BenchSpeed Pool(const BenchSpeed& a, const BenchSpeed& b);
};
// A speed from its samples: their mean, spread (SampleStdDev) and the samples.
BenchSpeed FromSamples(std::vector<double> samples);

// Folds BenchSpeed::Pool over the results of one configuration, in order, with the same
// figures, in time linear in their samples (Pool on each result would copy every sample
// gathered so far: quadratic in the results).
class BenchSpeedPool {
 public:
  void Add(const BenchSpeed& speed);
  BenchSpeed Take();  // what Pool would have given; the pool is empty again

 private:
  void Settle();  // the mean and spread of the samples appended since

  BenchSpeed speed_;
  bool empty_ = true, unsettled_ = false;
};

struct BenchRecord {
  BenchJson fields;   // the result's object as the file has it
  std::string where;  // for messages: "FILE:LINE" or "FILE: result I"
  BenchSpeed speed;
};

// What a field says about a result. Fields this list does not know (a newer ember's,
// llama-bench's n_ubatch or n_gpu_layers) configure the test: a chart draws a series per
// value when they vary, and bench-compare pairs on them.
enum class BenchField {
  kTest,         // which test: test, n_prompt, n_gen
  kModel,        // which model file: model_filename, model_type, model_size, ...
  kConfig,       // how it ran: n_threads, backends, hwy_target, type_k, build_commit, ...
  kMeasurement,  // what it measured: samples, times, bandwidths, memory, profile_*
};
BenchField ClassifyBenchField(const std::string& name);

// A result object checked and its tokens/s taken: from samples_ts, else from samples_ns
// and the test's tokens (n_prompt + n_gen), else avg_ts (and stddev_ts). `where` names it
// in errors.
Status MakeBenchRecord(BenchJson fields, std::string where, BenchRecord* out);

// What one bench file may hold. Readers refuse more, naming the limit, and AppendLines
// does not grow a history past them, so that reading, charting and comparing a file takes
// seconds and at most a few hundred MB whatever it holds. ember bench writes about 1.3 KB
// per result (5 repetitions): 64 MiB is some 50,000 results, a year of nightly runs of
// 130 configurations.
inline constexpr size_t kMaxBenchFileBytes = size_t{64} << 20;
inline constexpr size_t kMaxBenchLineBytes = size_t{1} << 20;  // a line of JSON Lines
inline constexpr size_t kMaxBenchResults = 100000;
// Repetitions in all, so also in the pool of any configuration bench-compare tests.
inline constexpr size_t kMaxBenchSamples = 2000000;
// Field names (ember bench writes 46, llama-bench about 35).
inline constexpr size_t kMaxBenchFields = 256;
// Arrays and objects within arrays and objects (results nest 2 deep; copying and printing
// JSON recurses once per level).
inline constexpr size_t kMaxBenchNesting = 32;

// Reads a JSON array of results, a single result object, or JSON Lines (one result per
// line; blank lines skipped). A malformed line is an error naming the file and the line;
// so is a file without results, and one beyond the limits above.
Status ReadBenchRecords(const std::string& path, std::vector<BenchRecord>* out);
Status ParseBenchRecords(const std::string& text, const std::string& name,
                         std::vector<BenchRecord>* out);

// "pp128", "tg64": the test field, else from n_prompt and n_gen (as llama-bench names
// them; "pp128+tg64" when both are set).
std::string TestLabel(const BenchJson& record);

// A field's value as short text: strings as they are, numbers as JSON writes them, "-"
// when missing or null.
std::string FieldText(const BenchJson& record, const std::string& name);

// A field's value as FieldText shows it.
std::string ValueText(const BenchJson& value);

// The fields of `records` that are not measurements, in the order they first appear, each
// with the texts it takes (FieldText: "-" where a record lacks it), in one pass over the
// records' fields rather than a search of every record per name.
struct FieldValues {
  std::vector<std::string> names;
  std::map<std::string, std::set<std::string>> texts;
};
FieldValues CollectFieldValues(const std::vector<BenchRecord>& records);

// FieldText of each of `names` in a record, in one pass over its fields (a search per
// name is linear in the record's fields: ordered_json keeps them in a list).
class FieldPicker {
 public:
  explicit FieldPicker(const std::vector<std::string>& names);
  std::vector<std::string> Pick(const BenchJson& record) const;

 private:
  std::map<std::string, size_t> positions_;
};

// A value with what it is, for legends and labels: "2 threads", "KV f16", "depth 512",
// "build 1a2b3c4", "XNNPACK"; a field it does not know as "name value".
std::string DescribeField(const std::string& name, const std::string& value);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_BENCH_RECORDS_H_
