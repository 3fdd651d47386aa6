// ClassifyCodePoint: ASCII from a 128-entry table, the rest by binary search over the
// generated runs (about 1,600 entries, 6 KB of read-only data).
#include "runtime/text/unicode.h"

#include <cstddef>

namespace ember {
namespace {

// kUnicodeClassRuns and kUnicodeTableVersion, generated at build time (CMakeLists.txt).
#include "runtime/text/unicode_classes.inc"

constexpr CharClass AsciiClass(uint32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ? CharClass::kLetter
         : c >= '0' && c <= '9'                           ? CharClass::kNumber
         : c == ' ' || (c >= '\t' && c <= '\r')           ? CharClass::kSpace
                                                          : CharClass::kOther;
}

struct AsciiTable {
  CharClass classes[128];
  constexpr AsciiTable() : classes() {
    for (uint32_t c = 0; c < 128; ++c) classes[c] = AsciiClass(c);
  }
};
constexpr AsciiTable kAscii;

}  // namespace

CharClass ClassifyCodePoint(uint32_t code_point) {
  if (code_point < 128) return kAscii.classes[code_point];
  if (code_point > 0x10FFFF) return CharClass::kOther;
  // The last run whose first code point is <= code_point.
  const uint32_t key = (code_point << 2) | 3;
  size_t lo = 0, hi = sizeof(kUnicodeClassRuns) / sizeof(kUnicodeClassRuns[0]);
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (kUnicodeClassRuns[mid] <= key) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return static_cast<CharClass>(kUnicodeClassRuns[lo] & 3);
}

const char* UnicodeTableVersion() { return kUnicodeTableVersion; }

}  // namespace ember
