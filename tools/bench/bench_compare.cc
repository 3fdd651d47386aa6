// Pairing two bench files' results and comparing each pair (see bench_compare.h).
#include "tools/bench/bench_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace ember::tools {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
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

// Each configuration of a file (its values of the paired fields) with its results pooled,
// in the order they first appear.
struct Grouped {
  std::vector<std::vector<std::string>> keys;
  std::map<std::vector<std::string>, size_t> index;  // of keys
  std::vector<std::string> tests;
  std::vector<CompareSide> sides;
  std::vector<std::vector<std::string>> shown;  // the columns' values
};

Status Group(const std::vector<BenchRecord>& records,
             const std::vector<std::string>& paired_on,
             const std::vector<std::string>& columns, Grouped* out) {
  Grouped& g = *out;
  std::vector<BenchSpeedPool> pools;
  const FieldPicker pick_key(paired_on), pick_shown(columns);
  for (const BenchRecord& r : records) {
    std::vector<std::string> key = pick_key.Pick(r.fields);
    key.push_back(TestLabel(r.fields));  // llama-bench files have no test field
    const auto found = g.index.emplace(key, g.keys.size());
    if (found.second) {
      if (g.keys.size() == kMaxCompareConfigurations) {
        return ResourceExhausted(
            "%s: more than %zu configurations (of the test%s%s), the most bench-compare "
            "pairs in a file: --ignore FIELD pools results that differ only in FIELD",
            r.where.c_str(), kMaxCompareConfigurations, columns.empty() ? "" : " and ",
            Join(columns, 4).c_str());
      }
      g.keys.push_back(key);
      g.tests.push_back(key.back());
      g.sides.push_back({{}, 0});
      pools.emplace_back();
      g.shown.push_back(pick_shown.Pick(r.fields));
    }
    pools[found.first->second].Add(r.speed);
    ++g.sides[found.first->second].results;
  }
  for (size_t i = 0; i < pools.size(); ++i) g.sides[i].speed = pools[i].Take();
  return Status::Ok();
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
  const FieldValues old_fields = CollectFieldValues(old_records);
  const FieldValues new_fields = CollectFieldValues(new_records);
  bool model_column = false;
  for (const std::string& name : old_fields.names) {
    if (Contains(options.ignore, name)) continue;
    const auto in_new = new_fields.texts.find(name);
    if (in_new == new_fields.texts.end()) {
      // The test pairs by its label, from whichever test fields a file has.
      if (ClassifyBenchField(name) != BenchField::kTest)
        c.only_old_fields.push_back(name);
      continue;
    }
    const std::set<std::string>& a = old_fields.texts.at(name);
    const std::set<std::string>& b = in_new->second;
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
  for (const std::string& name : new_fields.names) {
    if (ClassifyBenchField(name) != BenchField::kTest &&
        !Contains(options.ignore, name) && old_fields.texts.count(name) == 0) {
      c.only_new_fields.push_back(name);
    }
  }

  Grouped a, b;
  EMBER_RETURN_IF_ERROR(Group(old_records, c.paired_on, c.columns, &a));
  EMBER_RETURN_IF_ERROR(Group(new_records, c.paired_on, c.columns, &b));
  std::vector<bool> matched(b.keys.size(), false);
  for (size_t i = 0; i < a.keys.size(); ++i) {
    const auto it = b.index.find(a.keys[i]);
    if (it == b.index.end()) {
      c.only_old.push_back({a.shown[i], a.tests[i], a.sides[i]});
      continue;
    }
    const size_t j = it->second;
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
