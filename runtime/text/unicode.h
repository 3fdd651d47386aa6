// Unicode character classes for the byte-level BPE pre-tokenizer: letter (\p{L}), number
// (\p{N}), white space (\s) or other, from a compact table generated at build time.
#ifndef EMBER_RUNTIME_TEXT_UNICODE_H_
#define EMBER_RUNTIME_TEXT_UNICODE_H_

#include <cstdint>

namespace ember {

enum class CharClass : uint8_t { kOther = 0, kLetter = 1, kNumber = 2, kSpace = 3 };

// The class of a code point (anything above U+10FFFF is kOther). Letters are general
// category L*, numbers N*, white space the White_Space property (PropList.txt): the
// classes of GPT-2's pre-tokenizer pattern.
CharClass ClassifyCodePoint(uint32_t code_point);

// The Unicode version the table was generated from, e.g. "PropList-15.0.0.txt".
const char* UnicodeTableVersion();

}  // namespace ember

#endif  // EMBER_RUNTIME_TEXT_UNICODE_H_
