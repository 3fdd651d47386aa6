// Bench results and their output formats: markdown tables for a terminal, JSON, JSON
// Lines and CSV with llama-bench's field names where the meaning is the same.
#ifndef EMBER_TOOLS_BENCH_BENCH_REPORT_H_
#define EMBER_TOOLS_BENCH_BENCH_REPORT_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace ember::tools {

// Shares of a decode step (tg) or of a prefill (pp), in percent; they sum to 100.
struct ProfileShares {
  double matmul = 0, attention = 0, norms = 0, rope = 0, activations = 0, sampling = 0,
         other = 0;
  // Not part of the 100: the share of the step spent in regions that ran on more than
  // one thread, and how busy the threads were in them: their time running tiles, in
  // percent of the regions' wall time times the thread count (negative: no region ran
  // on more than one thread).
  double parallel = 0, threads_busy = -1;
};

// One test (pp N or tg N) of one model at one thread count.
struct BenchResult {
  // Under --grammar, its masks' cost; under --embed, texts/s: a line printed after the
  // report (else empty).
  std::string summary;
  // As llama-bench names them.
  std::string build_commit;
  std::string cpu_info;
  std::string backends = "CPU";  // what ran the f32 matrices: CPU (Highway) or XNNPACK
  std::string model_filename;
  std::string model_type;   // e.g. "llama 15M f32"
  uint64_t model_size = 0;  // bytes of the model file
  uint64_t model_n_params = 0;
  int n_batch = 0;  // tokens per prefill step (the longest -p: one batch)
  int n_threads = 0;
  std::string type_kv = "f32";  // KV cache type (llama-bench's type_k and type_v)
  int n_prompt = 0;
  int n_gen = 0;
  int n_depth = 0;  // tokens already in the cache when the test starts (-d)
  int n_texts = 0;  // --embed: texts of n_prompt / n_texts tokens each; 0: not embedding
  // A tg test decoded speculatively: "lookup 3", "draft" or "draft + lookup 3" (the
  // test's name says so: "tg64 +lookup 3"); empty: plain decoding.
  std::string speculative;
  std::string test_time;             // ISO 8601, UTC
  std::vector<uint64_t> samples_ns;  // one per repetition

  // ember's own.
  std::string dtype_mix;   // stored weight types, e.g. "f32:57"
  std::string hwy_target;  // Highway target of the kernels
  std::string
      int8_dot;        // what the q8/q4 products run on (avx512-vnni, neon-sdot, highway)
  std::string isa;     // the ISA tier the kernels were built for (--isa), e.g. "avx-vnni"
  double ttft_ns = 0;  // time to first token: prefill (pp) or a decode step (tg),
                       // plus sampling the token
  uint64_t load_ns = 0;  // model open + verify + bind, thread pool, session arena
  uint64_t peak_rss_bytes = 0;
  uint64_t arena_bytes = 0;
  int64_t heap_allocs = 0;  // allocations during the timed repetitions; -1: not counted
  double weight_bytes_per_token = 0;
  double kv_bytes_per_token = 0;  // KV cache bytes attention reads per decode step (mean)
  // The bandwidth probe (bandwidth_probe.h) at n_threads, before and after the test: the
  // best pass over its own buffer, and over the model file's own pages (0: too small).
  double measured_gbps = 0;
  uint64_t probe_bytes = 0;
  double weights_read_gbps = 0;
  std::string roofline_read;  // which read gave the roofline: "file, prefetch"
  uint64_t llc_bytes = 0;     // the CPU's last-level cache (0: unknown)
  bool has_profile = false;
  ProfileShares profile;
  std::string ember_version;  // the library's (ember_version())
  std::string weight_type;  // of most of the layers' matrix bytes (convert --dtype), "q4"
  std::string
      model_sha256;  // of the model file; empty: not computed (no --history, --hash)

  // Derived.
  // "pp128" or "tg64"; "tg64 @ d1024" after a depth; "embed 32x128" (--embed)
  std::string test() const;
  int n_tokens() const { return n_prompt + n_gen; }
  double avg_ns() const;
  double stddev_ns() const;
  std::vector<double> samples_ts() const;  // n_tokens * 1e9 / samples_ns
  double avg_ts() const;                   // mean of samples_ts (as llama-bench)
  double stddev_ts() const;
  // Every byte a token must read: the weights and (decode) the cached keys and values.
  double effective_gbps() const {
    return (weight_bytes_per_token + kv_bytes_per_token) * avg_ts() / 1e9;
  }
  // The best read rate the probe saw: the buffer's or the file's pages' (a file in the
  // page cache may sit in huge folios or in 4 KiB pages, and one core reads the two at
  // rates 15-25 % apart), whichever is higher, so that a memory-bound test cannot pass
  // 100 %.
  double roofline_gbps() const {
    return weights_read_gbps > measured_gbps ? weights_read_gbps : measured_gbps;
  }
  double roofline_pct() const {
    return roofline_gbps() > 0 ? 100.0 * effective_gbps() / roofline_gbps() : 0;
  }
  // The bytes the test reads (decode: a token's; prefill: the whole prompt's) fit the
  // last-level cache: its rate is the cache's, and its roofline % says little.
  bool from_cache() const {
    const double bytes = n_gen > 0 ? weight_bytes_per_token + kv_bytes_per_token
                                   : weight_bytes_per_token * n_prompt;
    return llc_bytes > 0 && bytes <= static_cast<double>(llc_bytes);
  }
};

enum class BenchFormat { kMarkdown, kJson, kJsonLines, kCsv, kSvg };

// "md", "json", "jsonl", "csv" or "svg" (the chart, tools/bench/bench_chart.h).
Status ParseBenchFormat(const std::string& name, BenchFormat* format);

// One result as a line of JSON (every field, as -o jsonl writes it), with its newline.
std::string BenchJsonLine(const BenchResult& result);

// Writes every field of every result in the format (the chart: what it draws).
void WriteBenchReport(const std::vector<BenchResult>& results, BenchFormat format,
                      FILE* out);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_BENCH_REPORT_H_
