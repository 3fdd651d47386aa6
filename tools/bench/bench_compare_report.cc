// bench-compare's output (see bench_compare.h): a markdown table of the pairs and of the
// results without a partner, CSV and JSON with every figure, and the ratio chart.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tools/bench/bench_compare.h"
#include "tools/util/text_table.h"
#include "tools/viz/ratio_chart.h"

namespace ember::tools {
namespace {

std::string Format(const char* format, double value) {
  char buf[64];
  snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string Rate(double ts) { return Format(ts >= 100 ? "%.1f" : "%.2f", ts); }

// "1234.5 (5)": the median and its repetitions; "(15 of 3)" for 3 results pooled.
std::string Side(const CompareSide& s) {
  const size_t n = s.speed.samples.size();
  const std::string of = s.results > 1 ? " of " + std::to_string(s.results) : "";
  return Rate(s.speed.Median()) + (n ? " (" + std::to_string(n) + of + ")" : " (mean)");
}

// "+12.3 %", "-4.0 %", "0.0 %" (no sign on what rounds to zero).
std::string Percent(double ratio) {
  const double pct = 100 * (ratio - 1);
  return std::fabs(pct) < 0.05 ? "0.0 %" : Format("%+.1f %%", pct);
}

std::string PValue(const RatioEstimate& e) {
  return e.p_value < 0.001 ? "<0.001"
                           : Format(e.p_value < 0.1 ? "%.3f" : "%.2f", e.p_value);
}

// "faster", "slower", "same" (within noise) or "undecided" (too few repetitions).
const char* ChangeWord(const RatioEstimate& e) {
  if (e.change > 0) return "faster";
  if (e.change < 0) return "slower";
  return e.can_decide ? "same" : "undecided";
}

std::string ChangeText(const RatioEstimate& e, const CompareOptions& o) {
  if (e.change != 0) return Percent(e.ratio) + " " + ChangeWord(e);
  if (!e.can_decide) return "too few repetitions";
  if (e.p_value < o.alpha) return "within --min-change";
  return "within noise";
}

// "0.981–1.032", with its coverage when below the asked confidence: "0.95–1.05 (67 %)".
std::string Interval(const RatioEstimate& e, double alpha) {
  std::string text = Format("%.3f", e.low) + "–" + Format("%.3f", e.high);
  if (e.confidence + 1e-9 < 1 - alpha) text += Format(" (%.0f %%)", 100 * e.confidence);
  return text;
}

std::string Title(const std::string& field) {
  if (field == "model_filename") return "model";
  if (field == "n_threads") return "threads";
  if (field == "backends") return "backend";
  if (field == "hwy_target") return "ISA";
  if (field == "type_k") return "KV";
  if (field == "n_depth") return "depth";
  return field;
}

bool IsNumber(const std::string& text) {
  char* end = nullptr;
  strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0';
}

// The columns naming a pair (the varying fields, then the test), and which of them hold
// only numbers (right-aligned).
std::vector<std::string> KeyHeader(const Comparison& c, std::vector<bool>* right) {
  std::vector<std::string> header;
  right->clear();
  for (size_t i = 0; i < c.columns.size(); ++i) {
    header.push_back(Title(c.columns[i]));
    bool numeric = true;
    for (const ComparedPair& p : c.pairs) numeric &= IsNumber(p.key[i]);
    for (const UnpairedResult& u : c.only_old) numeric &= IsNumber(u.key[i]);
    for (const UnpairedResult& u : c.only_new) numeric &= IsNumber(u.key[i]);
    right->push_back(numeric);
  }
  header.push_back("test");
  right->push_back(false);
  return header;
}

void WriteMarkdown(const Comparison& c, FILE* out) {
  fprintf(out, "ember bench-compare: OLD %s (%zu results), NEW %s (%zu results)\n\n",
          c.old_name.c_str(), c.old_results, c.new_name.c_str(), c.new_results);
  for (const FieldChange& d : c.differences) {
    fprintf(out, "- %s: %s → %s\n", d.field.c_str(), d.old_value.c_str(),
            d.new_value.c_str());
  }
  if (!c.only_old_fields.empty() || !c.only_new_fields.empty()) {
    std::string fields;
    for (const std::string& f : c.only_old_fields) fields += " " + f + " (OLD)";
    for (const std::string& f : c.only_new_fields) fields += " " + f + " (NEW)";
    fprintf(out, "- in one file only, not paired on:%s\n", fields.c_str());
  }
  std::string paired = "the test";
  size_t same = 0;
  for (const std::string& field : c.paired_on) {
    if (std::find(c.columns.begin(), c.columns.end(), field) != c.columns.end()) {
      paired += ", " + field;
    } else if (ClassifyBenchField(field) != BenchField::kTest) {
      ++same;
    }
  }
  if (same > 0)
    paired += " and " + std::to_string(same) + " fields equal in every result";
  fprintf(out, "- paired on %s\n\n", paired.c_str());
  std::vector<bool> right;
  std::vector<std::string> header = KeyHeader(c, &right);
  for (const char* h : {"OLD t/s", "NEW t/s", "NEW/OLD", "interval", "p"}) {
    header.push_back(h);
    right.push_back(true);
  }
  header.push_back("change");
  right.push_back(false);
  std::vector<std::vector<std::string>> rows;
  bool from_means = false, narrow = false;
  for (const ComparedPair& p : c.pairs) {
    std::vector<std::string> row = p.key;
    row.push_back(p.test);
    const RatioEstimate& e = p.estimate;
    from_means |= !e.from_samples;
    narrow |= e.confidence + 1e-9 < 1 - c.options.alpha;
    row.insert(row.end(),
               {Side(p.old_side), Side(p.new_side), Format("%.3f", e.ratio),
                Interval(e, c.options.alpha), PValue(e) + (e.from_samples ? "" : " †")});
    const std::string change = ChangeText(e, c.options);
    row.push_back(e.change ? "**" + change + "**" : change);
    rows.push_back(row);
  }
  WriteMarkdownTable(header, right, rows, out);
  fprintf(out, "\nt/s: median (repetitions, of how many results pooled). %s\n",
          CompareRule(c.options).c_str());
  if (narrow) {
    fprintf(
        out,
        "An interval with a percentage covers only that much: too few repetitions for "
        "%g %%.\n",
        100 * (1 - c.options.alpha));
  }
  if (from_means) {
    fprintf(
        out,
        "† no per-repetition samples in a file: the ratio of the means, p and interval "
        "from their standard deviations (normal approximation).\n");
  }
  for (int side = 0; side < 2; ++side) {
    const std::vector<UnpairedResult>& alone = side == 0 ? c.only_old : c.only_new;
    if (alone.empty()) continue;
    fprintf(out, "\nOnly in %s (%s):\n\n", side == 0 ? "OLD" : "NEW",
            side == 0 ? c.old_name.c_str() : c.new_name.c_str());
    std::vector<bool> r;
    std::vector<std::string> h = KeyHeader(c, &r);
    h.push_back("t/s");
    r.push_back(true);
    std::vector<std::vector<std::string>> lines;
    for (const UnpairedResult& u : alone) {
      std::vector<std::string> row = u.key;
      row.push_back(u.test);
      row.push_back(Side(u.side));
      lines.push_back(row);
    }
    WriteMarkdownTable(h, r, lines, out);
  }
}

BenchJson SideJson(const CompareSide& s) {
  BenchJson j;
  j["median_ts"] = s.speed.Median();
  j["mean_ts"] = s.speed.mean;
  j["stddev_ts"] = s.speed.stddev;
  j["repetitions"] = s.speed.samples.size();
  j["results"] = s.results;
  return j;
}

BenchJson KeyJson(const Comparison& c, const std::vector<std::string>& key,
                  const std::string& test) {
  BenchJson j;
  for (size_t i = 0; i < c.columns.size(); ++i) j[c.columns[i]] = key[i];
  j["test"] = test;
  return j;
}

BenchJson ComparisonJson(const Comparison& c) {
  BenchJson j;
  j["old"] = {{"file", c.old_name}, {"results", c.old_results}};
  j["new"] = {{"file", c.new_name}, {"results", c.new_results}};
  j["alpha"] = c.options.alpha;
  j["min_change"] = c.options.min_change;
  j["rule"] = CompareRule(c.options);
  j["paired_on"] = c.paired_on;
  j["differences"] = BenchJson::array();
  for (const FieldChange& d : c.differences) {
    j["differences"].push_back(
        {{"field", d.field}, {"old", d.old_value}, {"new", d.new_value}});
  }
  j["only_old_fields"] = c.only_old_fields;
  j["only_new_fields"] = c.only_new_fields;
  j["pairs"] = BenchJson::array();
  for (const ComparedPair& p : c.pairs) {
    const RatioEstimate& e = p.estimate;
    BenchJson pair = KeyJson(c, p.key, p.test);
    pair["old"] = SideJson(p.old_side);
    pair["new"] = SideJson(p.new_side);
    pair["ratio"] = e.ratio;
    pair["ratio_low"] = e.low;
    pair["ratio_high"] = e.high;
    pair["confidence"] = e.confidence;
    pair["p_value"] = e.p_value;
    pair["method"] = e.from_samples ? "mann-whitney" : "mean-stddev";
    pair["change"] = ChangeWord(e);
    j["pairs"].push_back(pair);
  }
  for (int side = 0; side < 2; ++side) {
    BenchJson list = BenchJson::array();
    for (const UnpairedResult& u : side == 0 ? c.only_old : c.only_new) {
      BenchJson item = KeyJson(c, u.key, u.test);
      item["speed"] = SideJson(u.side);
      list.push_back(item);
    }
    j[side == 0 ? "only_old" : "only_new"] = list;
  }
  return j;
}

void WriteCsv(const Comparison& c, FILE* out) {
  fprintf(out, "status");
  for (const std::string& f : c.columns) fprintf(out, ",%s", CsvQuote(f).c_str());
  fprintf(out,
          ",test,old_median_ts,old_repetitions,new_median_ts,new_repetitions,ratio,"
          "ratio_low,ratio_high,confidence,p_value,method,change\n");
  auto key = [&](const char* status, const std::vector<std::string>& k,
                 const std::string& test) {
    fprintf(out, "%s", status);
    for (const std::string& v : k) fprintf(out, ",%s", CsvQuote(v).c_str());
    fprintf(out, ",%s", CsvQuote(test).c_str());
  };
  for (const ComparedPair& p : c.pairs) {
    const RatioEstimate& e = p.estimate;
    key("paired", p.key, p.test);
    fprintf(out, ",%.6g,%zu,%.6g,%zu,%.6g,%.6g,%.6g,%.4g,%.4g,%s,%s\n",
            p.old_side.speed.Median(), p.old_side.speed.samples.size(),
            p.new_side.speed.Median(), p.new_side.speed.samples.size(), e.ratio, e.low,
            e.high, e.confidence, e.p_value,
            e.from_samples ? "mann-whitney" : "mean-stddev", ChangeWord(e));
  }
  for (const UnpairedResult& u : c.only_old) {
    key("only_old", u.key, u.test);
    fprintf(out, ",%.6g,%zu,,,,,,,,,\n", u.side.speed.Median(),
            u.side.speed.samples.size());
  }
  for (const UnpairedResult& u : c.only_new) {
    key("only_new", u.key, u.test);
    fprintf(out, ",,,%.6g,%zu,,,,,,,\n", u.side.speed.Median(),
            u.side.speed.samples.size());
  }
}

std::string ChartSvg(const Comparison& c) {
  RatioChartSpec spec;
  spec.title = "tokens/s, NEW ÷ OLD";
  spec.notes.push_back("OLD " + c.old_name + " · NEW " + c.new_name);
  for (const FieldChange& d : c.differences) {
    spec.notes.push_back(d.field + ": " + d.old_value + " → " + d.new_value);
  }
  spec.notes.push_back(
      "dot: ratio of the medians; line: " + Format("%g", 100 * (1 - c.options.alpha)) +
      " % interval; coloured: Mann-Whitney p < " + Format("%g", c.options.alpha));
  spec.axis_label = "NEW / OLD tokens/s (logarithmic)";
  spec.higher_legend = "faster";
  spec.lower_legend = "slower";
  spec.none_legend = "within noise";
  for (const ComparedPair& p : c.pairs) {
    RatioRow row;
    for (size_t i = 0; i < p.key.size(); ++i) {
      row.label += DescribeField(c.columns[i], p.key[i]) + " · ";
    }
    row.label += p.test;
    row.ratio = p.estimate.ratio;
    row.low = p.estimate.low;
    row.high = p.estimate.high;
    row.verdict = p.estimate.change > 0   ? RatioRow::Verdict::kHigher
                  : p.estimate.change < 0 ? RatioRow::Verdict::kLower
                                          : RatioRow::Verdict::kNone;
    row.note = Percent(p.estimate.ratio);
    spec.rows.push_back(row);
  }
  return RenderRatioChartSvg(spec);
}

}  // namespace

Status ParseCompareFormat(const std::string& name, CompareFormat* format) {
  if (name == "md") {
    *format = CompareFormat::kMarkdown;
  } else if (name == "csv") {
    *format = CompareFormat::kCsv;
  } else if (name == "json") {
    *format = CompareFormat::kJson;
  } else if (name == "svg") {
    *format = CompareFormat::kSvg;
  } else {
    return InvalidArgument("-o %s: unknown output format (md, csv, json or svg)",
                           name.c_str());
  }
  return Status::Ok();
}

void WriteComparison(const Comparison& c, CompareFormat format, FILE* out) {
  switch (format) {
    case CompareFormat::kMarkdown:
      WriteMarkdown(c, out);
      break;
    case CompareFormat::kCsv:
      WriteCsv(c, out);
      break;
    case CompareFormat::kJson:
      fprintf(out, "%s\n", ComparisonJson(c).dump(2).c_str());
      break;
    case CompareFormat::kSvg:
      fputs(ChartSvg(c).c_str(), out);
      break;
  }
  fflush(out);
}

}  // namespace ember::tools
