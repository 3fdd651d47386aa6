// Generate: see generate.h.
#include "runtime/generate.h"

namespace ember {
namespace {

bool IsExtraStop(const GenerateOptions& o, int32_t id) {
  for (size_t i = 0; i < o.num_stop_ids; ++i) {
    if (o.stop_ids[i] == id) return true;
  }
  return false;
}

}  // namespace

Status Generate(Session& session, Sampler& sampler, const int32_t* prompt,
                size_t n_prompt, const GenerateOptions& options, TokenCallback callback,
                void* user, GenerateResult* result) {
  *result = GenerateResult();
  if (n_prompt == 0 && !session.logits_valid()) {
    return InvalidArgument(
        "the prompt has no tokens, and the session no logits to go on "
        "from");
  }
  if (session.model().config().mask == AttentionMask::kBidirectional) {
    return InvalidArgument(
        "generation needs a causal model; this one's attention is bidirectional (an "
        "encoder): run it over the whole input once (ember_prefill, `ember logits`)");
  }
  if (n_prompt > 0) EMBER_RETURN_IF_ERROR(session.Prefill(prompt, n_prompt));
  const Tokenizer& tokenizer = session.model().tokenizer();
  StopStrings* stop_strings = options.stop_strings;
  if (stop_strings && stop_strings->size() == 0) stop_strings = nullptr;
  if (stop_strings) stop_strings->Reset();
  int32_t prev =
      n_prompt ? prompt[n_prompt - 1] : session.tokens()[session.position() - 1];
  result->stop = StopReason::kMaxTokens;
  const TokenConstraint* constraint = options.constraint;
  if (constraint) result->complete = constraint->can_end(constraint->self);
  Speculator* speculator = options.speculator;
  if (speculator && (constraint || !speculator->active())) speculator = nullptr;
  // A speculative round's tokens: queue[at, queued) still to emit. The session has
  // fed all but the last; stopping before them rolls it back to where plain decoding
  // would stand (the token emitted last not yet fed).
  int32_t queue[kMaxDraftTokens + 1];
  size_t at = 0, queued = 0;
  const auto roll_back = [&]() -> Status {
    const size_t unfed = queued - at;
    return unfed > 0 ? session.Truncate(session.position() - unfed) : Status::Ok();
  };
  while (result->generated < options.max_new) {
    int32_t next;
    if (at < queued) {
      next = queue[at++];
    } else {
      const uint32_t* allowed = nullptr;
      if (constraint) {
        EMBER_RETURN_IF_ERROR(constraint->allowed(constraint->self, &allowed));
      }
      EMBER_RETURN_IF_ERROR(sampler.Sample(session.logits(), session.tokens(),
                                           session.position(), allowed, &next));
    }
    if (tokenizer.IsStop(next) || IsExtraStop(options, next)) {
      result->stop = StopReason::kEndOfText;
      result->stop_token = next;
      EMBER_RETURN_IF_ERROR(roll_back());
      break;
    }
    ++result->generated;
    std::string_view text = tokenizer.Decode(prev, next);
    if (constraint) {
      EMBER_RETURN_IF_ERROR(constraint->accept(constraint->self, next, text));
      result->complete = constraint->can_end(constraint->self);
    }
    const bool stopped = stop_strings && stop_strings->Feed(text, &text);
    if (!callback(user, next, text)) {
      result->stop = StopReason::kCallback;
      return roll_back();
    }
    if (stopped) {
      result->stop = StopReason::kStopString;
      return roll_back();
    }
    prev = next;
    if (result->generated == options.max_new) {
      EMBER_RETURN_IF_ERROR(roll_back());
      break;
    }
    if (at < queued) continue;  // fed by the round that drafted it
    if (session.position() >= session.max_context()) {
      if (!session.plan().context_shift) {
        result->stop = StopReason::kContextFull;
        break;
      }
      EMBER_RETURN_IF_ERROR(session.MakeRoom(1));
    }
    if (speculator) {
      // Drafts that fit the context and the tokens still to emit (a round emits one
      // more than it drafts).
      size_t max_draft = session.max_context() - session.position() - 1;
      const size_t left = options.max_new - result->generated - 1;
      if (max_draft > left) max_draft = left;
      at = 0;
      EMBER_RETURN_IF_ERROR(speculator->Round(sampler, next, max_draft, queue, &queued));
      continue;
    }
    EMBER_RETURN_IF_ERROR(session.Decode(next));
  }
  if (stop_strings) {
    const std::string_view rest = stop_strings->Flush();
    if (!rest.empty() && !callback(user, -1, rest)) result->stop = StopReason::kCallback;
  }
  return Status::Ok();
}

}  // namespace ember
