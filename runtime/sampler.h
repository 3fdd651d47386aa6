// Sampler: picks the next token from logits (greedy, or temperature with top-k, top-p and
// min-p), after repetition, frequency and presence penalties over the recent tokens, with
// llama2.c's xorshift generator so seeded runs are reproducible.
#ifndef EMBER_RUNTIME_SAMPLER_H_
#define EMBER_RUNTIME_SAMPLER_H_

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"
#include "runtime/status.h"

namespace ember {

struct SamplerOptions {
  float temperature = 0.8f;  // 0 (or below kGreedyBelowTemperature): greedy (argmax)
  uint32_t top_k = 40;       // 0: off
  float top_p = 0.95f;       // in (0, 1]; 1: off
  uint64_t seed = 42;
  // Penalties on the tokens among the last repeat_last_n of the context (0: none; -1:
  // all of it), as llama.cpp applies them to the logits before anything else: a logit l
  // of a token seen c > 0 times becomes (l > 0 ? l / repeat_penalty : l * repeat_penalty)
  // - c * frequency_penalty - presence_penalty.
  float repeat_penalty = 1.0f;  // > 0; 1: off
  int32_t repeat_last_n = 64;   // >= -1
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  // Keeps the tokens whose probability (after temperature, top-k and top-p) is at least
  // min_p times the most likely one's; 0: off.
  float min_p = 0.0f;
};

// Temperatures below this sample greedily, which is what sampling approaches as T
// falls; below it 1/T would overflow the softmax's exponents to inf and NaN.
inline constexpr float kGreedyBelowTemperature = 1e-4f;

class Sampler {
 public:
  // Scratch bytes a sampler needs for a vocabulary (the session arena provides them).
  static size_t ScratchBytes(size_t vocab_size);

  // Options a sampler accepts: a temperature that is finite and >= 0, top_p in (0, 1],
  // min_p in [0, 1], a positive finite repeat_penalty, finite frequency and presence
  // penalties, repeat_last_n >= -1.
  static Status CheckOptions(const SamplerOptions& options);

  // `scratch` must hold ScratchBytes(vocab_size) bytes, aligned to 8, for the lifetime.
  // Options that CheckOptions refuses sample greedily (callers check them first).
  Sampler(const SamplerOptions& options, size_t vocab_size, void* scratch);

  // The next token id into *token. Reads `logits` (vocab_size floats) without changing
  // them; a NaN or infinite logit is an error (nothing sensible can be drawn from it).
  Status Sample(const float* logits, int32_t* token) {
    return Sample(logits, nullptr, 0, token);
  }
  // The same, with the penalties over `recent` (the context's last tokens, oldest first:
  // the sampler looks at the last repeat_last_n of them, or all with -1). Token ids
  // outside the vocabulary are ignored.
  Status Sample(const float* logits, const int32_t* recent, size_t n_recent,
                int32_t* token) {
    return Sample(logits, recent, n_recent, nullptr, token);
  }
  // The same among the tokens whose bit is set in `allowed` (bit id % 32 of word id / 32;
  // null: all): what a grammar allows. InvalidArgument when it allows none.
  Status Sample(const float* logits, const int32_t* recent, size_t n_recent,
                const uint32_t* allowed, int32_t* token);
  // The probability Sample gives each token, with the same penalties, into `probs`
  // (vocab_size floats; 0 for the tokens it cannot pick; greedy: 1 for its pick). For
  // speculative sampling's acceptance rule (runtime/speculative/).
  Status Probabilities(const float* logits, const int32_t* recent, size_t n_recent,
                       float* probs);
  // An id drawn with this sampler's generator in proportion to `weights` (vocab_size
  // finite floats >= 0); -1 when they are all 0.
  int32_t DrawFrom(const float* weights);
  bool greedy() const { return options_.temperature <= 0.0f; }
  const SamplerOptions& options() const { return options_; }
  // The generator's state, for saving a session and restoring it (prompt_state.h).
  uint64_t rng_state() const { return state_; }
  void set_rng_state(uint64_t state) { state_ = state; }

  // llama2.c's generator: xorshift64* state, 24-bit float in [0, 1).
  float RandomFloat();

 private:
  struct Candidate {
    float prob;
    int32_t id;
  };
  bool penalizes() const;
  const float* Penalize(const float* logits, const int32_t* recent, size_t n_recent);
  int32_t Greedy(const float* logits) const;
  // The first maximum among the allowed tokens (-1: none is allowed).
  int32_t GreedyAllowed(const float* logits, const uint32_t* allowed) const;
  int32_t Draw(const float* logits);
  // The candidates Draw picks among into candidates_[0, n) (n returned), weights
  // summing to *mass; Pick takes the first whose running sum passes r.
  size_t Keep(const float* logits, float* mass);
  int32_t Pick(size_t n, float r) const;
  // Sample's check of the logits: NaN or infinite ones are an error.
  Status CheckFinite(const float* logits) const;
  size_t TopKLogits(const float* logits, size_t k);

  SamplerOptions options_;
  size_t vocab_size_;
  Candidate* candidates_;  // vocab_size_
  float* penalized_;       // vocab_size_: the logits after the penalties
  kernels::ArgMaxFn argmax_;
  uint64_t state_;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_SAMPLER_H_
