// Shared by the accuracy tests (quant_accuracy_test.cc, kquant_accuracy_test.cc): a fixed
// text, every position's logits of a prompt, and how far one set of logits is from
// another (KL divergence of the next-token distributions, top-1 agreement, logit RMS).
#ifndef EMBER_TESTING_ACCURACY_UTIL_H_
#define EMBER_TESTING_ACCURACY_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/model/model.h"

namespace ember::testing {

// A text in the style of the TinyStories stories260K was trained on (written here).
extern const char kStoryText[];

// kStoryText's tokens (BOS first), at most max_tokens of them.
std::vector<int32_t> StoryTokens(const Model& model, size_t max_tokens = SIZE_MAX);

// Logits of every position of `tokens` (one prefill, all_logits): (n, vocab).
std::vector<float> AllLogits(const Model& model, const std::vector<int32_t>& tokens);

// log softmax of n logits, in double.
std::vector<double> LogSoftmax(const float* logits, size_t n);

// How far the logits `other` are from `ref` (both positions x vocab).
struct LogitDistance {
  double mean_kl = 0;    // mean over positions of KL(ref || other), nats
  double top1 = 0;       // fraction of positions with the same most likely token
  double logit_rms = 0;  // RMS over positions and vocabulary of other - ref
};
LogitDistance CompareLogits(const std::vector<float>& ref,
                            const std::vector<float>& other, size_t vocab);

}  // namespace ember::testing

#endif  // EMBER_TESTING_ACCURACY_UTIL_H_
