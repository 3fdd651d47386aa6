// Sampler: picks the next token from logits (greedy, or temperature with top-k and
// top-p), with llama2.c's xorshift generator so seeded runs are reproducible.
#ifndef EMBER_RUNTIME_SAMPLER_H_
#define EMBER_RUNTIME_SAMPLER_H_

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"

namespace ember {

struct SamplerOptions {
  float temperature = 0.8f;  // 0: greedy (argmax)
  uint32_t top_k = 40;       // 0: off
  float top_p = 0.95f;       // >= 1 or <= 0: off
  uint64_t seed = 42;
};

class Sampler {
 public:
  // Scratch bytes a sampler needs for a vocabulary (the session arena provides them).
  static size_t ScratchBytes(size_t vocab_size);

  // `scratch` must hold ScratchBytes(vocab_size) bytes, aligned to 8, for the lifetime.
  Sampler(const SamplerOptions& options, size_t vocab_size, void* scratch);

  // Returns the next token id. Reads `logits` (vocab_size floats) without changing them.
  int32_t Sample(const float* logits);

  // llama2.c's generator: xorshift64* state, 24-bit float in [0, 1).
  float RandomFloat();

 private:
  struct Candidate {
    float prob;
    int32_t id;
  };
  int32_t Greedy(const float* logits) const;
  size_t TopKLogits(const float* logits, size_t k);

  SamplerOptions options_;
  size_t vocab_size_;
  Candidate* candidates_;
  kernels::ArgMaxFn argmax_;
  uint64_t state_;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_SAMPLER_H_
