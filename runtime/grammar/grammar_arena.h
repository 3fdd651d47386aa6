// GrammarArena: where a grammar's memory comes from while it generates. A bump
// allocator over a region of the session's arena (the "grammar" buffer the session plan
// reserves, SessionOptions::grammar_bytes); with no region it only counts, so the same
// layout pass tells the bytes a grammar needs before any memory is given.
#ifndef EMBER_RUNTIME_GRAMMAR_GRAMMAR_ARENA_H_
#define EMBER_RUNTIME_GRAMMAR_GRAMMAR_ARENA_H_

#include <cstddef>
#include <cstdint>

#include "runtime/checked_math.h"

namespace ember::grammar {

class GrammarArena {
 public:
  // Every array starts on this boundary (the region's base must be aligned to it).
  static constexpr size_t kAlignment = 16;

  GrammarArena() = default;  // counts only
  GrammarArena(void* base, size_t bytes)
      : base_(static_cast<uint8_t*>(base)), size_(bytes) {}

  // Room for `count` Ts (uninitialised), or null when the region cannot hold them (or
  // there is no region): `used()` then still grows by what they need, so that a failed
  // pass tells the whole size; `fits()` turns false.
  template <class T>
  T* Take(size_t count) {
    size_t bytes = 0, end = 0;
    if (!CheckedMul(count, sizeof(T), &bytes) || !CheckedAdd(used_, bytes, &end) ||
        !CheckedAdd(end, kAlignment - 1, &end)) {
      overflow_ = true;
      return nullptr;
    }
    const size_t start = used_;
    used_ = end / kAlignment * kAlignment;
    if (base_ == nullptr || used_ > size_) return nullptr;
    return reinterpret_cast<T*>(base_ + start);
  }

  size_t used() const { return used_; }  // bytes taken (or asked for) so far
  size_t size() const { return size_; }
  bool overflowed() const { return overflow_; }
  bool fits() const { return base_ != nullptr && !overflow_ && used_ <= size_; }

 private:
  uint8_t* base_ = nullptr;
  size_t size_ = 0, used_ = 0;
  bool overflow_ = false;
};

// A grammar's bytes in the arena, by part (GrammarConstraint::Place's layout).
struct GrammarBytes {
  size_t program = 0;     // the compiled program's words
  size_t matcher = 0;     // the parse stacks, frames and saved states (MatcherLimits)
  size_t vocabulary = 0;  // the vocabulary in byte order (TokenOrder)
  size_t tables = 0;      // the token mask's tables and per-step scratch (TokenMask)
  size_t mask = 0;        // the allowed bits handed to the sampler and the stop ids
  size_t total = 0;
};

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_GRAMMAR_ARENA_H_
