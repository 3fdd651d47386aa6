/* ember_speculative.h: speculative decoding through the C API (C99; included by
 * ember.h, which is the one to include). ember_generate and ember_chat_generate draft
 * several tokens after each one sampled, by prompt lookup (n-grams of the context: no
 * second model) or by a smaller draft model sharing the vocabulary, and verify them in
 * one pass of the session's model: greedy text is exactly plain decoding's, and sampled
 * text keeps the model's distribution. The session must be created with
 * ember_session_options.draft_max > 0 (its arena then holds the drafting's tables; see
 * ember_arena_bytes). A grammar turns it off for the generations it constrains. No call
 * allocates during generation. Appended in 0.3. */
#ifndef EMBER_EMBER_SPECULATIVE_H_
#define EMBER_EMBER_SPECULATIVE_H_

#include <stddef.h>
#include <stdint.h>

#include "ember.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Prompt lookup with n-grams of up to `ngram` tokens (1 to 8; 0: off). */
ember_status ember_session_set_lookup(ember_session* session, uint32_t ngram);

/* Drafts with `draft`, a session over a smaller model (or a lower-precision copy of the
 * same one) with the same vocabulary: the same size, special ids and pieces, else
 * EMBER_INVALID_ARGUMENT naming the difference; its context at least the session's.
 * NULL detaches it. The draft session must outlive the attachment and serve nothing
 * else meanwhile (its position follows the session's). With a lookup too, a lookup hit
 * drafts and the draft model drafts when the lookup finds nothing. */
ember_status ember_session_set_draft(ember_session* session, ember_session* draft);

/* Drafted tokens per pass at most (1 to the session's draft_max, the default); the
 * length in use adapts to the recent acceptance rate below it. */
ember_status ember_session_set_draft_max(ember_session* session, uint32_t draft_max);

typedef struct ember_speculative_stats {
  uint64_t rounds;       /* target passes after a sampled token */
  uint64_t verified;     /* of them, passes that verified drafted tokens */
  uint64_t drafted;      /* tokens drafted */
  uint64_t accepted;     /* drafted tokens accepted */
  uint64_t draft_passes; /* the draft model's forward passes */
} ember_speculative_stats;

/* The counts since the first ember_session_set_lookup or _set_draft (or the last
 * reset, nonzero `reset` zeroing them after the read). */
ember_status ember_session_speculative_stats(ember_session* session,
                                             ember_speculative_stats* stats, int reset);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EMBER_EMBER_SPECULATIVE_H_ */
