// LazyConstraint: a grammar that starts where the model opens it (a tool call) and
// leaves the text around it free. While free it watches the text for a trigger (the
// opening markup, or the control token whose piece it is); the grammar then constrains
// every token until its sentence is whole and nothing can continue it, and the text is
// free again, watching for the next opening. Per token: a look at a window of the last
// bytes; no heap.
#ifndef EMBER_RUNTIME_GRAMMAR_LAZY_CONSTRAINT_H_
#define EMBER_RUNTIME_GRAMMAR_LAZY_CONSTRAINT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/chat/tool_calls.h"
#include "runtime/generate.h"
#include "runtime/grammar/grammar_constraint.h"
#include "runtime/text/tokenizer.h"

namespace ember::grammar {

struct LazyTrigger {
  std::string_view text;  // the opening, at most LazyConstraint::kMaxTrigger bytes
  // Only at the start of the text (after white space); else anywhere, any number of
  // times.
  bool at_start = false;
  // The grammar's sentence begins with the trigger's bytes (else: after them). Only
  // with at_start.
  bool include = false;
};

// The trigger of a family's tool calls (where its call grammar starts).
inline LazyTrigger ToolCallTrigger(const ToolCallSyntax& syntax) {
  LazyTrigger t;
  t.text = syntax.trigger;
  t.at_start = syntax.at_start;
  t.include = syntax.grammar_includes_trigger;
  return t;
}

class LazyConstraint {
 public:
  static constexpr size_t kMaxTrigger = 32;

  // `inner` (the grammar, from its start) and `tokenizer` must outlive this.
  Status Init(GrammarConstraint* inner, const LazyTrigger& trigger,
              const Tokenizer& tokenizer);
  // Free again, watching for the opening (a new reply).
  Status Reset();
  // Null (any token) while free; else the grammar's.
  Status Allowed(const uint32_t** bits);
  Status Accept(int32_t id, std::string_view text);
  // Free text can end anywhere; an opened sentence only where it is whole.
  bool CanEnd() const { return !active_ || inner_->CanEnd(); }
  bool active() const { return active_; }
  // Sentences opened since Reset.
  size_t opened() const { return opened_; }
  TokenConstraint AsTokenConstraint();

 private:
  // Starts the grammar with the bytes of the token after the trigger (or from it).
  void Open(int32_t id, std::string_view rest);

  GrammarConstraint* inner_ = nullptr;
  char trigger_[kMaxTrigger] = {};
  size_t trigger_size_ = 0;
  int32_t trigger_id_ = -1;  // the control token whose piece is the trigger
  bool at_start_ = false, include_ = false;
  bool active_ = false;
  bool armed_ = true;       // at_start: until the text's first byte that is not white space
  char window_[kMaxTrigger] = {};  // the last trigger_size_ - 1 bytes of free text
  size_t window_size_ = 0;
  size_t opened_ = 0;
};

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_LAZY_CONSTRAINT_H_
