// LazyConstraint: see lazy_constraint.h.
#include "runtime/grammar/lazy_constraint.h"

#include <cstring>

namespace ember::grammar {

Status LazyConstraint::Init(GrammarConstraint* inner, const LazyTrigger& trigger,
                            const Tokenizer& tokenizer) {
  if (trigger.text.empty() || trigger.text.size() > kMaxTrigger) {
    return InvalidArgument("lazy grammar: a trigger of 1 to %zu bytes, not %zu",
                           kMaxTrigger, trigger.text.size());
  }
  if (trigger.include && !trigger.at_start) {
    return InvalidArgument("lazy grammar: a trigger the grammar includes must be at_start");
  }
  inner_ = inner;
  memcpy(trigger_, trigger.text.data(), trigger.text.size());
  trigger_size_ = trigger.text.size();
  at_start_ = trigger.at_start;
  include_ = trigger.include;
  // A control token adds no bytes to the text: it opens by its id.
  trigger_id_ = -1;
  const uint32_t vocab = tokenizer.vocab_size();
  for (uint32_t id = 0; id < vocab; ++id) {
    if (tokenizer.piece(id) == trigger.text &&
        tokenizer.Decode(static_cast<int32_t>(vocab), static_cast<int32_t>(id)).empty()) {
      trigger_id_ = static_cast<int32_t>(id);
      break;
    }
  }
  return Reset();
}

Status LazyConstraint::Reset() {
  active_ = false;
  armed_ = true;
  window_size_ = 0;
  opened_ = 0;
  return inner_->Reset();
}

Status LazyConstraint::Allowed(const uint32_t** bits) {
  if (!active_) {
    *bits = nullptr;
    return Status::Ok();
  }
  return inner_->Allowed(bits);
}

void LazyConstraint::Open(int32_t id, std::string_view rest) {
  window_size_ = 0;
  if (!inner_->Reset().ok()) return;
  if (!rest.empty() && !inner_->Accept(id, rest).ok()) {
    // Not the grammar's sentence after all (a reply that starts with '{' but is no
    // call): the text stays free.
    inner_->Reset();
    return;
  }
  active_ = !inner_->Finished();
  ++opened_;
}

Status LazyConstraint::Accept(int32_t id, std::string_view text) {
  if (active_) {
    EMBER_RETURN_IF_ERROR(inner_->Accept(id, text));
    if (inner_->Finished()) {
      active_ = false;
      window_size_ = 0;
    }
    return Status::Ok();
  }
  if (!armed_) return Status::Ok();
  const std::string_view trigger(trigger_, trigger_size_);
  if (id == trigger_id_) {
    if (at_start_) armed_ = false;
    Open(id, include_ ? trigger : std::string_view());
    return Status::Ok();
  }
  if (at_start_) {
    size_t k = 0;
    while (k < text.size() && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' ||
                               text[k] == '\r')) {
      ++k;
    }
    if (k == text.size()) return Status::Ok();  // still white space
    armed_ = false;
    if (text.substr(k, trigger_size_) == trigger) {
      Open(id, text.substr(include_ ? k : k + trigger_size_));
    }
    return Status::Ok();
  }
  // Anywhere: the trigger may straddle tokens. First where it starts in the window
  // (the last trigger_size_ - 1 bytes before this token), then in the token.
  char joined[2 * kMaxTrigger];
  const size_t head = text.size() < trigger_size_ - 1 ? text.size() : trigger_size_ - 1;
  memcpy(joined, window_, window_size_);
  memcpy(joined + window_size_, text.data(), head);
  const std::string_view overlap(joined, window_size_ + head);
  const size_t p = overlap.find(trigger);
  if (p != std::string_view::npos && p < window_size_) {
    Open(id, text.substr(p + trigger_size_ - window_size_));
    return Status::Ok();
  }
  const size_t q = text.find(trigger);
  if (q != std::string_view::npos) {
    Open(id, text.substr(q + trigger_size_));
    return Status::Ok();
  }
  // Keep the last trigger_size_ - 1 bytes of the free text.
  const size_t keep = trigger_size_ - 1;
  if (text.size() >= keep) {
    memcpy(window_, text.data() + text.size() - keep, keep);
    window_size_ = keep;
  } else {
    const size_t old = window_size_ + text.size() > keep ? keep - text.size() : window_size_;
    memmove(window_, window_ + window_size_ - old, old);
    memcpy(window_ + old, text.data(), text.size());
    window_size_ = old + text.size();
  }
  return Status::Ok();
}

TokenConstraint LazyConstraint::AsTokenConstraint() {
  TokenConstraint c;
  c.self = this;
  c.allowed = [](void* self, const uint32_t** bits) {
    return static_cast<LazyConstraint*>(self)->Allowed(bits);
  };
  c.accept = [](void* self, int32_t id, std::string_view text) {
    return static_cast<LazyConstraint*>(self)->Accept(id, text);
  };
  c.can_end = [](const void* self) {
    return static_cast<const LazyConstraint*>(self)->CanEnd();
  };
  c.reset = [](void* self) { return static_cast<LazyConstraint*>(self)->Reset(); };
  return c;
}

}  // namespace ember::grammar
