// Shared by the tokenizer's files (tokenizer.cc, tokenizer_encode.cc,
// tokenizer_added.cc): byte comparison and limits.
#ifndef EMBER_RUNTIME_TEXT_TOKENIZER_INTERNAL_H_
#define EMBER_RUNTIME_TEXT_TOKENIZER_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/text/tokenizer.h"

namespace ember::tokenizer_internal {

// Longest piece a vocabulary may hold (merging looks up concatenations of two pieces).
inline constexpr size_t kMaxPieceBytes = 256;
// Longest added token (Gemma 3's longest is 93 bytes).
inline constexpr size_t kMaxAddedBytes = 1024;

// std::string_view's order (bytes as unsigned), three-way, inline: Find runs it
// millions of times on a long prompt, on pieces of a few bytes, where calling memcmp
// (twice, for < and >) cost more than the comparing.
inline int CompareBytes(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) {
      return static_cast<uint8_t>(a[i]) < static_cast<uint8_t>(b[i]) ? -1 : 1;
    }
  }
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

// Control and unknown tokens are matched in text only on request (parse_special).
inline bool IsSpecial(TokenType type) {
  return type == TokenType::kControl || type == TokenType::kUnknown;
}

}  // namespace ember::tokenizer_internal

#endif  // EMBER_RUNTIME_TEXT_TOKENIZER_INTERNAL_H_
