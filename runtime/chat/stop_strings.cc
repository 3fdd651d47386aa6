// StopStrings: see stop_strings.h. The held-back text is the longest tail of the text
// that is a proper prefix of a stop string: a stop string can only begin there, since
// every earlier position was found unable to begin one when it was released.
#include "runtime/chat/stop_strings.h"

#include <cstring>

#include "kernels/dcheck.h"

namespace ember {

Status StopStrings::Set(const std::string_view* strings, size_t n) {
  if (n > kMaxStrings) {
    return InvalidArgument("%zu stop strings: at most %zu are allowed", n, kMaxStrings);
  }
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (strings[i].empty()) return InvalidArgument("stop string %zu is empty", i);
    if (strings[i].size() > kMaxStringBytes) {
      return InvalidArgument("stop string %zu is %zu bytes long: at most %zu are allowed",
                             i, strings[i].size(), kMaxStringBytes);
    }
    total += strings[i].size();
  }
  if (total > kMaxTotalBytes) {
    return InvalidArgument("the stop strings take %zu bytes: at most %zu are allowed",
                           total, kMaxTotalBytes);
  }
  size_t at = 0;
  longest_ = 0;
  for (size_t i = 0; i < n; ++i) {
    memcpy(storage_ + at, strings[i].data(), strings[i].size());
    offsets_[i] = static_cast<uint16_t>(at);
    at += strings[i].size();
    if (strings[i].size() > longest_) longest_ = strings[i].size();
  }
  offsets_[n] = static_cast<uint16_t>(at);
  num_strings_ = n;
  held_ = 0;
  return Status::Ok();
}

bool StopStrings::Feed(std::string_view text, std::string_view* release) {
  if (num_strings_ == 0) {
    *release = text;
    return false;
  }
  EMBER_DCHECK(text.size() <= kMaxFeedBytes);
  if (text.size() > kMaxFeedBytes) text = text.substr(0, kMaxFeedBytes);
  memcpy(held_bytes_ + held_, text.data(), text.size());
  const size_t n = held_ + text.size();
  const std::string_view all(held_bytes_, n);
  // The earliest complete stop string.
  size_t stop_at = std::string_view::npos;
  for (size_t i = 0; i < num_strings_; ++i) {
    const size_t at = all.find(string(i));
    if (at < stop_at) stop_at = at;
  }
  if (stop_at != std::string_view::npos) {
    memcpy(released_, held_bytes_, stop_at);
    *release = std::string_view(released_, stop_at);
    held_ = 0;
    return true;
  }
  // The longest tail that some stop string begins with (shorter than that string).
  size_t keep = 0;
  for (size_t i = 0; i < num_strings_; ++i) {
    const std::string_view s = string(i);
    for (size_t len = s.size() - 1 < n ? s.size() - 1 : n; len > keep; --len) {
      if (all.substr(n - len) == s.substr(0, len)) {
        keep = len;
        break;
      }
    }
  }
  memcpy(released_, held_bytes_, n - keep);
  *release = std::string_view(released_, n - keep);
  memmove(held_bytes_, held_bytes_ + (n - keep), keep);
  held_ = keep;
  return false;
}

std::string_view StopStrings::Flush() {
  memcpy(released_, held_bytes_, held_);
  const std::string_view rest(released_, held_);
  held_ = 0;
  return rest;
}

}  // namespace ember
