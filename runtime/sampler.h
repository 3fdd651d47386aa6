// Sampler: picks the next token from logits (greedy, or temperature with top-k and
// top-p), with llama2.c's xorshift generator so seeded runs are reproducible.
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
};

// Temperatures below this sample greedily, which is what sampling approaches as T
// falls; below it 1/T would overflow the softmax's exponents to inf and NaN.
inline constexpr float kGreedyBelowTemperature = 1e-4f;

class Sampler {
 public:
  // Scratch bytes a sampler needs for a vocabulary (the session arena provides them).
  static size_t ScratchBytes(size_t vocab_size);

  // Options a sampler accepts: a temperature that is finite and >= 0, top_p in (0, 1].
  static Status CheckOptions(const SamplerOptions& options);

  // `scratch` must hold ScratchBytes(vocab_size) bytes, aligned to 8, for the lifetime.
  // Options that CheckOptions refuses sample greedily (callers check them first).
  Sampler(const SamplerOptions& options, size_t vocab_size, void* scratch);

  // The next token id into *token. Reads `logits` (vocab_size floats) without changing
  // them; a NaN or infinite logit is an error (nothing sensible can be drawn from it).
  Status Sample(const float* logits, int32_t* token);

  // llama2.c's generator: xorshift64* state, 24-bit float in [0, 1).
  float RandomFloat();

 private:
  struct Candidate {
    float prob;
    int32_t id;
  };
  int32_t Greedy(const float* logits) const;
  int32_t Draw(const float* logits);
  size_t TopKLogits(const float* logits, size_t k);

  SamplerOptions options_;
  size_t vocab_size_;
  Candidate* candidates_;
  kernels::ArgMaxFn argmax_;
  uint64_t state_;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_SAMPLER_H_
