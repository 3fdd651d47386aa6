// `ember bench --grammar FILE | --json-schema FILE | --json`: decode under a grammar. The
// grammar is built before the session (which plans exactly its bytes), placed in the
// session's arena, and each step's mask is timed; the summary line after the report
// gives the masks' median, p90 and share of the decode time.
#ifndef EMBER_TOOLS_CLI_BENCH_GRAMMAR_H_
#define EMBER_TOOLS_CLI_BENCH_GRAMMAR_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/grammar/grammar_constraint.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/status.h"
#include "tools/bench/bench_report.h"

namespace ember::tools {

// Nanoseconds since `start` on the steady clock, as `ember bench` times everything.
uint64_t ElapsedNs(std::chrono::steady_clock::time_point start);

class BenchGrammar {
 public:
  // Compiles `gbnf` and builds its tables for `tokenizer` (which must outlive this):
  // then bytes() is what the session must plan.
  Status Build(const std::string& gbnf, const std::string& name, const Tokenizer& tokenizer);
  bool active() const { return constraint_ != nullptr; }
  size_t bytes() const { return constraint_ ? constraint_->bytes().total : 0; }
  uint64_t build_ns() const { return build_ns_; }
  // Into the session's grammar region; room reserved for `max_steps` mask times (none
  // allocated while timing).
  Status Place(const Session& session, size_t max_steps);

  // Before a test: no masks timed, no restarts.
  void ClearTimes();
  // Before a generation: back to the start of the grammar after token `first`.
  Status Restart(int32_t first);
  // Samples the next token: its mask (timed), the draw, then the grammar advanced; a
  // stop id (the grammar ended) starts it over.
  Status Sample(Sampler& sampler, const float* logits, int32_t* next);
  // "MODEL, N threads, tg N under NAME: ... masks, median ..." for `r` (its samples
  // the decode times), the first mask (the warm-up's) left out.
  std::string Summary(const BenchResult& r) const;

 private:
  std::unique_ptr<grammar::GrammarConstraint> constraint_;
  const Tokenizer* tokenizer_ = nullptr;
  std::string name_;
  uint64_t build_ns_ = 0;
  std::vector<uint64_t> mask_ns_;
  int32_t previous_ = -1;
  size_t restarts_ = 0;
};

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_BENCH_GRAMMAR_H_
