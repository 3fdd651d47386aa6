// Speculator: speculative decoding for one target session. Each round drafts up to k
// tokens after the token just sampled (by prompt lookup, NgramLookup, or by a smaller
// draft model's own session), runs them through the target in one pass
// (Session::Verify), keeps the longest prefix the target agrees with plus one token of
// its own, and rolls the cache back past the rest (Session::Truncate). Greedy output is
// the target's token for token; sampled output keeps the target's distribution
// (speculative sampling's rule: accept a drafted d with probability min(1, p(d) / q(d)),
// else draw from max(0, p - q) normalized; a lookup's q is 1 at d). Its buffers are the
// target's arena region for it (SessionOptions::draft_max); nothing here allocates.
#ifndef EMBER_RUNTIME_SPECULATIVE_SPECULATOR_H_
#define EMBER_RUNTIME_SPECULATIVE_SPECULATOR_H_

#include <cstddef>
#include <cstdint>

#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/speculative/ngram_lookup.h"
#include "runtime/status.h"

namespace ember {

inline constexpr uint32_t kMaxDraftTokens = 32;

// Bytes of the arena region a session plans for speculation with up to draft_max
// drafted tokens per pass (0: none).
size_t SpeculativeBytes(size_t vocab_size, size_t max_context, size_t draft_max);

struct SpeculativeStats {
  uint64_t rounds = 0;        // target passes after a sampled token (verifying or plain)
  uint64_t verified = 0;      // of them, passes that verified at least one drafted token
  uint64_t drafted = 0;       // tokens drafted
  uint64_t accepted = 0;      // drafted tokens the target accepted
  uint64_t draft_passes = 0;  // the draft model's forward passes
};

class Speculator {
 public:
  // Over `target`'s region (its SessionOptions::draft_max > 0), which must outlive it.
  // Drafts nothing until SetLookup or SetDraft.
  static Result<Speculator> Create(Session* target);
  Speculator() = default;

  // Prompt lookup with n-grams of up to `ngram` tokens (1..kMaxLookupNgram; 0: off).
  Status SetLookup(uint32_t ngram);
  // A draft model's session (null: off), which must outlive its use here and serve no
  // one else meanwhile. Its vocabulary must be the target's: the same size, special ids
  // and pieces (InvalidArgument naming the first difference). With both a draft and a
  // lookup, a lookup hit drafts and the draft model fills in the misses.
  Status SetDraft(Session* draft);
  // A drafter of the caller's (null: none): up to `max` tokens into out (returning how
  // many) to follow `pending` after the cached `history`; e.g. a multi-token-prediction
  // head, a retrieval index, or `ember bench --draft-oracle`. Its tokens are verified as
  // a lookup's (q is 1 at each). While set, it drafts instead of a lookup or a draft
  // model. It must not allocate if generation is to stay allocation-free.
  using DraftFn = size_t (*)(void* user, const int32_t* history, size_t n_history,
                             int32_t pending, size_t max, int32_t* out);
  void SetDrafter(DraftFn drafter, void* user) {
    drafter_ = drafter;
    drafter_user_ = user;
  }
  // Tokens drafted per pass at most (1..the session's draft_max); the length in use
  // adapts to the recent acceptance rate below it.
  Status SetDraftMax(uint32_t draft_max);
  uint32_t draft_max() const { return draft_max_; }
  // Tokens drafted per pass at least (0, the default: as the estimate says; at most
  // draft_max): a fixed length with draft_min = draft_max.
  Status SetDraftMin(uint32_t draft_min);
  bool active() const {
    return lookup_ngram_ > 0 || draft_ != nullptr || drafter_ != nullptr;
  }
  const SpeculativeStats& stats() const { return stats_; }
  void ResetStats() { stats_ = SpeculativeStats(); }

  // One round after `pending` was sampled from the target's logits (the session at
  // position s, pending not yet fed): drafts up to min(draft length, max_draft) tokens,
  // feeds pending and them in one pass, and puts the tokens that follow pending into
  // out[0, *n_out): the accepted drafts, then the target's own next token (n_out >= 1;
  // out holds max_draft + 1). The session then stands at s + *n_out, its logits those
  // out[*n_out - 1] was drawn from: as after plain decoding up to that token. With
  // max_draft 0 it is one plain decode and sample. The caller makes room for
  // max_draft + 1 positions first.
  Status Round(Sampler& sampler, int32_t pending, size_t max_draft, int32_t* out,
               size_t* n_out);

  // The draft length the acceptance rate so far suggests: the k maximizing expected
  // tokens per pass (1 - a^(k+1)) / (1 - a) over its cost 1 + k * c, c the cost of a
  // drafted token against a target decode (verifying it, and a draft model's pass).
  static size_t ChooseLength(float acceptance, float cost, size_t k_max);

 private:
  // Drafts into draft_ (and, when sampling with a draft model, q rows).
  size_t Draft(const Sampler& sampler, int32_t pending, size_t k);
  size_t DraftWithModel(const Sampler& sampler, int32_t pending, size_t k);
  Status SyncDraft(int32_t pending);

  Session* target_ = nullptr;
  Session* draft_ = nullptr;
  DraftFn drafter_ = nullptr;
  void* drafter_user_ = nullptr;
  NgramLookup lookup_;
  uint32_t lookup_ngram_ = 0;
  uint32_t draft_max_ = 0;
  uint32_t draft_min_ = 0;
  size_t target_shifts_ = 0;    // the target's shifts() when the lookup was indexed
  float accepted_ = 1.0f;       // running counts of drafted tokens accepted and tried:
  float trials_ = 2.0f;         // their ratio estimates a token's acceptance rate
  uint32_t skipped_ = 0;        // rounds without a draft since the last probe
  uint32_t probe_after_ = 8;    // rounds to skip before the next probe
  float draft_cost_ = 0.0f;     // a draft model's pass against the target's
  uint64_t draft_rng_ = 0;      // the draft sampler's generator between rounds
  bool draft_q_ = false;        // q rows hold the draft model's probabilities
  Status draft_status_;         // a draft model's failure, returned by Round
  int32_t* drafted_ = nullptr;  // kMaxDraftTokens + 1
  float* q_ = nullptr;          // (draft_max, vocab): the draft's probabilities
  float* p_ = nullptr;          // (vocab): the target's, then the residual
  SpeculativeStats stats_;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_SPECULATIVE_SPECULATOR_H_
