// Pairing two bench files' results and comparing each pair (see bench_compare.h).
#include "tools/bench/bench_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace ember::tools {
namespace {

// Field names of a file's results, in the order they first appear.
std::vector<std::string> FieldNames(const std::vector<BenchRecord>& records) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const BenchRecord& r : records) {
    for (const auto& item : r.fields.items()) {
      if (seen.insert(item.key()).second) names.push_back(item.key());
    }
  }
  return names;
}

std::set<std::string> Values(const std::vector<BenchRecord>& records,
                             const std::string& name) {
  std::set<std::string> values;
  for (const BenchRecord& r : records) values.insert(FieldText(r.fields, name));
  return values;
}

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Each configuration of a file (its values of the paired fields) with its results pooled,
// in the order they first appear.
struct Grouped {
  std::vector<std::vector<std::string>> keys;
  std::vector<std::string> tests;
  std::vector<CompareSide> sides;
  std::vector<std::vector<std::string>> shown;  // the columns' values
};

Grouped Group(const std::vector<BenchRecord>& records,
              const std::vector<std::string>& paired_on,
              const std::vector<std::string>& columns) {
  Grouped g;
  std::map<std::vector<std::string>, size_t> index;
  for (const BenchRecord& r : records) {
    std::vector<std::string> key;
    for (const std::string& name : paired_on) key.push_back(FieldText(r.fields, name));
    key.push_back(TestLabel(r.fields));  // llama-bench files have no test field
    const auto found = index.find(key);
    if (found == index.end()) {
      index.emplace(key, g.keys.size());
      g.keys.push_back(key);
      g.tests.push_back(TestLabel(r.fields));
      g.sides.push_back({r.speed, 1});
      std::vector<std::string> shown;
      for (const std::string& name : columns) shown.push_back(FieldText(r.fields, name));
      g.shown.push_back(shown);
    } else {
      CompareSide& side = g.sides[found->second];
      side.speed = BenchSpeed::Pool(side.speed, r.speed);
      ++side.results;
    }
  }
  return g;
}

std::string Join(const std::vector<std::string>& names, size_t max_names) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < max_names; ++i) {
    text += (i ? ", " : "") + names[i];
  }
  if (names.size() > max_names) {
    text += " and " + std::to_string(names.size() - max_names) + " more";
  }
  return text;
}

}  // namespace

Status CompareBenchRecords(const std::vector<BenchRecord>& old_records,
                           const std::vector<BenchRecord>& new_records,
                           const std::string& old_name, const std::string& new_name,
                           const CompareOptions& options, Comparison* out) {
  Comparison& c = *out;
  c = Comparison();
  c.old_name = old_name;
  c.new_name = new_name;
  c.old_results = old_records.size();
  c.new_results = new_records.size();
  c.options = options;
  const std::vector<std::string> old_fields = FieldNames(old_records);
  const std::vector<std::string> new_fields = FieldNames(new_records);
  bool model_column = false;
  for (const std::string& name : old_fields) {
    if (ClassifyBenchField(name) == BenchField::kMeasurement) continue;
    if (Contains(options.ignore, name)) continue;
    if (!Contains(new_fields, name)) {
      // The test pairs by its label, from whichever test fields a file has.
      if (ClassifyBenchField(name) != BenchField::kTest)
        c.only_old_fields.push_back(name);
      continue;
    }
    const std::set<std::string> a = Values(old_records, name),
                                b = Values(new_records, name);
    if (a.size() == 1 && b.size() == 1 && *a.begin() != *b.begin()) {
      c.differences.push_back({name, *a.begin(), *b.begin()});
      continue;
    }
    c.paired_on.push_back(name);
    // Varying fields are columns; the test has its own, and one model field is enough.
    const BenchField kind = ClassifyBenchField(name);
    if ((a.size() > 1 || b.size() > 1) && kind != BenchField::kTest &&
        !(kind == BenchField::kModel && model_column)) {
      c.columns.push_back(name);
      model_column |= kind == BenchField::kModel;
    }
  }
  for (const std::string& name : new_fields) {
    const BenchField kind = ClassifyBenchField(name);
    if (kind != BenchField::kMeasurement && kind != BenchField::kTest &&
        !Contains(options.ignore, name) && !Contains(old_fields, name)) {
      c.only_new_fields.push_back(name);
    }
  }

  const Grouped a = Group(old_records, c.paired_on, c.columns);
  const Grouped b = Group(new_records, c.paired_on, c.columns);
  std::vector<bool> matched(b.keys.size(), false);
  for (size_t i = 0; i < a.keys.size(); ++i) {
    const auto it = std::find(b.keys.begin(), b.keys.end(), a.keys[i]);
    if (it == b.keys.end()) {
      c.only_old.push_back({a.shown[i], a.tests[i], a.sides[i]});
      continue;
    }
    const size_t j = it - b.keys.begin();
    matched[j] = true;
    ComparedPair pair;
    pair.key = a.shown[i];
    pair.test = a.tests[i];
    pair.old_side = a.sides[i];
    pair.new_side = b.sides[j];
    const BenchSpeed& x = pair.old_side.speed;
    const BenchSpeed& y = pair.new_side.speed;
    pair.estimate = !x.samples.empty() && !y.samples.empty()
                        ? CompareSamples(x.samples, y.samples, options.alpha)
                        : CompareMeans(x.mean, x.stddev, y.mean, y.stddev, options.alpha);
    if (std::fabs(pair.estimate.ratio - 1) < options.min_change) pair.estimate.change = 0;
    c.pairs.push_back(pair);
  }
  for (size_t j = 0; j < b.keys.size(); ++j) {
    if (!matched[j]) c.only_new.push_back({b.shown[j], b.tests[j], b.sides[j]});
  }
  if (c.pairs.empty()) {
    return InvalidArgument(
        "no result of %s pairs with one of %s (paired on the test%s%s); --ignore FIELD "
        "leaves a field out",
        old_name.c_str(), new_name.c_str(), c.columns.empty() ? "" : " and ",
        Join(c.columns, 4).c_str());
  }
  return Status::Ok();
}

std::string CompareRule(const CompareOptions& options) {
  char floor[64] = "";
  if (options.min_change > 0) {
    snprintf(floor, sizeof(floor), " and the ratio is %g %% or more away from 1",
             options.min_change * 100);
  }
  char text[400];
  snprintf(text, sizeof(text),
           "NEW/OLD is the ratio of the median tokens/s; the interval holds it with "
           "%g %% confidence (Hodges-Lehmann, from every NEW/OLD pair of repetitions); a "
           "change is marked when a two-sided Mann-Whitney test of the repetitions gives "
           "p < %g%s.",
           100 * (1 - options.alpha), options.alpha, floor);
  return text;
}

}  // namespace ember::tools
