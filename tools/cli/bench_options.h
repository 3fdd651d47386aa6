// `ember bench`'s command line: its options and what they become.
#ifndef EMBER_TOOLS_CLI_BENCH_OPTIONS_H_
#define EMBER_TOOLS_CLI_BENCH_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/session_plan.h"
#include "runtime/status.h"
#include "tools/bench/bench_report.h"
#include "tools/cli/args.h"

namespace ember::tools {

struct BenchOptions {
  std::vector<std::string> models;
  std::vector<Backend> backends;
  std::vector<std::string> isas;  // empty string: SessionOptions::isa null (EMBER_ISA)
  std::vector<KvType> kv_types;
  std::vector<int64_t> prompts, gens, threads, depths;
  int repetitions = 5;
  BenchFormat format = BenchFormat::kMarkdown;
  bool profile = false;
  uint64_t probe_bytes = 0;
  uint64_t llc_bytes = 0;                // the last-level cache (0: unknown)
  std::string chart_path, history_path;  // empty: none
  bool hash = false;
  bool fixed_threads = false;  // --fixed-threads: no pool policy
  // --grammar, --json-schema or --json: tg tests sample under it (GBNF text; empty:
  // none), and report what its masks cost.
  std::string grammar, grammar_name;
  // --embed N: each pp test embeds N texts of that many tokens (an embedding model), one
  // after another; 0: none.
  int embed_texts = 0;
  // --image FILE (repeatable): each model's images are encoded -r times first (the
  // encode time reported after the results), and each pp test prefills the images'
  // prompt before its tokens; none: empty.
  std::vector<std::string> images;
  // --draft MODEL, --draft-max N, --lookup N: each tg test runs again decoding
  // speculatively (draft_max 0: not asked for).
  std::string draft_path;
  uint32_t draft_max = 0;
  uint32_t lookup = 0;
  uint32_t draft_min = 0;  // --draft-min: a fixed length with --draft-max
  // --draft-oracle A: draft the plain run's own tokens, each kept with probability A
  // (else replaced by another): the speed-up at a known acceptance rate (< 0: none).
  double draft_oracle = -1;
};

ArgParser BenchParser();
// Reads and checks the options (each --isa tier must run on this CPU, before anything).
Status ParseBenchOptions(const ArgParser& args, BenchOptions* o);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_BENCH_OPTIONS_H_
