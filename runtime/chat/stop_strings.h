// StopStrings: ends generation when the text contains one of a few strings, releasing the
// text before it and never the string or what follows, in fixed storage (no heap).
#ifndef EMBER_RUNTIME_CHAT_STOP_STRINGS_H_
#define EMBER_RUNTIME_CHAT_STOP_STRINGS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/status.h"

namespace ember {

class StopStrings {
 public:
  static constexpr size_t kMaxStrings = 16;
  static constexpr size_t kMaxStringBytes = 128;  // each
  static constexpr size_t kMaxTotalBytes = 512;   // all of them
  // The most bytes one Feed may bring: a token's piece (the tokenizer's longest is 256).
  static constexpr size_t kMaxFeedBytes = 256;

  // Copies the strings (none empty, within the limits above; refused otherwise, and the
  // previous ones stay) and forgets any text held back.
  Status Set(const std::string_view* strings, size_t n);
  size_t size() const { return num_strings_; }
  std::string_view string(size_t i) const {
    return {storage_ + offsets_[i], static_cast<size_t>(offsets_[i + 1] - offsets_[i])};
  }

  // Starts a new text: forgets what was held back.
  void Reset() { held_ = 0; }

  // Appends `text` (at most kMaxFeedBytes) to the text so far. *release receives the
  // bytes that can no longer be part of a stop string (valid until the next call); the
  // bytes that might still begin one are held back. Returns true when a stop string is
  // complete: then *release is the text before it, and the rest is dropped.
  bool Feed(std::string_view text, std::string_view* release);
  // The text held back, at the end of generation (no stop string came).
  std::string_view Flush();

 private:
  char storage_[kMaxTotalBytes];
  uint16_t offsets_[kMaxStrings + 1] = {0};
  size_t num_strings_ = 0;
  size_t longest_ = 0;
  // The text not yet released: at most longest_ - 1 bytes between calls, plus a feed.
  char held_bytes_[kMaxStringBytes + kMaxFeedBytes];
  size_t held_ = 0;
  char released_[kMaxStringBytes + kMaxFeedBytes];
};

}  // namespace ember

#endif  // EMBER_RUNTIME_CHAT_STOP_STRINGS_H_
