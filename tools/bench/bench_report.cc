// Bench output formats (see bench_report.h). JSON, JSON Lines and CSV write the same
// fields in the same order, from one list; the markdown tables show them all too, the
// per-run constants in a header line.
#include "tools/bench/bench_report.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nlohmann/json.hpp"
#include "tools/bench/bench_chart.h"
#include "tools/bench/bench_records.h"
#include "tools/util/text_table.h"

namespace ember::tools {
namespace {

using OrderedJson = nlohmann::ordered_json;

std::vector<double> ToDouble(const std::vector<uint64_t>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Every field of a result, in output order. A new field that measures (a time, a rate,
// bytes) must be listed as a measurement in ClassifyBenchField (bench_records.cc);
// anything else configures the test, and the charts draw a series per value of it and
// bench-compare pairs on it (bench_records_test checks the list).
OrderedJson Fields(const BenchResult& r) {
  OrderedJson j;
  j["build_commit"] = r.build_commit;
  j["cpu_info"] = r.cpu_info;
  j["backends"] = r.backends;
  j["model_filename"] = r.model_filename;
  j["model_type"] = r.model_type;
  j["model_size"] = r.model_size;
  j["model_n_params"] = r.model_n_params;
  j["n_batch"] = r.n_batch;
  j["n_threads"] = r.n_threads;
  j["type_k"] = r.type_kv;
  j["type_v"] = r.type_kv;
  j["use_mmap"] = true;
  j["n_prompt"] = r.n_prompt;
  j["n_gen"] = r.n_gen;
  j["n_depth"] = r.n_depth;
  j["test_time"] = r.test_time;
  j["avg_ns"] = static_cast<uint64_t>(std::llround(r.avg_ns()));
  j["stddev_ns"] = static_cast<uint64_t>(std::llround(r.stddev_ns()));
  j["avg_ts"] = r.avg_ts();
  j["stddev_ts"] = r.stddev_ts();
  j["samples_ns"] = r.samples_ns;
  j["samples_ts"] = r.samples_ts();
  j["test"] = r.test();
  j["dtype_mix"] = r.dtype_mix;
  j["hwy_target"] = r.hwy_target;
  j["int8_dot"] = r.int8_dot;
  j["isa"] = r.isa;
  j["ttft_ns"] = static_cast<uint64_t>(std::llround(r.ttft_ns));
  j["load_ns"] = r.load_ns;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  j["arena_bytes"] = r.arena_bytes;
  j["heap_allocs"] = r.heap_allocs;
  j["weight_bytes_per_token"] = r.weight_bytes_per_token;
  j["kv_bytes_per_token"] = r.kv_bytes_per_token;
  j["effective_gbps"] = r.effective_gbps();
  j["measured_gbps"] = r.measured_gbps;
  j["probe_bytes"] = r.probe_bytes;
  j["weights_read_gbps"] = r.weights_read_gbps;
  j["roofline_pct"] = r.roofline_pct();
  j["roofline_gbps"] = r.roofline_gbps();
  j["roofline_read"] = r.roofline_read;
  j["llc_bytes"] = r.llc_bytes;
  j["from_cache"] = r.from_cache();
  j["ember_version"] = r.ember_version;
  j["weight_type"] = r.weight_type;
  if (!r.model_sha256.empty()) j["model_sha256"] = r.model_sha256;
  if (r.has_profile) {
    const ProfileShares& p = r.profile;
    j["profile_matmul_pct"] = p.matmul;
    j["profile_attention_pct"] = p.attention;
    j["profile_norms_pct"] = p.norms;
    j["profile_rope_pct"] = p.rope;
    j["profile_activations_pct"] = p.activations;
    j["profile_sampling_pct"] = p.sampling;
    j["profile_other_pct"] = p.other;
    j["profile_parallel_pct"] = p.parallel;
    j["profile_threads_busy_pct"] =
        p.threads_busy < 0 ? OrderedJson(nullptr) : OrderedJson(p.threads_busy);
  }
  return j;
}

// A CSV cell: arrays joined with ',', quoted when needed (RFC 4180).
std::string CsvCell(const OrderedJson& value) {
  std::string text;
  if (value.is_null()) return text;  // not measured
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) text += (i ? "," : "") + value[i].dump();
  } else {
    text = value.dump();
  }
  return CsvQuote(text);
}

std::string Format(const char* format, double value) {
  char buf[64];
  snprintf(buf, sizeof(buf), format, value);
  return buf;
}

// 57.9 MiB, 1.23 GiB, 880 KiB.
std::string Bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return Format(bytes < 10 && unit    ? "%.2f"
                : bytes < 100 && unit ? "%.1f"
                                      : "%.0f",
                bytes) +
         " " + units[unit];
}

// 15.2M, 110M, 260K.
std::string Count(double n) {
  if (n >= 1e9) return Format(n >= 1e10 ? "%.0fB" : "%.2fB", n / 1e9);
  if (n >= 1e6) return Format(n >= 1e8 ? "%.0fM" : "%.1fM", n / 1e6);
  if (n >= 1e3) return Format("%.0fK", n / 1e3);
  return Format("%.0f", n);
}

std::string Rate(double value, double spread) {
  return Format("%.2f", value) + " ± " + Format("%.2f", spread);
}

// The kernels a result ran: "AVX2 (int8: avx-vnni, tier avx-vnni)".
std::string Kernels(const BenchResult& r) {
  return r.hwy_target + " (int8: " + r.int8_dot + ", tier " + r.isa + ")";
}

void WriteMarkdown(const std::vector<BenchResult>& results, FILE* out) {
  const BenchResult& first = results.front();
  // One tier for all (the header says which), or a column of them (--isa a,b).
  bool one_tier = true;
  for (const BenchResult& r : results)
    one_tier = one_tier && Kernels(r) == Kernels(first);
  fprintf(out, "ember bench: build %s, CPU %s, kernels %s, mmap, %s\n\n",
          first.build_commit.c_str(), first.cpu_info.c_str(),
          one_tier ? Kernels(first).c_str() : "per tier (isa column)",
          first.test_time.substr(0, 10).c_str());
  std::vector<std::vector<std::string>> rows;
  for (const BenchResult& r : results) {
    rows.push_back(
        {r.model_filename, Bytes(r.model_size), Count(r.model_n_params), r.backends,
         std::to_string(r.n_threads), r.test(), r.type_kv, Rate(r.avg_ts(), r.stddev_ts()),
         Format("%.2f", r.effective_gbps()), Format("%.2f", r.measured_gbps),
         Format("%.2f", r.weights_read_gbps),
         Format("%.1f %%", r.roofline_pct()) + (r.from_cache() ? " (cache)" : "")});
    if (!one_tier) rows.back().push_back(r.isa + " (" + r.hwy_target + ")");
  }
  std::vector<std::string> header = {"model", "size",     "params",   "backend",
                                     "th",    "test",     "kv",       "t/s",
                                     "eff GB/s", "mem GB/s", "file GB/s", "roofline"};
  std::vector<bool> right = {false, true, true, false, true, false,
                             false, true, true, true,  true, true};
  if (!one_tier) header.push_back("isa"), right.push_back(false);
  WriteMarkdownTable(header, right, rows, out);
  // Which reads gave the rooflines, and what "(cache)" means.
  std::vector<std::string> reads;
  bool any_cache = false;
  for (const BenchResult& r : results) {
    if (std::find(reads.begin(), reads.end(), r.roofline_read) == reads.end()) {
      reads.push_back(r.roofline_read);
    }
    any_cache = any_cache || r.from_cache();
  }
  std::string joined;
  for (const std::string& read : reads) joined += (joined.empty() ? "" : "; ") + read;
  fprintf(out, "\nroofline: eff GB/s over the best read of the probe (%s).\n",
          joined.c_str());
  if (any_cache) {
    fprintf(out,
            "(cache): the test's bytes fit the %s last-level cache: a cache's rate, not "
            "memory's.\n",
            Bytes(static_cast<double>(first.llc_bytes)).c_str());
  }

  fprintf(out, "\nTimes (ms; samples in tokens/s):\n\n");
  rows.clear();
  for (const BenchResult& r : results) {
    std::string samples;
    for (double ts : r.samples_ts()) {
      samples += (samples.empty() ? "" : " ") + Format("%.1f", ts);
    }
    // The date is in the header line.
    const std::string time =
        r.test_time.size() > 11 ? r.test_time.substr(11) : r.test_time;
    rows.push_back({r.model_filename, std::to_string(r.n_threads), r.test(),
                    Format("%.3f", r.avg_ns() / 1e6), Format("%.3f", r.stddev_ns() / 1e6),
                    Format("%.2f", r.ttft_ns / 1e6), Format("%.1f", r.load_ns / 1e6),
                    samples, time});
  }
  WriteMarkdownTable(
      {"model", "th", "test", "avg", "±", "ttft", "load", "samples", "time"},
      {false, true, false, true, true, true, true, false, false}, rows, out);

  fprintf(out, "\nMemory:\n\n");
  rows.clear();
  for (const BenchResult& r : results) {
    rows.push_back({r.model_filename, std::to_string(r.n_threads), r.test(), r.model_type,
                    r.dtype_mix, Bytes(r.peak_rss_bytes), Bytes(r.arena_bytes),
                    std::to_string(r.heap_allocs), Bytes(r.weight_bytes_per_token),
                    Bytes(r.kv_bytes_per_token), Bytes(r.probe_bytes),
                    std::to_string(r.n_batch)});
  }
  WriteMarkdownTable(
      {"model", "th", "test", "type", "dtypes", "peak RSS", "arena", "allocs",
       "weights/tok", "KV/tok", "probe", "batch"},
      {false, true, false, false, false, true, true, true, true, true, true, true}, rows,
      out);

  if (!first.has_profile) return;
  fprintf(out,
          "\nTime per kernel kind, %% of a decode step (tg) or of the prefill (pp):\n\n");
  rows.clear();
  for (const BenchResult& r : results) {
    const ProfileShares& p = r.profile;
    rows.push_back({r.model_filename, std::to_string(r.n_threads), r.test()});
    for (double share :
         {p.matmul, p.attention, p.norms, p.rope, p.activations, p.sampling, p.other}) {
      rows.back().push_back(Format("%.1f", share));
    }
    rows.back().push_back(Format("%.1f", p.parallel));
    rows.back().push_back(p.threads_busy < 0 ? "-" : Format("%.1f", p.threads_busy));
  }
  WriteMarkdownTable(
      {"model", "th", "test", "matmul", "attention", "norms", "rope", "activations",
       "sampling", "other", "in regions", "threads busy"},
      {false, true, false, true, true, true, true, true, true, true, true, true}, rows,
      out);
  fprintf(out,
          "\nin regions: %% of the step in regions that ran on more than one thread. "
          "threads busy: %% of\nthose regions' wall time x threads spent running tiles "
          "(the rest is hand-overs and waiting).\n");
}

}  // namespace

std::string BenchResult::test() const {
  if (n_texts > 0) {
    return "embed " + std::to_string(n_texts) + "x" + std::to_string(n_prompt / n_texts);
  }
  const std::string test =
      n_gen == 0 ? "pp" + std::to_string(n_prompt) : "tg" + std::to_string(n_gen);
  const std::string named = speculative.empty() ? test : test + " +" + speculative;
  return n_depth > 0 ? named + " @ d" + std::to_string(n_depth) : named;
}

double BenchResult::avg_ns() const { return MeanOf(ToDouble(samples_ns)); }
double BenchResult::stddev_ns() const { return SampleStdDev(ToDouble(samples_ns)); }

std::vector<double> BenchResult::samples_ts() const {
  std::vector<double> ts;
  for (uint64_t ns : samples_ns) ts.push_back(n_tokens() * 1e9 / static_cast<double>(ns));
  return ts;
}

double BenchResult::avg_ts() const { return MeanOf(samples_ts()); }
double BenchResult::stddev_ts() const { return SampleStdDev(samples_ts()); }

Status ParseBenchFormat(const std::string& name, BenchFormat* format) {
  if (name == "md") {
    *format = BenchFormat::kMarkdown;
  } else if (name == "json") {
    *format = BenchFormat::kJson;
  } else if (name == "jsonl") {
    *format = BenchFormat::kJsonLines;
  } else if (name == "csv") {
    *format = BenchFormat::kCsv;
  } else if (name == "svg") {
    *format = BenchFormat::kSvg;
  } else {
    return InvalidArgument("-o %s: unknown output format (md, json, jsonl, csv or svg)",
                           name.c_str());
  }
  return Status::Ok();
}

std::string BenchJsonLine(const BenchResult& result) {
  return Fields(result).dump() + "\n";
}

void WriteBenchReport(const std::vector<BenchResult>& results, BenchFormat format,
                      FILE* out) {
  if (results.empty()) return;
  switch (format) {
    case BenchFormat::kSvg: {
      std::vector<BenchRecord> records(results.size());
      for (size_t i = 0; i < results.size(); ++i) {
        // Every result has samples (at least one repetition): this cannot fail.
        (void)MakeBenchRecord(Fields(results[i]), "result " + std::to_string(i + 1),
                              &records[i]);
      }
      fputs(RenderBenchChart(records).c_str(), out);
      break;
    }
    case BenchFormat::kMarkdown:
      WriteMarkdown(results, out);
      break;
    case BenchFormat::kJson: {
      OrderedJson all = OrderedJson::array();
      for (const BenchResult& r : results) all.push_back(Fields(r));
      fprintf(out, "%s\n", all.dump(2).c_str());
      break;
    }
    case BenchFormat::kJsonLines:
      for (const BenchResult& r : results) fprintf(out, "%s\n", Fields(r).dump().c_str());
      break;
    case BenchFormat::kCsv: {
      const OrderedJson header = Fields(results.front());
      bool first = true;
      for (const auto& item : header.items()) {
        fprintf(out, "%s%s", first ? "" : ",", item.key().c_str());
        first = false;
      }
      fprintf(out, "\n");
      for (const BenchResult& r : results) {
        first = true;
        const OrderedJson fields = Fields(r);
        for (const auto& item : fields.items()) {
          fprintf(out, "%s%s", first ? "" : ",", CsvCell(item.value()).c_str());
          first = false;
        }
        fprintf(out, "\n");
      }
      break;
    }
  }
  fflush(out);
}

}  // namespace ember::tools
