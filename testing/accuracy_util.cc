// Shared accuracy-test helpers (see accuracy_util.h).
#include "testing/accuracy_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "runtime/session.h"

namespace ember::testing {

const char kStoryText[] =
    "Once upon a time, there was a little dog named Max. Max liked to run in the big "
    "green park with his friend Sue. One day, Sue found a shiny red ball under a tree. "
    "She threw the ball and Max ran very fast to get it. Max was so happy that he "
    "wagged his tail. Then the sun went down and it was time to go home. Sue gave Max "
    "a hug and said, \"You are my best friend.\" Max barked and they walked home "
    "together.";

std::vector<int32_t> StoryTokens(const Model& model, size_t max_tokens) {
  std::vector<int32_t> ids(model.tokenizer().EncodeCapacity(sizeof(kStoryText)));
  size_t n = 0;
  const Status s = model.tokenizer().Encode(kStoryText, true, ids.data(), ids.size(), &n);
  EXPECT_TRUE(s.ok()) << s.message();
  ids.resize(std::min(n, max_tokens));
  return ids;
}

std::vector<float> AllLogits(const Model& model, const std::vector<int32_t>& tokens) {
  SessionOptions options;
  options.all_logits = true;
  options.max_batch = static_cast<uint32_t>(tokens.size());
  auto session = Session::Create(model, options, nullptr);
  EXPECT_TRUE(session.ok()) << session.status().message();
  if (!session.ok()) return {};
  const Status s = session->Prefill(tokens.data(), tokens.size());
  EXPECT_TRUE(s.ok()) << s.message();
  const size_t vocab = model.config().vocab_size;
  std::vector<float> out(tokens.size() * vocab);
  for (size_t i = 0; i < tokens.size(); ++i) {
    memcpy(out.data() + i * vocab, session->logits_at(i), vocab * sizeof(float));
  }
  return out;
}

std::vector<double> LogSoftmax(const float* logits, size_t n) {
  double max = logits[0];
  for (size_t i = 1; i < n; ++i) max = std::max<double>(max, logits[i]);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(logits[i] - max);
  const double log_sum = std::log(sum) + max;
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = logits[i] - log_sum;
  return out;
}

LogitDistance CompareLogits(const std::vector<float>& ref,
                            const std::vector<float>& other, size_t vocab) {
  LogitDistance d;
  const size_t n = ref.size() / vocab;
  if (n == 0 || other.size() != ref.size()) {
    ADD_FAILURE() << "logits of " << ref.size() << " and " << other.size() << " values";
    return d;
  }
  const auto argmax = [vocab](const float* x) {
    return static_cast<size_t>(std::max_element(x, x + vocab) - x);
  };
  double squares = 0;
  for (size_t i = 0; i < n; ++i) {
    const float* r = ref.data() + i * vocab;
    const float* o = other.data() + i * vocab;
    const std::vector<double> p = LogSoftmax(r, vocab), q = LogSoftmax(o, vocab);
    double kl = 0;
    for (size_t v = 0; v < vocab; ++v) {
      kl += std::exp(p[v]) * (p[v] - q[v]);
      squares += (double(o[v]) - r[v]) * (double(o[v]) - r[v]);
    }
    d.mean_kl += kl / n;
    d.top1 += (argmax(r) == argmax(o)) / static_cast<double>(n);
  }
  d.logit_rms = std::sqrt(squares / ref.size());
  return d;
}

}  // namespace ember::testing
