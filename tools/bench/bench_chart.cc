// The bench chart (see bench_chart.h).
#include "tools/bench/bench_chart.h"

#include <algorithm>
#include <map>
#include <set>

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

// The value a field has in every record, or "" when it varies or is missing.
std::string Common(const std::vector<BenchRecord>& records, const std::string& name) {
  std::set<std::string> values;
  for (const BenchRecord& r : records) values.insert(FieldText(r.fields, name));
  return values.size() == 1 && *values.begin() != "-" ? *values.begin() : "";
}

std::string TitleAndNotes(const std::vector<BenchRecord>& records,
                          std::vector<std::string>* notes) {
  const std::string cpu = Common(records, "cpu_info");
  std::string build;
  const std::string version = Common(records, "ember_version");
  const std::string commit = Common(records, "build_commit");
  if (!version.empty()) build = "ember " + version;
  if (!commit.empty()) {
    build += (build.empty() ? "build " : " (") + commit + (version.empty() ? "" : ")");
  }
  std::string kernels;
  const std::string target = Common(records, "hwy_target");
  const std::string int8 = Common(records, "int8_dot");
  if (!target.empty()) kernels = "kernels " + target;
  if (!int8.empty()) kernels += (kernels.empty() ? "int8 " : ", int8 ") + int8;
  const std::string kv = Common(records, "type_k");
  const std::string backend = Common(records, "backends");
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
  const double file = Number(record, "weights_read_gbps");
  const double gbps = file > 0 ? file : Number(record, "measured_gbps");
  const double bytes =
      Number(record, "weight_bytes_per_token") + Number(record, "kv_bytes_per_token");
  return gbps > 0 && bytes > 0 ? gbps * 1e9 / bytes : -1;
}

BarChartSpec BenchChartSpec(const std::vector<BenchRecord>& records) {
  BarChartSpec spec;
  spec.title = TitleAndNotes(records, &spec.notes);
  spec.value_label = "tokens/s";
  // The configuration fields that vary make the series.
  std::vector<std::string> fields;
  std::set<std::string> seen;
  for (const BenchRecord& r : records) {
    for (const auto& item : r.fields.items()) {
      if (ClassifyBenchField(item.key()) == BenchField::kConfig &&
          seen.insert(item.key()).second) {
        fields.push_back(item.key());
      }
    }
  }
  std::vector<std::string> varying;
  for (const std::string& name : fields) {
    std::set<std::string> values;
    for (const BenchRecord& r : records) values.insert(FieldText(r.fields, name));
    if (values.size() > 1) varying.push_back(name);
  }
  if (varying.empty() && seen.count("n_threads")) varying.push_back("n_threads");

  Index panels, groups, series;
  // (panel, group, series) -> pooled speed, roofline sum and count.
  struct Cell {
    BenchSpeed speed;
    double roofline = 0;
    int results = 0, rooflines = 0;
  };
  std::map<std::vector<size_t>, Cell> cells;
  std::vector<std::vector<size_t>> order;
  std::set<size_t> repetitions;
  for (const BenchRecord& r : records) {
    std::string label;
    for (const std::string& name : varying) {
      label +=
          (label.empty() ? "" : " · ") + DescribeField(name, FieldText(r.fields, name));
    }
    const std::string type = FieldText(r.fields, "model_type");
    std::string group = FieldText(r.fields, "model_filename");
    if (type != "-") group += "\n" + type;
    const std::vector<size_t> at = {panels.Of(TestLabel(r.fields)), groups.Of(group),
                                    series.Of(label.empty() ? "tokens/s" : label)};
    Cell& cell = cells[at];
    if (cell.results++ == 0) {
      cell.speed = r.speed;
      order.push_back(at);
    } else {
      cell.speed = BenchSpeed::Pool(cell.speed, r.speed);
    }
    const double roofline = RooflineTokensPerSecond(r.fields);
    if (roofline > 0) cell.roofline += roofline, ++cell.rooflines;
    repetitions.insert(r.speed.samples.size());
  }
  spec.series = series.keys();
  for (const std::string& test : panels.keys()) {
    BarChartPanel panel;
    panel.title = test + (test.rfind("pp", 0) == 0   ? " (prefill)"
                          : test.rfind("tg", 0) == 0 ? " (decode)"
                                                     : "");
    panel.groups = groups.keys();
    spec.panels.push_back(panel);
  }
  bool any_roofline = false;
  for (const std::vector<size_t>& at : order) {
    const Cell& cell = cells[at];
    ChartBar bar;
    bar.group = at[1];
    bar.series = at[2];
    bar.value = cell.speed.mean;
    bar.low = std::max(0.0, cell.speed.Min());
    bar.high = cell.speed.Max();
    if (cell.rooflines > 0) {
      bar.reference = cell.roofline / cell.rooflines;
      any_roofline = true;
    }
    spec.panels[at[0]].bars.push_back(bar);
  }
  // Groups a panel has no bar for (a test one model did not run) are dropped.
  for (BarChartPanel& panel : spec.panels) {
    std::vector<size_t> remap(panel.groups.size(), SIZE_MAX);
    std::vector<std::string> kept;
    for (const ChartBar& bar : panel.bars) {
      if (remap[bar.group] == SIZE_MAX) {
        remap[bar.group] = 0;
      }
    }
    for (size_t g = 0; g < panel.groups.size(); ++g) {
      if (remap[g] == SIZE_MAX) continue;
      remap[g] = kept.size();
      kept.push_back(panel.groups[g]);
    }
    for (ChartBar& bar : panel.bars) bar.group = remap[bar.group];
    panel.groups = kept;
  }
  const bool all_samples = repetitions.count(0) == 0;
  if (all_samples && repetitions.size() == 1) {
    const size_t n = *repetitions.begin();
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

}  // namespace ember::tools
