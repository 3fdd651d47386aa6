// `ember bench` under a grammar: see bench_grammar.h.
#include "tools/cli/bench_grammar.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "runtime/grammar/gbnf.h"

namespace ember::tools {

using Clock = std::chrono::steady_clock;

uint64_t ElapsedNs(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start)
      .count();
}

Status BenchGrammar::Build(const std::string& gbnf, const std::string& name,
                           const Tokenizer& tokenizer) {
  const Clock::time_point start = Clock::now();
  std::vector<uint32_t> words;
  const Status compiled = grammar::CompileGbnf(gbnf, "root", &words);
  if (!compiled.ok()) return Status(compiled.code(), "%s: %s", name.c_str(), compiled.message());
  auto made = std::make_unique<grammar::GrammarConstraint>();
  EMBER_RETURN_IF_ERROR(made->Build(std::move(words), tokenizer));
  constraint_ = std::move(made);
  tokenizer_ = &tokenizer;
  name_ = name;
  build_ns_ = ElapsedNs(start);
  return Status::Ok();
}

Status BenchGrammar::Place(const Session& session, size_t max_steps) {
  // In the session's arena, as ember_session_set_grammar places it.
  EMBER_RETURN_IF_ERROR(
      constraint_->Place(session.grammar_memory(), session.grammar_bytes()));
  mask_ns_.reserve(max_steps);
  return Status::Ok();
}

void BenchGrammar::ClearTimes() {
  mask_ns_.clear();
  restarts_ = 0;
}

Status BenchGrammar::Restart(int32_t first) {
  previous_ = first;
  return constraint_->Reset();
}

Status BenchGrammar::Sample(Sampler& sampler, const float* logits, int32_t* next) {
  const Clock::time_point start = Clock::now();
  const uint32_t* allowed = nullptr;
  EMBER_RETURN_IF_ERROR(constraint_->Allowed(&allowed));
  if (mask_ns_.size() < mask_ns_.capacity()) mask_ns_.push_back(ElapsedNs(start));
  EMBER_RETURN_IF_ERROR(sampler.Sample(logits, nullptr, 0, allowed, next));
  if (tokenizer_->IsStop(*next)) {
    ++restarts_;
    previous_ = *next;
    return constraint_->Reset();
  }
  EMBER_RETURN_IF_ERROR(constraint_->Accept(*next, tokenizer_->Decode(previous_, *next)));
  previous_ = *next;
  return Status::Ok();
}

std::string BenchGrammar::Summary(const BenchResult& r) const {
  // The masks of the timed repetitions (the warm-up's were recorded first).
  std::vector<uint64_t> masks(mask_ns_.begin() + std::min<size_t>(mask_ns_.size(), 1),
                              mask_ns_.end());
  std::sort(masks.begin(), masks.end());
  uint64_t mask_total = 0, test_total = 0;
  for (const uint64_t ns : masks) mask_total += ns;
  for (const uint64_t ns : r.samples_ns) test_total += ns;
  char line[512];
  snprintf(line, sizeof(line),
           "%s, %d thread%s, %s under %s: %zu masks, median %.1f us, p90 %.1f us, max "
           "%.1f us; %.2f %% of the decode time; the grammar ended %zu times; heap "
           "allocations %lld\n",
           r.model_filename.c_str(), r.n_threads, r.n_threads == 1 ? "" : "s",
           r.test().c_str(), name_.c_str(), masks.size(),
           masks.empty() ? 0.0 : masks[masks.size() / 2] / 1e3,
           masks.empty() ? 0.0 : masks[masks.size() * 9 / 10] / 1e3,
           masks.empty() ? 0.0 : masks.back() / 1e3,
           test_total ? 100.0 * static_cast<double>(mask_total) / test_total : 0.0,
           restarts_, static_cast<long long>(r.heap_allocs));
  return line;
}

}  // namespace ember::tools
