// Speculator: see speculator.h.
#include "runtime/speculative/speculator.h"

#include <cmath>
#include <cstring>

#include "runtime/checked_math.h"
#include "runtime/text/tokenizer.h"

namespace ember {
namespace {

constexpr size_t kAlign = 64;

// Sizes from a context a file declares: SIZE_MAX on overflow, which the arena refuses.
size_t Mul(size_t a, size_t b) {
  size_t r = 0;
  return CheckedMul(a, b, &r) ? r : SIZE_MAX;
}
size_t Add(size_t a, size_t b) {
  size_t r = 0;
  return CheckedAdd(a, b, &r) ? r : SIZE_MAX;
}

size_t AlignUp(size_t n) {
  return n > SIZE_MAX - (kAlign - 1) ? SIZE_MAX : (n + kAlign - 1) / kAlign * kAlign;
}

// The region's layout: the lookup table, the drafted tokens, q rows, the p row.
struct RegionLayout {
  size_t table_entries = 0, drafted = 0, q = 0, p = 0, total = 0;
};

RegionLayout LayOut(size_t vocab, size_t max_context, size_t draft_max) {
  RegionLayout l;
  l.table_entries = NgramLookup::TableEntries(max_context);
  size_t at = AlignUp(Mul(l.table_entries, sizeof(uint32_t)));
  l.drafted = at;
  at = AlignUp(Add(at, (kMaxDraftTokens + 1) * sizeof(int32_t)));
  l.q = at;
  at = AlignUp(Add(at, Mul(Mul(draft_max, vocab), sizeof(float))));
  l.p = at;
  l.total = Add(at, Mul(vocab, sizeof(float)));
  return l;
}

// The cost of verifying one more drafted token, against a target decode: a verifying
// pass of k + 1 tokens reads the weights once, as a decode does, and computes k + 1
// rows (a 1B-class q8 model on one Zen 5 core: 4 to 6 ms a token over a 38 ms pass;
// docs/speculative.md).
constexpr float kVerifyCost = 0.12f;
// While the estimate says drafting does not pay, a round drafts one token anyway now
// and then, so that the estimate follows the text (a lookup drafts whenever it finds a
// match): after 8 rounds, then after twice as many each time the probe is rejected (at
// most 128; a draft model has to catch up on the rounds it skipped), 8 again once one is
// accepted.
constexpr uint32_t kFirstProbe = 8, kLastProbe = 128;

}  // namespace

size_t SpeculativeBytes(size_t vocab_size, size_t max_context, size_t draft_max) {
  return draft_max == 0 ? 0 : LayOut(vocab_size, max_context, draft_max).total;
}

Result<Speculator> Speculator::Create(Session* target) {
  const SessionPlan& plan = target->plan();
  if (plan.draft_max == 0 || target->speculative_memory() == nullptr) {
    return InvalidArgument(
        "speculative decoding needs a session planned for it (draft_max > 0)");
  }
  const size_t vocab = target->model().config().vocab_size;
  const RegionLayout l = LayOut(vocab, plan.max_context, plan.draft_max);
  uint8_t* base = target->speculative_memory();
  Speculator s;
  s.target_ = target;
  s.draft_max_ = static_cast<uint32_t>(plan.draft_max);
  s.lookup_ = NgramLookup(reinterpret_cast<uint32_t*>(base), l.table_entries);
  s.lookup_.Clear();
  s.drafted_ = reinterpret_cast<int32_t*>(base + l.drafted);
  s.q_ = reinterpret_cast<float*>(base + l.q);
  s.p_ = reinterpret_cast<float*>(base + l.p);
  return s;
}

Status Speculator::SetLookup(uint32_t ngram) {
  if (ngram > kMaxLookupNgram) {
    return InvalidArgument("lookup n-grams of %u tokens: at most %u", ngram,
                           kMaxLookupNgram);
  }
  lookup_ngram_ = ngram;
  lookup_.Clear();
  target_shifts_ = target_->shifts();
  return Status::Ok();
}

Status Speculator::SetDraftMax(uint32_t draft_max) {
  if (draft_max == 0 || draft_max > target_->plan().draft_max) {
    return InvalidArgument("draft length %u: the session was planned for 1 to %zu",
                           draft_max, target_->plan().draft_max);
  }
  draft_max_ = draft_max;
  if (draft_min_ > draft_max_) draft_min_ = draft_max_;
  return Status::Ok();
}

Status Speculator::SetDraftMin(uint32_t draft_min) {
  if (draft_min > draft_max_) {
    return InvalidArgument("at least %u drafted tokens: more than the most, %u",
                           draft_min, draft_max_);
  }
  draft_min_ = draft_min;
  return Status::Ok();
}

Status Speculator::SetDraft(Session* draft) {
  draft_ = nullptr;
  if (draft == nullptr) return Status::Ok();
  const Tokenizer& a = target_->model().tokenizer();
  const Tokenizer& b = draft->model().tokenizer();
  if (a.vocab_size() != b.vocab_size() ||
      target_->model().config().vocab_size != draft->model().config().vocab_size) {
    return InvalidArgument("the draft model's vocabulary has %u tokens; the target's %u",
                           draft->model().config().vocab_size,
                           target_->model().config().vocab_size);
  }
  if (a.bos_id() != b.bos_id() || a.eos_id() != b.eos_id() || a.unk_id() != b.unk_id() ||
      a.pad_id() != b.pad_id()) {
    return InvalidArgument(
        "the draft model's special ids (bos %d, eos %d, unk %d, pad %d) differ from the "
        "target's (%d, %d, %d, %d)",
        b.bos_id(), b.eos_id(), b.unk_id(), b.pad_id(), a.bos_id(), a.eos_id(),
        a.unk_id(), a.pad_id());
  }
  for (uint32_t id = 0; id < a.vocab_size(); ++id) {
    if (a.piece(id) != b.piece(id) || a.type(id) != b.type(id) ||
        a.IsStop(int32_t(id)) != b.IsStop(int32_t(id))) {
      return InvalidArgument(
          "the draft model's token %u differs from the target's (its piece, type or "
          "whether it stops): the two models must share one vocabulary",
          id);
    }
  }
  if (draft->model().config().mask != AttentionMask::kCausal ||
      draft->model().config().embeds()) {
    return InvalidArgument("the draft model must be a causal language model");
  }
  if (draft->max_context() < target_->max_context()) {
    return InvalidArgument(
        "the draft session's context (%zu) is shorter than the target's (%zu)",
        draft->max_context(), target_->max_context());
  }
  draft_ = draft;
  // A draft pass costs what reading its weights costs, against the target's.
  const double target_bytes = static_cast<double>(target_->model().file_bytes());
  draft_cost_ = target_bytes > 0
                    ? static_cast<float>(draft->model().file_bytes() / target_bytes)
                    : 0.5f;
  draft_->Reset();
  return Status::Ok();
}

size_t Speculator::ChooseLength(float acceptance, float cost, size_t k_max) {
  const float a = acceptance < 0.0f ? 0.0f : acceptance > 0.98f ? 0.98f : acceptance;
  size_t best = 0;
  float best_rate = 1.0f;  // k = 0: one token per decode
  float expected = 1.0f, power = 1.0f;
  for (size_t k = 1; k <= k_max; ++k) {
    power *= a;
    expected += power;  // 1 + a + ... + a^k
    const float rate = expected / (1.0f + static_cast<float>(k) * cost);
    if (rate > best_rate) best = k, best_rate = rate;
  }
  return best;
}

// Brings the draft session to the target's tokens then `pending`: keeps the longest
// prefix they share, prefills the rest.
Status Speculator::SyncDraft(int32_t pending) {
  const int32_t* want = target_->tokens();
  const size_t n = target_->position();
  const int32_t* have = draft_->tokens();
  size_t common = 0;
  const size_t limit = draft_->position() < n ? draft_->position() : n;
  while (common < limit && have[common] == want[common]) ++common;
  if (common < draft_->position() && !draft_->Truncate(common).ok()) {
    // A sliding layer's ring no longer holds what a pass from there reads: start over.
    EMBER_RETURN_IF_ERROR(draft_->Truncate(0));
    common = 0;
  }
  if (common < n) {
    EMBER_RETURN_IF_ERROR(draft_->Prefill(want + common, n - common));
    ++stats_.draft_passes;
  }
  ++stats_.draft_passes;
  return draft_->Decode(pending);
}

size_t Speculator::DraftWithModel(const Sampler& sampler, int32_t pending, size_t k) {
  if (target_->position() + k > draft_->max_context()) return 0;
  draft_status_ = SyncDraft(pending);
  if (!draft_status_.ok()) return 0;
  const size_t vocab = target_->model().config().vocab_size;
  Sampler drafter(sampler.options(), vocab, draft_->sampler_scratch());
  drafter.set_rng_state(draft_rng_ ? draft_rng_ : sampler.options().seed ^ 0x9e3779b9u);
  size_t n = 0;
  while (n < k) {
    int32_t d = -1;
    if (drafter.greedy()) {
      draft_status_ =
          drafter.Sample(draft_->logits(), draft_->tokens(), draft_->position(), &d);
    } else {
      float* q = q_ + n * vocab;
      draft_status_ = drafter.Probabilities(draft_->logits(), draft_->tokens(),
                                            draft_->position(), q);
      if (draft_status_.ok()) d = drafter.DrawFrom(q);
    }
    if (!draft_status_.ok() || d < 0) break;
    drafted_[n++] = d;
    if (n == k) break;
    draft_status_ = draft_->Decode(d);
    ++stats_.draft_passes;
    if (!draft_status_.ok()) break;
  }
  draft_rng_ = drafter.rng_state();
  draft_q_ = !drafter.greedy();
  return n;
}

size_t Speculator::Draft(const Sampler& sampler, int32_t pending, size_t k) {
  draft_q_ = false;
  if (k == 0) return 0;
  if (drafter_) {
    const size_t n = drafter_(drafter_user_, target_->tokens(), target_->position(),
                              pending, k, drafted_);
    return n < k ? n : k;
  }
  if (lookup_ngram_ > 0) {
    if (target_->shifts() != target_shifts_) {  // positions moved: index again
      lookup_.Clear();
      target_shifts_ = target_->shifts();
    }
    const size_t n = lookup_.Propose(target_->tokens(), target_->position(), pending,
                                     lookup_ngram_, k, drafted_);
    if (n > 0 || draft_ == nullptr) return n;
  }
  return draft_ ? DraftWithModel(sampler, pending, k) : 0;
}

Status Speculator::Round(Sampler& sampler, int32_t pending, size_t max_draft,
                         int32_t* out, size_t* n_out) {
  *n_out = 0;
  const size_t vocab = target_->model().config().vocab_size;
  const float cost = kVerifyCost + (draft_ && !drafter_ ? draft_cost_ : 0.0f);
  size_t k = ChooseLength(accepted_ / trials_, cost, draft_max_);
  bool probe = false;
  if (k == 0) {
    probe = lookup_ngram_ > 0 || ++skipped_ >= probe_after_;
    if (probe) k = 1;
  }
  if (k < draft_min_) k = draft_min_;
  if (k > max_draft) k = max_draft;
  draft_status_ = Status::Ok();
  const size_t n = Draft(sampler, pending, k);
  EMBER_RETURN_IF_ERROR(draft_status_);
  const size_t s = target_->position();
  ++stats_.rounds;
  // The pass: pending, then the drafts after it.
  memmove(drafted_ + 1, drafted_, n * sizeof(int32_t));
  drafted_[0] = pending;
  EMBER_RETURN_IF_ERROR(n > 0 ? target_->Verify(drafted_, n + 1)
                              : target_->Decode(pending));
  const int32_t* drafts = drafted_ + 1;
  size_t accepted = 0;
  int32_t next = -1;
  for (size_t i = 0; i <= n; ++i) {
    const float* logits = target_->logits_at(n > 0 ? i : 0);
    const int32_t* recent = target_->tokens();
    const size_t n_recent = s + 1 + i;
    if (i == n || sampler.greedy()) {
      // The target's own choice (greedy: Sample's very computation, so the text is
      // plain decoding's); after every draft is accepted, the bonus token.
      EMBER_RETURN_IF_ERROR(sampler.Sample(logits, recent, n_recent, &next));
      if (i < n && next == drafts[i]) {
        ++accepted;
        continue;
      }
      break;
    }
    // Speculative sampling: accept d with probability min(1, p(d) / q(d)).
    EMBER_RETURN_IF_ERROR(sampler.Probabilities(logits, recent, n_recent, p_));
    const int32_t d = drafts[i];
    const float q_d = draft_q_ ? q_[i * vocab + d] : 1.0f;
    const float coin = sampler.RandomFloat();
    if (coin * q_d < p_[d]) {
      ++accepted;
      continue;
    }
    // Rejected: draw from max(0, p - q), normalized (p with d removed for a lookup).
    if (draft_q_) {
      const float* q = q_ + i * vocab;
      for (size_t t = 0; t < vocab; ++t) p_[t] = p_[t] > q[t] ? p_[t] - q[t] : 0.0f;
    } else {
      p_[d] = 0.0f;
    }
    next = sampler.DrawFrom(p_);
    if (next < 0) {  // rounding left no mass: the target's distribution itself
      EMBER_RETURN_IF_ERROR(sampler.Sample(logits, recent, n_recent, &next));
    }
    break;
  }
  if (probe && lookup_ngram_ == 0) {
    skipped_ = 0;
    probe_after_ = accepted > 0                ? kFirstProbe
                   : probe_after_ < kLastProbe ? 2 * probe_after_
                                               : kLastProbe;
  }
  if (n > 0) {
    ++stats_.verified;
    stats_.drafted += n;
    stats_.accepted += accepted;
    // Each drafted token is accepted with some rate a, until the first rejection: a
    // running count of both over about the last eight passes estimates it.
    accepted_ = accepted_ * 0.875f + static_cast<float>(accepted);
    trials_ = trials_ * 0.875f + static_cast<float>(accepted + (accepted < n ? 1 : 0));
    EMBER_RETURN_IF_ERROR(target_->Truncate(s + 1 + accepted));
  }
  memcpy(out, drafts, accepted * sizeof(int32_t));
  out[accepted] = next;
  *n_out = accepted + 1;
  return Status::Ok();
}

}  // namespace ember
