// Added tokens: the checks of their table, and finding them in text (leftmost, then
// longest) by binary search over their sorted texts, without a trie or an allocation.
#include "runtime/text/tokenizer.h"
#include "runtime/text/tokenizer_internal.h"
#include "runtime/text/unicode.h"
#include "runtime/text/utf8.h"

namespace ember {
namespace {

using tokenizer_internal::CompareBytes;
using tokenizer_internal::IsSpecial;
using tokenizer_internal::kMaxAddedBytes;

bool HasBit(const uint32_t* bits, uint8_t byte) {
  return (bits[byte >> 5] >> (byte & 31)) & 1;
}

bool IsSpaceAt(std::string_view text, size_t pos, size_t* len) {
  uint32_t cp = 0;
  *len = DecodeUtf8(text, pos, &cp);
  return *len > 0 && ClassifyCodePoint(cp) == CharClass::kSpace;
}

}  // namespace

Status Tokenizer::InitAdded() {
  const TokenizerTables& t = t_;
  max_added_bytes_ = 0;
  for (auto& bits : added_first_bytes_) {
    for (uint32_t& word : bits) word = 0;
  }
  if (t.num_added == 0) return Status::Ok();
  if (!t.added_ids || !t.added_offsets || !t.added_flags || !t.added_text) {
    return InvalidModel("tokenizer: %zu added tokens without ids, offsets, text or flags",
                        t.num_added);
  }
  if (t.added_offsets[0] != 0 || t.added_offsets[t.num_added] != t.added_text_size) {
    return InvalidModel(
        "tokenizer: added token offsets do not span the %zu bytes of text",
        t.added_text_size);
  }
  for (size_t i = 0; i < t.num_added; ++i) {
    if (t.added_offsets[i + 1] <= t.added_offsets[i] ||
        t.added_offsets[i + 1] - t.added_offsets[i] > kMaxAddedBytes) {
      return InvalidModel("tokenizer: added token %zu is empty or longer than %zu bytes",
                          i, kMaxAddedBytes);
    }
  }
  for (size_t i = 0; i < t.num_added; ++i) {
    const uint32_t id = t.added_ids[i];
    if (id >= t.vocab_size || type(id) == TokenType::kByte || t.added_flags[i] > 7) {
      return InvalidModel(
          "tokenizer: added token %zu (id %u) is out of range, a byte or has "
          "unknown flags",
          i, id);
    }
    if ((t.added_flags[i] & (kAddedLstrip | kAddedRstrip)) && !HfTextBuiltIn()) {
      return Unimplemented(
          "tokenizer: added token %u strips white space, which needs the Unicode "
          "tables this build leaves out (EMBER_WITH_HF_TEXT=OFF)",
          id);
    }
    const std::string_view text = added_text(i);
    size_t bad = 0;
    if (!ValidUtf8(text, &bad)) {
      return InvalidModel("tokenizer: added token %u is not valid UTF-8", id);
    }
    if (i > 0 && CompareBytes(added_text(i - 1), text) >= 0) {
      return InvalidModel("tokenizer: added tokens out of order (or duplicate) at %zu",
                          i);
    }
    const uint8_t first = static_cast<uint8_t>(text[0]);
    for (int all = 0; all < 2; ++all) {
      if (all || !IsSpecial(type(id))) {
        added_first_bytes_[all][first >> 5] |= 1u << (first & 31);
      }
    }
    if (text.size() > max_added_bytes_) max_added_bytes_ = text.size();
  }
  return Status::Ok();
}

// The index of the longest added token that text[pos..] starts with, or -1. The largest
// token <= the text is the longest match if it is a prefix of the text; otherwise every
// match is shorter than their common prefix, and the search repeats on that. Each round
// shortens the key, and a match that may not be used (a control token without
// parse_special) shortens it too.
int32_t Tokenizer::LongestAddedAt(std::string_view text, size_t pos,
                                  bool parse_special) const {
  size_t len =
      text.size() - pos < max_added_bytes_ ? text.size() - pos : max_added_bytes_;
  while (len > 0) {
    const std::string_view key = text.substr(pos, len);
    size_t lo = 0, hi = t_.num_added;  // the first token > key
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (CompareBytes(added_text(mid), key) <= 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == 0) return -1;
    const std::string_view token = added_text(lo - 1);
    size_t common = 0;
    while (common < token.size() && token[common] == key[common]) ++common;
    if (common < token.size()) {
      len = common;
    } else if (parse_special || !IsSpecial(type(t_.added_ids[lo - 1]))) {
      return static_cast<int32_t>(lo - 1);
    } else {
      len = token.size() - 1;
    }
  }
  return -1;
}

Tokenizer::AddedMatch Tokenizer::FindAdded(std::string_view text, size_t pos,
                                           bool parse_special) const {
  const uint32_t* first_bytes = added_first_bytes_[parse_special ? 1 : 0];
  for (size_t at = pos; at < text.size() && t_.num_added > 0; ++at) {
    if (!HasBit(first_bytes, static_cast<uint8_t>(text[at]))) continue;
    const int32_t i = LongestAddedAt(text, at, parse_special);
    if (i < 0) continue;
    AddedMatch m{at, at + added_text(static_cast<size_t>(i)).size(),
                 static_cast<int32_t>(t_.added_ids[i]), t_.added_flags[i]};
    size_t len = 0;
    if (m.flags & kAddedRstrip) {
      while (m.end < text.size() && IsSpaceAt(text, m.end, &len)) m.end += len;
    }
    if (m.flags & kAddedLstrip) {
      // Back over the white space before it (within this section): step to the lead
      // byte of the code point before, and stop at the first that is not white space.
      while (m.begin > pos) {
        size_t lead = m.begin - 1;
        while (lead > pos && (static_cast<uint8_t>(text[lead]) & 0xC0) == 0x80) --lead;
        if (!IsSpaceAt(text, lead, &len)) break;
        m.begin = lead;
      }
    }
    return m;
  }
  return {text.size(), text.size(), -1, 0};
}

}  // namespace ember
