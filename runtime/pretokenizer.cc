// Gpt2ChunkEnd: the GPT-2 pattern's alternatives, one branch each (see pretokenizer.h).
#include "runtime/pretokenizer.h"

#include <cstdint>

#include "runtime/unicode.h"
#include "runtime/utf8.h"

namespace ember {
namespace {

struct CodePoint {
  size_t len;  // bytes
  CharClass cls;
};

// The code point at text[pos] (valid UTF-8, pos < size).
CodePoint At(std::string_view text, size_t pos) {
  uint32_t cp = 0;
  size_t len = DecodeUtf8(text, pos, &cp);
  if (len == 0) len = 1;  // not reached for validated text; never loop forever
  return {len, ClassifyCodePoint(cp)};
}

// End of the run of code points of class `cls` starting at pos.
size_t RunEnd(std::string_view text, size_t pos, CharClass cls) {
  while (pos < text.size()) {
    const CodePoint c = At(text, pos);
    if (c.cls != cls) break;
    pos += c.len;
  }
  return pos;
}

}  // namespace

size_t Gpt2ChunkEnd(std::string_view text, size_t pos) {
  const size_t n = text.size();
  // 's|'t|'re|'ve|'m|'ll|'d (lower case only, as in GPT-2's pattern).
  if (text[pos] == '\'' && pos + 1 < n) {
    const char a = text[pos + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return pos + 2;
    if (pos + 2 < n) {
      const char b = text[pos + 2];
      if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
        return pos + 3;
      }
    }
  }
  // ' ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+': an optional ASCII space, then a run of one
  // class. A space followed by white space (or nothing) matches none of them.
  size_t start = pos;
  if (text[pos] == ' ' && pos + 1 < n && At(text, pos + 1).cls != CharClass::kSpace) {
    start = pos + 1;
  }
  const CodePoint first = At(text, start);
  if (first.cls != CharClass::kSpace) return RunEnd(text, start + first.len, first.cls);

  // \s+(?!\S): the white-space run, less its last code point when a non-space follows
  // (that code point then prefixes the next chunk); \s+ when the run is one code point.
  size_t end = pos, last = pos;
  while (end < n) {
    const CodePoint c = At(text, end);
    if (c.cls != CharClass::kSpace) break;
    last = end;
    end += c.len;
  }
  if (end < n && last > pos) return last;
  return end;
}

}  // namespace ember
