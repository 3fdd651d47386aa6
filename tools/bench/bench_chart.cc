// The bench chart (see bench_chart.h).
#include "tools/bench/bench_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "tools/util/text_table.h"

namespace ember::tools {
namespace {

double Number(const BenchJson& record, const char* name) {
  const auto it = record.find(name);
  return it != record.end() && it->is_number() ? it->get<double>() : 0;
}

// Indexes of distinct keys in the order they first appear.
class Index {
 public:
  size_t Of(const std::string& key) {
    const auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    index_.emplace(key, keys_.size());
    keys_.push_back(key);
    return keys_.size() - 1;
  }
  const std::vector<std::string>& keys() const { return keys_; }

 private:
  std::map<std::string, size_t> index_;
  std::vector<std::string> keys_;
};

// Tokens/s as a table shows it: 25317, 4399, 66.8, 5.12.
std::string TableRate(double ts) {
  char buf[32];
  snprintf(buf, sizeof(buf), ts >= 100 ? "%.0f" : ts >= 10 ? "%.1f" : "%.2f", ts);
  return buf;
}

// The value a field has in every record, or "" when it varies or is missing.
std::string Common(const FieldValues& fields, const std::string& name) {
  const auto it = fields.texts.find(name);
  return it != fields.texts.end() && it->second.size() == 1 && *it->second.begin() != "-"
             ? *it->second.begin()
             : "";
}

std::string TitleAndNotes(const std::vector<BenchRecord>& records,
                          const FieldValues& fields, std::vector<std::string>* notes) {
  const std::string cpu = Common(fields, "cpu_info");
  std::string build;
  const std::string version = Common(fields, "ember_version");
  const std::string commit = Common(fields, "build_commit");
  if (!version.empty()) build = "ember " + version;
  if (!commit.empty()) {
    build += (build.empty() ? "build " : " (") + commit + (version.empty() ? "" : ")");
  }
  std::string kernels;
  const std::string target = Common(fields, "hwy_target");
  const std::string int8 = Common(fields, "int8_dot");
  const std::string tier = Common(fields, "isa");
  if (!target.empty()) kernels = "kernels " + target;
  if (!int8.empty()) kernels += (kernels.empty() ? "int8 " : ", int8 ") + int8;
  if (!tier.empty()) kernels += (kernels.empty() ? "tier " : ", tier ") + tier;
  const std::string kv = Common(fields, "type_k");
  const std::string backend = Common(fields, "backends");
  std::string line;
  for (const std::string& part :
       {build, kernels, kv.empty() ? "" : "KV cache " + kv,
        backend.empty() || backend == "CPU" ? "" : "backend " + backend}) {
    if (!part.empty()) line += (line.empty() ? "" : " · ") + part;
  }
  // The dates the results were measured on.
  std::set<std::string> dates;
  for (const BenchRecord& r : records) {
    const std::string time = FieldText(r.fields, "test_time");
    if (time != "-") dates.insert(time.substr(0, 10));
  }
  if (!dates.empty()) {
    line += (line.empty() ? "" : " · ") + *dates.begin() +
            (dates.size() > 1 ? " to " + *dates.rbegin() : "");
  }
  if (!line.empty()) notes->push_back(line);
  return cpu.empty() ? "ember bench: tokens/s" : "ember bench on " + cpu + ": tokens/s";
}

}  // namespace

double RooflineTokensPerSecond(const BenchJson& record) {
  if (Number(record, "n_gen") <= 0 || Number(record, "n_prompt") > 0) return -1;
  // The probe's best read (older files: the file read, else the buffer's).
  const double file = Number(record, "weights_read_gbps");
  const double best = Number(record, "roofline_gbps");
  const double gbps = best > 0 ? best : file > 0 ? file : Number(record, "measured_gbps");
  const double bytes =
      Number(record, "weight_bytes_per_token") + Number(record, "kv_bytes_per_token");
  const double roofline = gbps > 0 && bytes > 0 ? gbps * 1e9 / bytes : -1;
  return std::isfinite(roofline) && roofline <= 1e12 ? roofline : -1;  // as tokens/s are
}

BenchGrid MakeBenchGrid(const std::vector<BenchRecord>& records) {
  BenchGrid grid;
  const FieldValues fields = CollectFieldValues(records);
  grid.title = TitleAndNotes(records, fields, &grid.notes);
  // The configuration fields that vary make the series.
  std::vector<std::string> varying;
  for (const std::string& name : fields.names) {
    if (ClassifyBenchField(name) == BenchField::kConfig &&
        fields.texts.at(name).size() > 1) {
      varying.push_back(name);
    }
  }
  if (varying.empty() && fields.texts.count("n_threads")) varying.push_back("n_threads");

  Index tests, groups, series;
  std::map<std::vector<size_t>, size_t> cell_of;  // (test, group, series) -> cell
  std::vector<BenchSpeedPool> pools;              // per cell
  std::vector<int> rooflines;                     // per cell: results with a roofline
  const FieldPicker pick(varying);
  for (const BenchRecord& r : records) {
    std::string label;
    const std::vector<std::string> values = pick.Pick(r.fields);
    for (size_t i = 0; i < varying.size(); ++i) {
      label += (label.empty() ? "" : " · ") + DescribeField(varying[i], values[i]);
    }
    const std::string type = FieldText(r.fields, "model_type");
    std::string group = FieldText(r.fields, "model_filename");
    if (type != "-") group += "\n" + type;
    const std::vector<size_t> at = {tests.Of(TestLabel(r.fields)), groups.Of(group),
                                    series.Of(label.empty() ? "tokens/s" : label)};
    const auto found = cell_of.emplace(at, grid.cells.size());
    if (found.second) {
      grid.cells.push_back({at[0], at[1], at[2], {}, 0, 0});
      pools.emplace_back();
      rooflines.push_back(0);
    }
    const size_t c = found.first->second;
    pools[c].Add(r.speed);
    ++grid.cells[c].results;
    const double roofline = RooflineTokensPerSecond(r.fields);
    if (roofline > 0) grid.cells[c].roofline += roofline, ++rooflines[c];
    grid.repetitions.insert(r.speed.samples.size());
  }
  for (size_t c = 0; c < grid.cells.size(); ++c) {
    grid.cells[c].speed = pools[c].Take();
    grid.cells[c].roofline = rooflines[c] ? grid.cells[c].roofline / rooflines[c] : -1;
  }
  grid.tests = tests.keys();
  grid.groups = groups.keys();
  grid.series = series.keys();
  return grid;
}

BarChartSpec BenchChartSpec(const std::vector<BenchRecord>& records) {
  const BenchGrid grid = MakeBenchGrid(records);
  BarChartSpec spec;
  spec.title = grid.title;
  spec.notes = grid.notes;
  spec.value_label = "tokens/s";
  spec.series = grid.series;
  bool any_roofline = false;
  for (size_t p = 0; p < grid.tests.size(); ++p) {
    const std::string& test = grid.tests[p];
    BarChartPanel panel;
    panel.title = test + (test.rfind("pp", 0) == 0   ? " (prefill)"
                          : test.rfind("tg", 0) == 0 ? " (decode)"
                                                     : "");
    // The groups with a result in this test (a test one model did not run has none).
    std::vector<bool> present(grid.groups.size(), false);
    for (const BenchGrid::Cell& cell : grid.cells) {
      if (cell.test == p) present[cell.group] = true;
    }
    std::vector<size_t> index(grid.groups.size(), 0);
    for (size_t g = 0; g < grid.groups.size(); ++g) {
      if (!present[g]) continue;
      index[g] = panel.groups.size();
      panel.groups.push_back(grid.groups[g]);
    }
    for (const BenchGrid::Cell& cell : grid.cells) {
      if (cell.test != p) continue;
      ChartBar bar;
      bar.group = index[cell.group];
      bar.series = cell.series;
      bar.value = cell.speed.mean;
      bar.low = std::max(0.0, cell.speed.Min());
      bar.high = cell.speed.Max();
      bar.reference = cell.roofline;
      any_roofline |= cell.roofline > 0;
      panel.bars.push_back(bar);
    }
    spec.panels.push_back(panel);
  }
  const bool all_samples = grid.repetitions.count(0) == 0;
  if (all_samples && grid.repetitions.size() == 1) {
    const size_t n = *grid.repetitions.begin();
    spec.whisker_legend = "bar: mean of " + std::to_string(n) +
                          (n == 1 ? " repetition" : " repetitions") +
                          "; whisker: the slowest and the fastest";
  } else {
    spec.whisker_legend =
        all_samples ? "bar: mean of the repetitions; whisker: slowest and fastest"
                    : "bar: mean; whisker: the slowest and fastest repetition, "
                      "or ± one standard deviation";
  }
  if (any_roofline) {
    spec.reference_legend = "roofline: decode at the read bandwidth measured in the run";
  }
  return spec;
}

std::string RenderBenchChart(const std::vector<BenchRecord>& records) {
  return RenderBarChartSvg(BenchChartSpec(records));
}

void WriteBenchTable(const std::vector<BenchRecord>& records, FILE* out) {
  const BenchGrid grid = MakeBenchGrid(records);
  fprintf(out, "%s\n", grid.title.c_str());
  for (const std::string& note : grid.notes) fprintf(out, "%s\n", note.c_str());
  fprintf(out, "\n");
  // A column per (test, series) that has a result, in order; the cell of each (group,
  // column) found by lookup, not by a walk over every cell per table cell.
  std::map<std::pair<size_t, size_t>, size_t> column_of;
  std::map<std::pair<size_t, size_t>, const BenchGrid::Cell*> cell_at;  // (group, column)
  for (const BenchGrid::Cell& cell : grid.cells) {
    column_of.emplace(std::make_pair(cell.test, cell.series), 0);
  }
  std::vector<std::pair<size_t, size_t>> columns;
  for (auto& [column, index] : column_of) {
    index = columns.size();
    columns.push_back(column);
  }
  for (const BenchGrid::Cell& cell : grid.cells) {
    cell_at[{cell.group, column_of.at({cell.test, cell.series})}] = &cell;
  }
  std::vector<std::string> header = {"model", "type"};
  std::vector<bool> right = {false, false};
  for (const auto& column : columns) {
    header.push_back(grid.tests[column.first] + ", " + grid.series[column.second]);
    right.push_back(true);
  }
  std::vector<std::vector<std::string>> rows;
  bool any_roofline = false;
  int most_results = 0;
  for (size_t g = 0; g < grid.groups.size(); ++g) {
    const size_t nl = grid.groups[g].find('\n');
    std::vector<std::string> row = {
        grid.groups[g].substr(0, nl),
        nl == std::string::npos ? "" : grid.groups[g].substr(nl + 1)};
    for (size_t k = 0; k < columns.size(); ++k) {
      std::string text = "-";
      const auto found = cell_at.find({g, k});
      if (found != cell_at.end()) {
        const BenchGrid::Cell& cell = *found->second;
        const double median = cell.speed.Median();
        text = TableRate(median);
        if (cell.roofline > 0) {
          char pct[32];
          snprintf(pct, sizeof(pct), " (%.0f %%)", 100 * median / cell.roofline);
          text += pct;
          any_roofline = true;
        }
        most_results = std::max(most_results, cell.results);
      }
      row.push_back(text);
    }
    rows.push_back(row);
  }
  WriteMarkdownTable(header, right, rows, out);
  fprintf(out, "\nMedian tokens/s over the repetitions%s.%s\n",
          most_results > 1 ? " of every result of a configuration (runs pooled)" : "",
          any_roofline ? " Decode: its share of the roofline in parentheses." : "");
  fflush(out);
}

}  // namespace ember::tools
