// The model and sessions the prompt-state fuzzer restores into, shared with the seed
// generator that saves its seeds from them: FamiliesModelSpec's model (sliding layers,
// 16 positions) and four sessions over it that differ in what a restore checks and
// converts: positions or rings, f32, f16 or q8 rows.
#ifndef EMBER_TESTS_FUZZ_PROMPT_STATE_SESSIONS_H_
#define EMBER_TESTS_FUZZ_PROMPT_STATE_SESSIONS_H_

#include <cstdint>

#include "runtime/session.h"
#include "testing/testing.h"

namespace ember::fuzz {

inline constexpr uint32_t kStateContext = 16;
inline constexpr int kNumStateSessions = 4;

inline ModelSpec PromptStateModelSpec() {
  return testing::FamiliesModelSpec(/*window=*/4, kStateContext);
}

// Session `i`: f32 in one step (every layer keeps every position), f32 in steps of two
// tokens (the sliding layers keep rings), q8 with rings, f16 in one step.
inline SessionOptions PromptStateSessionOptions(int i) {
  constexpr KvType kTypes[kNumStateSessions] = {KvType::kF32, KvType::kF32, KvType::kQ8,
                                                KvType::kF16};
  constexpr uint32_t kBatch[kNumStateSessions] = {kStateContext, 2, 2, kStateContext};
  return testing::FamiliesSessionOptions(kStateContext, kBatch[i], kTypes[i], false);
}

}  // namespace ember::fuzz

#endif  // EMBER_TESTS_FUZZ_PROMPT_STATE_SESSIONS_H_
