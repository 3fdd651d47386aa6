// Generate: see generate.h.
#include "runtime/generate.h"

namespace ember {

Status Generate(Session& session, Sampler& sampler, const int32_t* prompt,
                size_t n_prompt, size_t max_new, TokenCallback callback, void* user,
                GenerateResult* result) {
  *result = GenerateResult();
  if (n_prompt == 0) return InvalidArgument("the prompt has no tokens");
  if (session.model().config().mask == AttentionMask::kBidirectional) {
    return InvalidArgument(
        "generation needs a causal model; this one's attention is bidirectional (an "
        "encoder): run it over the whole input once (ember_prefill, `ember logits`)");
  }
  EMBER_RETURN_IF_ERROR(session.Prefill(prompt, n_prompt));
  const Tokenizer& tokenizer = session.model().tokenizer();
  int32_t prev = prompt[n_prompt - 1];
  while (result->generated < max_new) {
    int32_t next;
    EMBER_RETURN_IF_ERROR(sampler.Sample(session.logits(), &next));
    if (tokenizer.IsStop(next)) {
      result->stop = StopReason::kEndOfText;
      return Status::Ok();
    }
    ++result->generated;
    if (!callback(user, next, tokenizer.Decode(prev, next))) {
      result->stop = StopReason::kCallback;
      return Status::Ok();
    }
    prev = next;
    if (result->generated == max_new) break;
    if (session.position() >= session.max_context()) {
      if (!session.plan().context_shift) {
        result->stop = StopReason::kContextFull;
        return Status::Ok();
      }
      EMBER_RETURN_IF_ERROR(session.MakeRoom(1));
    }
    EMBER_RETURN_IF_ERROR(session.Decode(next));
  }
  result->stop = StopReason::kMaxTokens;
  return Status::Ok();
}

}  // namespace ember
