// GrammarMatcher: see grammar_matcher.h (bytes and text: grammar_matcher_utf8.cc).
#include "runtime/grammar/grammar_matcher.h"

#include <cstring>

namespace ember::grammar {
namespace {

constexpr uint32_t kEmpty = UINT32_MAX;

uint32_t SlotsFor(uint32_t n) {  // a power of two at least twice n
  uint32_t slots = 16;
  while (slots < 2 * uint64_t{n}) slots *= 2;
  return slots;
}

uint32_t Hash(uint32_t position, uint32_t frame) {
  uint32_t h = position * 0x9E3779B1u ^ (frame + 1) * 0x85EBCA77u;
  return h ^ (h >> 15);
}

size_t Align8(size_t n) { return (n + 7) & ~size_t{7}; }

}  // namespace

size_t GrammarMatcher::RequiredBytes(const MatcherLimits& l) {
  // Each limit fits 16 bits (the expansion's index) or 24 (frames): no size can wrap.
  if (l.max_stacks == 0 || l.max_frames == 0 || l.max_expansion == 0 ||
      l.max_stacks > (1u << 20) || l.max_frames > (1u << 24) ||
      l.max_expansion > 0xFFFF || l.max_saved > (1u << 24)) {
    return 0;
  }
  return Align8(size_t{l.max_frames} * sizeof(Pair)) +
         Align8(size_t{SlotsFor(l.max_frames)} * 4) + Align8(size_t{l.max_frames} * 4) +
         2 * Align8(size_t{l.max_stacks} * sizeof(Pair)) +
         Align8(size_t{SlotsFor(l.max_expansion)} * 4) +
         Align8(size_t{l.max_expansion} * sizeof(Pair)) + Align8(size_t{l.max_saved} * 4);
}

Status GrammarMatcher::Init(const Program* program, const MatcherLimits& limits,
                            void* memory, size_t bytes) {
  const size_t needed = RequiredBytes(limits);
  if (needed == 0) {
    return InvalidArgument(
        "grammar matcher limits out of range (%u stacks, %u frames, %u expansion)",
        limits.max_stacks, limits.max_frames, limits.max_expansion);
  }
  if (bytes < needed || reinterpret_cast<uintptr_t>(memory) % 8 != 0) {
    return ResourceExhausted(
        "grammar matcher memory of %zu bytes (8-byte aligned) is too small: %zu needed",
        bytes, needed);
  }
  program_ = program;
  limits_ = limits;
  uint8_t* at = static_cast<uint8_t*>(memory);
  const auto take = [&at](size_t n) {
    uint8_t* p = at;
    at += Align8(n);
    return p;
  };
  frames_ = reinterpret_cast<Pair*>(take(size_t{limits.max_frames} * sizeof(Pair)));
  frame_slots_ = SlotsFor(limits.max_frames);
  frame_index_ = reinterpret_cast<uint32_t*>(take(size_t{frame_slots_} * 4));
  remap_ = reinterpret_cast<uint32_t*>(take(size_t{limits.max_frames} * 4));
  stacks_ = reinterpret_cast<Pair*>(take(size_t{limits.max_stacks} * sizeof(Pair)));
  next_ = reinterpret_cast<Pair*>(take(size_t{limits.max_stacks} * sizeof(Pair)));
  seen_slots_ = SlotsFor(limits.max_expansion);
  seen_ = reinterpret_cast<uint32_t*>(take(size_t{seen_slots_} * 4));
  seen_pairs_ =
      reinterpret_cast<Pair*>(take(size_t{limits.max_expansion} * sizeof(Pair)));
  saved_ = reinterpret_cast<Pair*>(take(size_t{limits.max_saved} * 4));
  memset(seen_, 0xFF, size_t{seen_slots_} * 4);
  num_seen_ = 0;
  return Reset();
}

void GrammarMatcher::Clear(const Returns* returns) {
  returns_ = returns;
  num_frames_ = 0;
  held_ = 0;
  saved_used_ = 0;
  memset(frame_index_, 0xFF, size_t{frame_slots_} * 4);
  num_stacks_ = 0;
  can_end_ = false;
}

Status GrammarMatcher::Reset() {
  Clear(nullptr);
  uint32_t count = 0;
  const uint32_t* alts = program_->alternatives(program_->root(), &count);
  BeginStep();
  for (uint32_t a = 0; a < count; ++a) {
    if (!Push(alts[a], kNoFrame)) return error_;
  }
  EMBER_RETURN_IF_ERROR(Expand());
  Commit();
  return Status::Ok();
}

Status GrammarMatcher::StartAt(uint32_t position, const uint32_t* returns, size_t n) {
  if (position >= program_->num_elements() ||
      KindOf(program_->element(position)) != ElementKind::kClass) {
    return InvalidArgument("grammar: position %u is not a class element", position);
  }
  Clear(nullptr);
  BeginStep();
  uint32_t frame = kNoFrame;
  for (size_t i = n; i-- > 0;) {
    if (returns[i] >= program_->num_elements()) {
      return InvalidArgument("grammar: return position %u is out of range", returns[i]);
    }
    frame = Intern(returns[i], frame);
    if (frame == kNoFrame) return error_;
  }
  stacks_[0] = {position, frame};
  num_stacks_ = 1;
  return Status::Ok();
}

Status GrammarMatcher::StartAfter(uint32_t rule, const Returns* returns) {
  if (rule >= program_->num_rules()) {
    return InvalidArgument("grammar: rule %u is out of range", rule);
  }
  Clear(returns);
  BeginStep();
  for (uint32_t i = returns->offsets[rule]; i < returns->offsets[rule + 1]; ++i) {
    if (returns->positions[i] == UINT32_MAX) {
      next_can_end_ = true;
    } else if (!Push(returns->positions[i], kNoFrame)) {
      return error_;
    }
  }
  EMBER_RETURN_IF_ERROR(Expand());
  Commit();
  return Status::Ok();
}

bool GrammarMatcher::EndRoot(uint32_t position) {
  if (returns_ == nullptr) {
    next_can_end_ = true;
    return true;
  }
  const uint32_t rule = returns_->owner[position];
  for (uint32_t i = returns_->offsets[rule]; i < returns_->offsets[rule + 1]; ++i) {
    if (returns_->positions[i] == UINT32_MAX) {
      next_can_end_ = true;
    } else if (!Push(returns_->positions[i], kNoFrame)) {
      return false;
    }
  }
  return true;
}

bool GrammarMatcher::ReturnsTo(size_t i, const uint32_t* returns, size_t n,
                               bool exact) const {
  uint32_t frame = stacks_[i].frame;
  for (size_t k = 0; k < n; ++k, frame = frames_[frame].frame) {
    if (frame == kNoFrame || frames_[frame].position != returns[k]) return false;
  }
  return !exact || frame == kNoFrame;
}

void GrammarMatcher::BeginStep() {
  // The last step's entries only (a step touches few of the slots): each is found by
  // probing past the others, which are still there or already cleared.
  for (size_t i = 0; i < num_seen_; ++i) {
    uint32_t slot =
        Hash(seen_pairs_[i].position, seen_pairs_[i].frame) & (seen_slots_ - 1);
    while (seen_[slot] != i) slot = (slot + 1) & (seen_slots_ - 1);
    seen_[slot] = kEmpty;
  }
  num_seen_ = num_next_ = 0;
  next_can_end_ = false;
  error_ = Status::Ok();
}

void GrammarMatcher::Commit() {
  Pair* swap = stacks_;
  stacks_ = next_;
  next_ = swap;
  num_stacks_ = num_next_;
  can_end_ = next_can_end_;
}

bool GrammarMatcher::Push(uint32_t position, uint32_t frame) {
  for (uint32_t slot = Hash(position, frame) & (seen_slots_ - 1);;
       slot = (slot + 1) & (seen_slots_ - 1)) {
    const uint32_t i = seen_[slot];
    if (i == kEmpty) {
      if (num_seen_ == limits_.max_expansion) {
        error_ = ResourceExhausted(
            "grammar: one step expands more than %u parse positions (raise "
            "max_expansion, or simplify the grammar)",
            limits_.max_expansion);
        return false;
      }
      seen_[slot] = static_cast<uint32_t>(num_seen_);
      seen_pairs_[num_seen_++] = {position, frame};
      return true;
    }
    if (seen_pairs_[i].position == position && seen_pairs_[i].frame == frame) return true;
  }
}

uint32_t GrammarMatcher::Intern(uint32_t position, uint32_t parent) {
  for (uint32_t slot = Hash(position, parent) & (frame_slots_ - 1);;
       slot = (slot + 1) & (frame_slots_ - 1)) {
    const uint32_t f = frame_index_[slot];
    if (f == kEmpty) {
      if (num_frames_ == limits_.max_frames) {
        error_ = ResourceExhausted(
            "grammar: parse stacks deeper than %u frames together (raise max_frames, or "
            "nest less)",
            limits_.max_frames);
        return kNoFrame;
      }
      frames_[num_frames_] = {position, parent};
      frame_index_[slot] = static_cast<uint32_t>(num_frames_);
      return static_cast<uint32_t>(num_frames_++);
    }
    if (frames_[f].position == position && frames_[f].frame == parent) return f;
  }
}

// Each pair pushed is expanded once, in order (the seen list is the queue).
Status GrammarMatcher::Expand() {
  for (size_t i = 0; i < num_seen_; ++i) {
    const Pair p = seen_pairs_[i];
    const uint32_t element = program_->element(p.position);
    switch (KindOf(element)) {
      case ElementKind::kEnd:
        if (p.frame == kNoFrame) {
          if (!EndRoot(p.position)) return error_;
        } else if (!Push(frames_[p.frame].position, frames_[p.frame].frame)) {
          return error_;
        }
        break;
      case ElementKind::kClass:
        if (num_next_ == limits_.max_stacks) {
          return ResourceExhausted(
              "grammar: more than %u parse stacks at once (an ambiguous grammar: raise "
              "max_stacks, or simplify it)",
              limits_.max_stacks);
        }
        next_[num_next_++] = p;
        break;
      case ElementKind::kRule: {
        // The frame to return to; none when the rule ends its alternative.
        uint32_t frame = p.frame;
        if (KindOf(program_->element(p.position + 1)) != ElementKind::kEnd) {
          frame = Intern(p.position + 1, p.frame);
          if (frame == kNoFrame) return error_;
        }
        uint32_t count = 0;
        const uint32_t* alts = program_->alternatives(ValueOf(element), &count);
        for (uint32_t a = 0; a < count; ++a) {
          if (!Push(alts[a], frame)) return error_;
        }
        break;
      }
    }
  }
  return Status::Ok();
}

void GrammarMatcher::Collect() {
  for (size_t f = 0; f < num_frames_; ++f) remap_[f] = kEmpty;
  for (size_t s = 0; s < num_stacks_; ++s) {
    for (uint32_t f = stacks_[s].frame; f != kNoFrame && remap_[f] == kEmpty;
         f = frames_[f].frame) {
      remap_[f] = 0;
    }
  }
  // Live frames slide down in order: a parent is older than its child, so it has
  // moved (and has its new index) first.
  size_t live = 0;
  for (size_t f = 0; f < num_frames_; ++f) {
    if (remap_[f] == kEmpty) continue;
    const uint32_t parent = frames_[f].frame;
    frames_[live] = {frames_[f].position, parent == kNoFrame ? kNoFrame : remap_[parent]};
    remap_[f] = static_cast<uint32_t>(live++);
  }
  for (size_t s = 0; s < num_stacks_; ++s) {
    if (stacks_[s].frame != kNoFrame) stacks_[s].frame = remap_[stacks_[s].frame];
  }
  num_frames_ = live;
  memset(frame_index_, 0xFF, size_t{frame_slots_} * 4);
  for (uint32_t f = 0; f < live; ++f) {
    uint32_t slot = Hash(frames_[f].position, frames_[f].frame) & (frame_slots_ - 1);
    while (frame_index_[slot] != kEmpty) slot = (slot + 1) & (frame_slots_ - 1);
    frame_index_[slot] = f;
  }
}

Status GrammarMatcher::Accept(uint32_t cp) { return StatusOf(Advance(cp)); }

GrammarMatcher::Step GrammarMatcher::Refuse(Refused why, uint32_t value) {
  refused_ = why;
  refused_value_ = value;
  return Step::kRefused;
}

GrammarMatcher::Step GrammarMatcher::Advance(uint32_t cp) {
  if (held_ != 0) return Refuse(Refused::kUnfinished, 0);
  if (num_frames_ > limits_.max_frames / 2 && saved_used_ == 0) Collect();
  BeginStep();
  for (size_t s = 0; s < num_stacks_; ++s) {
    const Pair p = stacks_[s];
    if (program_->Matches(ValueOf(program_->element(p.position)), cp) &&
        !Push(p.position + 1, p.frame)) {
      return Step::kFailed;
    }
  }
  const Status expanded = Expand();
  if (!expanded.ok()) {
    error_ = expanded;
    return Step::kFailed;
  }
  if (num_next_ == 0 && !next_can_end_) return Refuse(Refused::kCodePoint, cp);
  Commit();
  return Step::kAccepted;
}

Status GrammarMatcher::SaveState(size_t* mark) {
  const size_t pairs = 2 + num_stacks_;
  if (saved_used_ + pairs > limits_.max_saved / 2) {
    return ResourceExhausted("grammar: saved states past %u words (raise max_saved)",
                             limits_.max_saved);
  }
  Pair* at = saved_ + saved_used_;
  at[0] = {static_cast<uint32_t>(num_stacks_),
           (can_end_ ? 1u : 0u) | uint32_t{held_} << 8};
  at[1] = {held_cp_, held_min_};
  memcpy(at + 2, stacks_, num_stacks_ * sizeof(Pair));
  *mark = saved_used_;
  saved_used_ += pairs;
  return Status::Ok();
}

void GrammarMatcher::RestoreState(size_t mark) {
  const Pair* at = saved_ + mark;
  num_stacks_ = at[0].position;
  can_end_ = (at[0].frame & 1) != 0;
  held_ = static_cast<uint8_t>(at[0].frame >> 8);
  held_cp_ = at[1].position;
  held_min_ = at[1].frame;
  memcpy(stacks_, at + 2, num_stacks_ * sizeof(Pair));
}

void GrammarMatcher::DropStates(size_t mark) { saved_used_ = mark; }

}  // namespace ember::grammar
