// Sampler: penalties, then argmax, or softmax(logits / T) restricted to the top-k, the
// top-p nucleus and the min-p floor.
#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace ember {

size_t Sampler::ScratchBytes(size_t vocab_size) {
  return vocab_size * (sizeof(Candidate) + sizeof(float));
}

Status Sampler::CheckOptions(const SamplerOptions& o) {
  if (!(o.temperature >= 0.0f) || std::isinf(o.temperature)) {
    return InvalidArgument("temperature %g: not a finite number >= 0 (0 is greedy)",
                           o.temperature);
  }
  if (!(o.top_p > 0.0f && o.top_p <= 1.0f)) {
    return InvalidArgument("top_p %g: outside (0, 1] (1 is off)", o.top_p);
  }
  if (!(o.min_p >= 0.0f && o.min_p <= 1.0f)) {
    return InvalidArgument("min_p %g: outside [0, 1] (0 is off)", o.min_p);
  }
  if (!(o.repeat_penalty > 0.0f) || std::isinf(o.repeat_penalty)) {
    return InvalidArgument("repeat penalty %g: not a finite number > 0 (1 is off)",
                           o.repeat_penalty);
  }
  if (!std::isfinite(o.frequency_penalty) || !std::isfinite(o.presence_penalty)) {
    return InvalidArgument("frequency penalty %g or presence penalty %g is not finite",
                           o.frequency_penalty, o.presence_penalty);
  }
  if (o.repeat_last_n < -1) {
    return InvalidArgument("repeat_last_n %d: below -1 (0 is off, -1 the whole context)",
                           o.repeat_last_n);
  }
  return Status::Ok();
}

Sampler::Sampler(const SamplerOptions& options, size_t vocab_size, void* scratch)
    : options_(options),
      vocab_size_(vocab_size),
      candidates_(static_cast<Candidate*>(scratch)),
      // No scratch: a session of an embedding model, which never has logits to sample.
      penalized_(scratch == nullptr
                     ? nullptr
                     : reinterpret_cast<float*>(static_cast<uint8_t*>(scratch) +
                                                vocab_size * sizeof(Candidate))),
      argmax_(kernels::ChooseKernels().argmax),
      state_(options.seed) {
  if (!CheckOptions(options).ok() || options.temperature < kGreedyBelowTemperature) {
    options_.temperature = 0.0f;
  }
}

float Sampler::RandomFloat() {
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  const uint32_t bits = static_cast<uint32_t>((state_ * 0x2545F4914F6CDD1Dull) >> 32);
  return static_cast<float>(bits >> 8) / 16777216.0f;
}

// The first maximum wins ties; NaN logits are skipped. Vectorized: a scalar scan of a
// 32000-token vocabulary took about 1 % of a stories110M q4 decode step.
int32_t Sampler::Greedy(const float* logits) const {
  size_t best = 0;
  if (vocab_size_ > 0) argmax_(logits, vocab_size_, &best);
  return static_cast<int32_t>(best);
}

int32_t Sampler::GreedyAllowed(const float* logits, const uint32_t* allowed) const {
  float best = -INFINITY;
  int32_t best_id = -1;
  for (size_t first = 0; first < vocab_size_; first += 32) {
    const size_t n = std::min<size_t>(32, vocab_size_ - first);
    uint32_t bits = allowed[first >> 5] & (n == 32 ? ~0u : (1u << n) - 1);
    if (bits == ~0u) {  // a whole word allowed: a plain scan
      for (size_t i = first; i < first + 32; ++i) {
        if (logits[i] > best || best_id < 0) best = logits[i], best_id = int32_t(i);
      }
      continue;
    }
    for (; bits != 0; bits &= bits - 1) {
      const size_t i = first + static_cast<size_t>(__builtin_ctz(bits));
      if (logits[i] > best || best_id < 0) best = logits[i], best_id = int32_t(i);
    }
  }
  return best_id;
}

namespace {

// Ranks a before b: higher value first, then lower id.
struct Ranks {
  template <class C>
  bool operator()(const C& a, const C& b) const {
    return a.prob > b.prob || (a.prob == b.prob && a.id < b.id);
  }
};

}  // namespace

// The k highest logits (NaN skipped) into candidates_[0, n), n <= k, ranked: one pass
// over the vocabulary with a heap whose front is the worst kept. Returns n.
size_t Sampler::TopKLogits(const float* logits, size_t k) {
  Candidate* heap = candidates_;
  size_t n = 0;
  for (size_t i = 0; i < vocab_size_; ++i) {
    const float v = logits[i];
    if (n == k ? !(v > heap[0].prob) : !(v > -INFINITY)) continue;  // not better, NaN, -inf
    const Candidate c{v, static_cast<int32_t>(i)};
    if (n < k) {
      heap[n++] = c;
      std::push_heap(heap, heap + n, Ranks());
    } else {
      std::pop_heap(heap, heap + n, Ranks());
      heap[n - 1] = c;
      std::push_heap(heap, heap + n, Ranks());
    }
  }
  std::sort_heap(heap, heap + n, Ranks());
  return n;
}

bool Sampler::penalizes() const {
  return options_.repeat_last_n != 0 &&
         (options_.repeat_penalty != 1.0f || options_.frequency_penalty != 0.0f ||
          options_.presence_penalty != 0.0f);
}

// The logits with the penalties of the window's tokens, in penalized_. Counting needs no
// table of its own: candidates_[t].id counts token t (Draw overwrites them afterwards),
// set to 0 for the window's tokens first, so each pass is O(window).
const float* Sampler::Penalize(const float* logits, const int32_t* recent,
                               size_t n_recent) {
  const size_t window = options_.repeat_last_n < 0
                            ? n_recent
                            : std::min<size_t>(n_recent, options_.repeat_last_n);
  const int32_t* begin = recent + (n_recent - window);
  memcpy(penalized_, logits, vocab_size_ * sizeof(float));
  const auto in_vocab = [&](int32_t t) {
    return t >= 0 && static_cast<size_t>(t) < vocab_size_;
  };
  for (size_t i = 0; i < window; ++i) {
    if (in_vocab(begin[i])) candidates_[begin[i]].id = 0;
  }
  for (size_t i = 0; i < window; ++i) {
    if (in_vocab(begin[i])) ++candidates_[begin[i]].id;
  }
  for (size_t i = 0; i < window; ++i) {
    const int32_t t = begin[i];
    if (!in_vocab(t) || candidates_[t].id == 0) continue;  // not seen, or done
    float& l = penalized_[t];
    l = l > 0.0f ? l / options_.repeat_penalty : l * options_.repeat_penalty;
    l -= static_cast<float>(candidates_[t].id) * options_.frequency_penalty +
         options_.presence_penalty;
    candidates_[t].id = 0;
  }
  return penalized_;
}

Status Sampler::Sample(const float* logits, const int32_t* recent, size_t n_recent,
                       const uint32_t* allowed, int32_t* token) {
  *token = -1;
  EMBER_RETURN_IF_ERROR(CheckFinite(logits));
  if (penalizes() && n_recent > 0) logits = Penalize(logits, recent, n_recent);
  if (allowed != nullptr && options_.temperature <= 0.0f) {
    // Greedy: the best allowed logit, read in place (the first maximum wins, as Greedy's).
    *token = GreedyAllowed(logits, allowed);
    if (*token < 0) return InvalidArgument("no token is allowed: nothing to sample");
    return Status::Ok();
  }
  if (allowed != nullptr) {
    // The tokens not allowed get -inf (in penalized_), which Draw skips; a word of bits
    // at a time (most are all set or all clear).
    if (logits != penalized_) memcpy(penalized_, logits, vocab_size_ * sizeof(float));
    bool any = false;
    for (size_t first = 0; first < vocab_size_; first += 32) {
      const size_t n = std::min<size_t>(32, vocab_size_ - first);
      const uint32_t bits = allowed[first >> 5] & (n == 32 ? ~0u : (1u << n) - 1);
      if (bits == 0) {
        std::fill(penalized_ + first, penalized_ + first + n, -INFINITY);
        continue;
      }
      any = true;
      if (bits == ~0u) continue;
      for (size_t i = 0; i < n; ++i) {
        if (!((bits >> i) & 1)) penalized_[first + i] = -INFINITY;
      }
    }
    if (!any) return InvalidArgument("no token is allowed: nothing to sample");
    logits = penalized_;
  }
  *token = Draw(logits);
  return Status::Ok();
}

Status Sampler::CheckFinite(const float* logits) const {
  size_t bad = 0;  // NaN or infinite: v - v is NaN for them, 0 otherwise
  for (size_t i = 0; i < vocab_size_; ++i) bad += !(logits[i] - logits[i] == 0.0f);
  if (bad == 0) return Status::Ok();
  return InvalidModel(
      "%zu of the %zu logits are NaN or infinite: nothing to sample from (the weights "
      "may hold NaN or Inf: `ember inspect --check-weights` scans them)",
      bad, vocab_size_);
}

Status Sampler::Probabilities(const float* logits, const int32_t* recent, size_t n_recent,
                              float* probs) {
  EMBER_RETURN_IF_ERROR(CheckFinite(logits));
  if (penalizes() && n_recent > 0) logits = Penalize(logits, recent, n_recent);
  std::fill(probs, probs + vocab_size_, 0.0f);
  if (greedy()) {
    probs[Greedy(logits)] = 1.0f;
    return Status::Ok();
  }
  float mass = 0.0f;
  const size_t n = Keep(logits, &mass);
  for (size_t i = 0; i < n; ++i) probs[candidates_[i].id] = candidates_[i].prob / mass;
  return Status::Ok();
}

int32_t Sampler::DrawFrom(const float* weights) {
  float sum = 0.0f;
  for (size_t i = 0; i < vocab_size_; ++i) sum += weights[i];
  if (!(sum > 0.0f)) return -1;
  const float r = RandomFloat() * sum;
  float cdf = 0.0f;
  int32_t last = -1;
  for (size_t i = 0; i < vocab_size_; ++i) {
    if (weights[i] <= 0.0f) continue;
    cdf += weights[i];
    last = static_cast<int32_t>(i);
    if (r < cdf) return last;
  }
  return last;
}

// Sample() once the logits are known to be finite: Keep's candidates, then one coin.
int32_t Sampler::Draw(const float* logits) {
  if (options_.temperature <= 0.0f) return Greedy(logits);
  float mass = 0.0f;
  const size_t n = Keep(logits, &mass);
  return Pick(n, RandomFloat() * mass);
}

int32_t Sampler::Pick(size_t n, float r) const {
  float cdf = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    cdf += candidates_[i].prob;
    if (r < cdf) return candidates_[i].id;
  }
  return candidates_[n - 1].id;
}

// The tokens Draw may pick into candidates_[0, n) with their weights (summing to *mass):
// temperature, then top-k, top-p and min-p.
size_t Sampler::Keep(const float* logits, float* mass_out) {
  const float inv_t = 1.0f / options_.temperature;
  const auto by_prob = Ranks();
  size_t n = vocab_size_;
  float mass = 1.0f;
  if (options_.top_k > 0 && options_.top_k < n) {
    // Top-k first, by logit (exp is monotonic): only the k kept tokens need their
    // exp, and no sort of the vocabulary. Their weights exp((l - max) / T) are left
    // unnormalized (mass is their sum), since sampling and top-p only compare them
    // with fractions of the mass. Over the whole vocabulary (an exp for each of
    // Llama's 32000 tokens, the normalization and a partial sort), sampling took about
    // 11 % of a stories110M q4 decode step.
    n = TopKLogits(logits, options_.top_k);
    const float max = candidates_[0].prob;
    mass = 0.0f;
    for (size_t i = 0; i < n; ++i) {
      candidates_[i].prob = std::exp((candidates_[i].prob - max) * inv_t);
      mass += candidates_[i].prob;
    }
  } else {
    // probs = softmax(logits / T), as llama2.c computes it; tokens a grammar does not
    // allow (-inf) are left out.
    float max = -INFINITY;
    for (size_t i = 0; i < vocab_size_; ++i) max = logits[i] > max ? logits[i] : max;
    float sum = 0.0f;
    n = 0;
    for (size_t i = 0; i < vocab_size_; ++i) {
      if (!(logits[i] > -INFINITY)) continue;
      const float p = std::exp((logits[i] - max) * inv_t);
      candidates_[n++] = {p, static_cast<int32_t>(i)};
      sum += p;
    }
    for (size_t i = 0; i < n; ++i) candidates_[i].prob /= sum;
  }
  const bool top_p = options_.top_p > 0.0f && options_.top_p < 1.0f;
  const bool min_p = options_.min_p > 0.0f;
  const bool ranked = options_.top_k > 0 && options_.top_k < vocab_size_;  // top-k sorted
  if (!top_p && !ranked) {
    // llama2.c's sample_mult over the whole vocabulary, in id order; min-p keeps the
    // tokens at or above min_p times the largest probability, renormalized.
    if (min_p) {
      float largest = 0.0f;
      for (size_t i = 0; i < n; ++i) largest = std::max(largest, candidates_[i].prob);
      const float floor = options_.min_p * largest;
      size_t kept = 0;
      mass = 0.0f;
      for (size_t i = 0; i < n; ++i) {
        if (candidates_[i].prob < floor) continue;
        candidates_[kept++] = candidates_[i];
        mass += candidates_[i].prob;
      }
      n = kept;
    }
    *mass_out = mass;
    return n;
  }
  if (top_p) {
    if (!ranked) {
      // llama2.c's sample_topp: candidates below (1 - p) / (n - 1) cannot be in the
      // nucleus; drop them before sorting.
      const float cutoff = (1.0f - options_.top_p) / static_cast<float>(n - 1);
      size_t kept = 0;
      for (size_t i = 0; i < n; ++i) {
        if (candidates_[i].prob >= cutoff) candidates_[kept++] = candidates_[i];
      }
      n = kept > 0 ? kept : n;  // a tiny top_p can filter out everything
      std::sort(candidates_, candidates_ + n, by_prob);
    }
    float cumulative = 0.0f;
    size_t last = n - 1;
    for (size_t i = 0; i < n; ++i) {
      cumulative += candidates_[i].prob;
      if (cumulative > options_.top_p * mass) {
        last = i;
        break;
      }
    }
    n = last + 1;
    mass = cumulative;
  }
  if (min_p) {
    // The candidates are ranked here: the floor cuts a tail.
    const float floor = options_.min_p * candidates_[0].prob;
    size_t kept = 1;
    while (kept < n && candidates_[kept].prob >= floor) ++kept;
    for (size_t i = kept; i < n; ++i) mass -= candidates_[i].prob;
    n = kept;
  }
  *mass_out = mass;
  return n;
}

}  // namespace ember
