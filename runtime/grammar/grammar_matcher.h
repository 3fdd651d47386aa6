// GrammarMatcher: where a text is in a grammar, advanced one code point at a time, in
// memory the caller gives (an arena's), with no heap and bounded work.
//
// The state is a set of parse stacks. A stack is its top position (the class element
// the next code point must match) over a chain of frames (the positions to return to
// after each rule in progress); frames are shared between stacks and interned (equal
// frames are one), so equal stacks are one pair (top, frame) and the set needs no deep
// compare. Advancing matches each stack's top, then expands what follows: an ended
// alternative returns to its frame, a rule reference pushes a frame (none when nothing
// follows it in its alternative) and fans out into the rule's alternatives. Every pair
// is expanded once per step. Frames no stack reaches are reclaimed by sliding the live
// ones down (a frame's parent is always older than it, so order is kept).
//
// Limits (MatcherLimits) bound the stacks, frames and steps of an expansion; running
// past one is ResourceExhausted with its name, never unbounded memory or time, whatever
// program it runs (even one no compiler wrote).
#ifndef EMBER_RUNTIME_GRAMMAR_GRAMMAR_MATCHER_H_
#define EMBER_RUNTIME_GRAMMAR_GRAMMAR_MATCHER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/grammar/grammar_program.h"
#include "runtime/status.h"

namespace ember::grammar {

struct MatcherLimits {
  uint32_t max_stacks = 256;     // parse stacks at once (an ambiguous grammar's)
  uint32_t max_frames = 4096;    // frames of every stack together (nesting x stacks)
  uint32_t max_expansion = 4096; // (position, frame) pairs one step expands
  uint32_t max_saved = 16384;    // words of saved states (SaveState; a token mask's walk)
};

class GrammarMatcher {
 public:
  // Bytes Init needs for these limits (0 when they are zero or too large).
  static size_t RequiredBytes(const MatcherLimits& limits);

  // `program` and `memory` (8-byte aligned, RequiredBytes) must outlive the matcher;
  // starts at the beginning of the program's root rule.
  Status Init(const Program* program, const MatcherLimits& limits, void* memory,
              size_t bytes);
  // Back to the beginning of the root rule.
  Status Reset();
  // One stack only, at class element `position`, over frames that return to
  // returns[0], then returns[1], ... returns[n - 1], then nothing (a token mask's
  // precomputation: the last frame's rule ending is then CanEnd). InvalidArgument for a
  // position that is not a class element or a return position out of range.
  Status StartAt(uint32_t position, const uint32_t* returns = nullptr, size_t n = 0);
  // Where each rule's frames can return to in a program (a token mask's tables):
  // rule r's return positions are positions[offsets[r] .. offsets[r + 1]), UINT32_MAX
  // for the end of the text; owner[e] is element e's rule.
  struct Returns {
    const uint32_t* owner;
    const uint32_t* offsets;
    const uint32_t* positions;
  };
  // Stacks at each of rule `rule`'s return positions, with nothing known below them: a
  // stack that ends its rule goes on at that rule's return positions (any of them).
  // What may follow the rule's end anywhere in the grammar, for a token mask's tables;
  // `returns` must outlive the matcher's use of it.
  Status StartAfter(uint32_t rule, const Returns* returns);
  // Whether stack i's frames return to returns[0], ..., returns[n - 1], and then (when
  // `exact`) to nothing.
  bool ReturnsTo(size_t i, const uint32_t* returns, size_t n, bool exact = false) const;

  // Advances by one code point. InvalidArgument when the grammar does not allow it here,
  // ResourceExhausted past a limit: either way the state is as it was.
  Status Accept(uint32_t cp);
  // Advances by each code point of UTF-8 text; stops at the first that is not allowed
  // (or invalid UTF-8), with `*accepted` (if given) the bytes taken before it.
  Status AcceptText(std::string_view text, size_t* accepted = nullptr);

  // Advances by one byte of UTF-8: a code point's bytes are held until it is whole (a
  // token may end inside one), then accepted; a byte is taken only while some code
  // point it can still become is allowed. InvalidArgument for a byte that cannot
  // continue UTF-8 or leaves no allowed code point; the state is then as it was.
  Status AcceptByte(uint8_t byte);

  // AcceptByte without a message for a refused byte: a token mask walks a vocabulary
  // byte by byte and most bytes are refused, where formatting why would cost more than
  // the walk. kFailed: past a limit, error() says which.
  enum class Step : uint8_t { kAccepted, kRefused, kFailed };
  Step FeedByte(uint8_t byte);
  const Status& error() const { return error_; }

  // Saved states, last in first out (a token mask walks a vocabulary with them): the
  // stacks and a held code point's bytes. SaveState returns a mark (ResourceExhausted
  // past max_saved); RestoreState(mark) brings that state back and keeps it saved;
  // DropStates(mark) forgets it and those saved after it. While any state is saved,
  // frames are not reclaimed (the saved stacks point at them).
  Status SaveState(size_t* mark);
  void RestoreState(size_t mark);
  void DropStates(size_t mark);

  // Whether the text so far is a whole sentence of the grammar.
  bool CanEnd() const { return can_end_ && held_ == 0; }
  // Whether some continuation (maybe none) makes it one.
  bool Viable() const { return CanEnd() || num_stacks_ > 0; }
  size_t num_stacks() const { return num_stacks_; }
  // Stack i's top: the class element its next code point must match.
  uint32_t top(size_t i) const { return stacks_[i].position; }
  // Whether a code point's first bytes are held (a token ended inside it).
  bool holding() const { return held_ != 0; }
  size_t num_frames() const { return num_frames_; }

 private:
  struct Pair {
    uint32_t position, frame;  // frame kNoFrame: the root's level
  };
  static constexpr uint32_t kNoFrame = UINT32_MAX;

  // No stacks, frames, held bytes or saved states; `returns` as StartAfter's (or null).
  void Clear(const Returns* returns);
  void BeginStep();  // an empty next set
  // A stack ended the root level: the end of the text, or (after StartAfter) the
  // return positions of its rule.
  bool EndRoot(uint32_t position);
  // Queues a pair to expand (once); false with error_ past max_expansion.
  bool Push(uint32_t position, uint32_t frame);
  Status Expand();  // the queued pairs into the next set
  void Commit();    // the next set becomes the current one
  // The frame (position, parent), made if new; kNoFrame with error_ past max_frames.
  uint32_t Intern(uint32_t position, uint32_t parent);
  void Collect();  // reclaims the frames no current stack reaches
  // Whether some stack allows a code point the held bytes can still become.
  bool HeldCanMatch() const;
  enum class Refused : uint8_t {
    kCodePoint,      // value: the code point, not allowed here
    kUnfinished,     // a code point after an unfinished one
    kNotLead,        // value: a byte that does not start UTF-8
    kNoLead,         // value: a lead byte no allowed code point starts with
    kNoContinuation, // no allowed code point starts with the held bytes
    kNotContinuing,  // value: a byte that does not continue UTF-8
    kNotUtf8,        // value: a code point encoded too long, too big or a surrogate
  };
  // Accept's work; a refusal records why (Refuse), for the message StatusOf makes.
  Step Advance(uint32_t cp);
  Step Refuse(Refused why, uint32_t value);
  // OK, the last refusal's message, or error_ (Accept's and AcceptByte's Status).
  Status StatusOf(Step step) const;

  Refused refused_ = Refused::kCodePoint;
  uint32_t refused_value_ = 0;

  const Program* program_ = nullptr;
  const Returns* returns_ = nullptr;  // StartAfter's (else nullptr)
  MatcherLimits limits_;
  Pair* frames_ = nullptr;       // max_frames: (return position, parent frame)
  uint32_t* frame_index_ = nullptr;  // frame_slots_: interned frames, kNoFrame empty
  uint32_t frame_slots_ = 0;
  uint32_t* remap_ = nullptr;    // max_frames: Collect's new indices
  Pair* stacks_ = nullptr;       // max_stacks: the current set
  Pair* next_ = nullptr;         // max_stacks: the set being built
  uint32_t* seen_ = nullptr;     // seen_slots_: pairs queued this step (their index)
  Pair* seen_pairs_ = nullptr;   // max_expansion: the queue
  uint32_t seen_slots_ = 0;
  size_t num_stacks_ = 0, num_next_ = 0, num_frames_ = 0, num_seen_ = 0;
  // A code point's bytes so far: its value, bytes still to come, its least value.
  uint32_t held_cp_ = 0, held_min_ = 0;
  uint8_t held_ = 0;
  Pair* saved_ = nullptr;  // max_saved / 2 pairs: each state a header pair, then stacks
  size_t saved_used_ = 0;
  bool can_end_ = false, next_can_end_ = false;
  Status error_;
};

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_GRAMMAR_MATCHER_H_
