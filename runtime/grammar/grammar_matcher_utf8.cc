// GrammarMatcher on bytes: UTF-8 held until its code point is whole (refused early when
// no code point it can become is allowed), text fed as code points, and the refusals as
// messages (see grammar_matcher.h; matching code points is grammar_matcher.cc).
#include "runtime/grammar/grammar_matcher.h"
#include "runtime/text/utf8.h"

namespace ember::grammar {

Status GrammarMatcher::AcceptByte(uint8_t byte) { return StatusOf(FeedByte(byte)); }

GrammarMatcher::Step GrammarMatcher::FeedByte(uint8_t byte) {
  if (held_ == 0) {
    if (byte < 0x80) return Advance(byte);
    // A lead byte: how many follow, and the least code point that many encode.
    if ((byte & 0xE0) == 0xC0) {
      held_cp_ = byte & 0x1F, held_ = 1, held_min_ = 0x80;
    } else if ((byte & 0xF0) == 0xE0) {
      held_cp_ = byte & 0x0F, held_ = 2, held_min_ = 0x800;
    } else if ((byte & 0xF8) == 0xF0) {
      held_cp_ = byte & 0x07, held_ = 3, held_min_ = 0x10000;
    } else {
      return Refuse(Refused::kNotLead, byte);
    }
    if (!HeldCanMatch()) {
      held_ = 0;
      return Refuse(Refused::kNoLead, byte);
    }
    return Step::kAccepted;
  }
  if ((byte & 0xC0) != 0x80) return Refuse(Refused::kNotContinuing, byte);
  const uint32_t cp = held_cp_ << 6 | (byte & 0x3F);
  if (held_ > 1) {
    const uint32_t was = held_cp_;
    held_cp_ = cp;
    --held_;
    if (!HeldCanMatch()) {
      held_cp_ = was;
      ++held_;
      return Refuse(Refused::kNoContinuation, 0);
    }
    return Step::kAccepted;
  }
  if (cp < held_min_ || cp > kMaxCodePoint || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return Refuse(Refused::kNotUtf8, cp);
  }
  held_ = 0;
  const Step step = Advance(cp);
  if (step != Step::kAccepted) held_ = 1;  // as it was: the last byte still to come
  return step;
}

Status GrammarMatcher::StatusOf(Step step) const {
  switch (step) {
    case Step::kAccepted:
      return Status::Ok();
    case Step::kRefused:
      break;
    case Step::kFailed:
      return error_;
  }
  switch (refused_) {
    case Refused::kCodePoint:
      return InvalidArgument("grammar: U+%04X is not allowed here", refused_value_);
    case Refused::kUnfinished:
      return InvalidArgument("grammar: a code point after an unfinished one");
    case Refused::kNotLead:
      return InvalidArgument("grammar: byte 0x%02X does not start UTF-8", refused_value_);
    case Refused::kNoLead:
      return InvalidArgument(
          "grammar: no code point starting with byte 0x%02X is allowed", refused_value_);
    case Refused::kNoContinuation:
      return InvalidArgument(
          "grammar: no code point starting with these bytes is allowed");
    case Refused::kNotContinuing:
      return InvalidArgument("grammar: byte 0x%02X does not continue UTF-8",
                             refused_value_);
    case Refused::kNotUtf8:
      return InvalidArgument("grammar: the bytes of U+%04X are not UTF-8",
                             refused_value_);
  }
  return Internal("grammar: an unknown refusal");
}

bool GrammarMatcher::HeldCanMatch() const {
  // The code points the held bytes can become: [cp << 6h, (cp << 6h) | ones], clipped
  // to what UTF-8 may encode with this many bytes.
  const uint32_t shift = 6u * held_;
  uint32_t lo = held_cp_ << shift, hi = lo | ((1u << shift) - 1);
  if (lo < held_min_) lo = held_min_;
  if (hi > kMaxCodePoint) hi = kMaxCodePoint;
  if (lo > hi) return false;
  for (size_t s = 0; s < num_stacks_; ++s) {
    if (program_->MatchesSome(ValueOf(program_->element(stacks_[s].position)), lo, hi)) {
      return true;
    }
  }
  return false;
}

Status GrammarMatcher::AcceptText(std::string_view text, size_t* accepted) {
  size_t at = 0;
  if (accepted) *accepted = 0;
  while (at < text.size()) {
    uint32_t cp = 0;
    const size_t n = DecodeUtf8(text, at, &cp);
    if (n == 0) return InvalidArgument("grammar: the text is not UTF-8 at byte %zu", at);
    EMBER_RETURN_IF_ERROR(Accept(cp));
    at += n;
    if (accepted) *accepted = at;
  }
  return Status::Ok();
}

}  // namespace ember::grammar
