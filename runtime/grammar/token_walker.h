// The walk of tokens in byte order from a matcher's state, shared by the tables'
// construction (token_mask_build.cc) and the per-step mask (token_mask.cc).
#ifndef EMBER_RUNTIME_GRAMMAR_TOKEN_WALKER_H_
#define EMBER_RUNTIME_GRAMMAR_TOKEN_WALKER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/grammar/grammar_matcher.h"
#include "runtime/grammar/token_mask.h"
#include "runtime/status.h"

namespace ember::grammar {

inline size_t SharedPrefix(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Tries tokens in byte order from a matcher's state: the path of the last token's
// bytes keeps a saved state per byte, and the next token resumes where it leaves the
// path. A refused prefix is remembered, so tokens that start with it are refused
// without work.
class TokenWalker {
 public:
  struct Result {
    bool accepted = false;
    bool same = false;   // refused for the previous token's refused prefix: not walked
    bool alone = false;  // longer than kMaxWalk: tried alone (no can_end record)
  };

  explicit TokenWalker(GrammarMatcher* m) : m_(m) {}
  Status Begin() {
    depth_ = 0;
    dead_ = SIZE_MAX;
    previous_ = {};
    can_end_[0] = m_->CanEnd();
    return m_->SaveState(&marks_[0]);
  }
  void End() {
    m_->RestoreState(marks_[0]);
    m_->DropStates(marks_[0]);
  }
  // The refused byte of the last token walked (SIZE_MAX: none), and whether the
  // matcher could end after its first d bytes (d <= that byte, or its length).
  size_t dead() const { return dead_; }
  bool can_end_after(size_t d) const { return can_end_[d]; }

  // `shared`: the bytes it shares with the token tried before it, when the caller
  // knows (SIZE_MAX: compared here).
  Status Try(std::string_view bytes, Result* result, size_t shared = SIZE_MAX) {
    *result = Result();
    if (shared == SIZE_MAX) shared = SharedPrefix(previous_, bytes);
    previous_ = bytes;
    if (dead_ != SIZE_MAX && shared > dead_) {
      result->same = true;
      return Status::Ok();
    }
    dead_ = SIZE_MAX;
    if (bytes.size() > TokenMask::kMaxWalk) return TryAlone(bytes, result);
    if (shared < depth_) {  // back up the path to the prefix it shares
      m_->DropStates(marks_[shared + 1]);
      depth_ = shared;
    }
    m_->RestoreState(marks_[depth_]);
    for (size_t k = depth_; k < bytes.size(); ++k) {
      const GrammarMatcher::Step step = m_->FeedByte(static_cast<uint8_t>(bytes[k]));
      if (step == GrammarMatcher::Step::kRefused) {
        dead_ = k;
        return Status::Ok();
      }
      if (step == GrammarMatcher::Step::kFailed) return m_->error();
      EMBER_RETURN_IF_ERROR(m_->SaveState(&marks_[k + 1]));
      can_end_[k + 1] = m_->CanEnd();
      depth_ = k + 1;
    }
    result->accepted = true;
    return Status::Ok();
  }

 private:
  Status TryAlone(std::string_view bytes, Result* result) {
    if (depth_ > 0) m_->DropStates(marks_[1]);
    depth_ = 0;
    previous_ = {};
    m_->RestoreState(marks_[0]);
    result->alone = true;
    result->accepted = true;
    for (const char c : bytes) {
      const GrammarMatcher::Step step = m_->FeedByte(static_cast<uint8_t>(c));
      if (step == GrammarMatcher::Step::kRefused) {
        result->accepted = false;
        break;
      }
      if (step == GrammarMatcher::Step::kFailed) return m_->error();
    }
    m_->RestoreState(marks_[0]);
    return Status::Ok();
  }

  GrammarMatcher* m_;
  size_t depth_ = 0, dead_ = SIZE_MAX;
  std::string_view previous_;
  size_t marks_[TokenMask::kMaxWalk + 1];
  bool can_end_[TokenMask::kMaxWalk + 1];
};

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_TOKEN_WALKER_H_
