// The pre-tokenizer patterns, one branch per alternative (see pretokenizer.h).
#include "runtime/text/pretokenizer.h"

#include <cstdint>

#include "runtime/text/bert_normalizer.h"
#include "runtime/text/unicode.h"
#include "runtime/text/utf8.h"

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

char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

// 's|'t|'re|'ve|'m|'ll|'d at pos (ASCII case-insensitive when `any_case`): its end, or 0.
size_t ContractionEnd(std::string_view text, size_t pos, bool any_case) {
  const size_t n = text.size();
  if (text[pos] != '\'' || pos + 1 >= n) return 0;
  const auto lower = [&](size_t i) { return any_case ? AsciiLower(text[i]) : text[i]; };
  const char a = lower(pos + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return pos + 2;
  if (pos + 2 < n) {
    const char b = lower(pos + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
      return pos + 3;
    }
  }
  return 0;
}

// GPT-2's pattern. With `split_digits` (SmolLM: Digits(individual_digits) first, then
// the pattern within each piece between digits) every \p{N} code point is a chunk of its
// own and, to the pattern, the end of the text.
size_t Gpt2Pattern(std::string_view text, size_t pos, bool split_digits) {
  const size_t n = text.size();
  const CodePoint c0 = At(text, pos);
  if (split_digits && c0.cls == CharClass::kNumber) return pos + c0.len;
  // 's|'t|'re|'ve|'m|'ll|'d (lower case only).
  if (const size_t end = ContractionEnd(text, pos, false)) return end;
  // ' ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+': an optional ASCII space, then a run of one
  // class. A space followed by white space (or nothing) matches none of them.
  size_t start = pos;
  if (text[pos] == ' ' && pos + 1 < n) {
    const CharClass next = At(text, pos + 1).cls;
    if (next != CharClass::kSpace && !(split_digits && next == CharClass::kNumber)) {
      start = pos + 1;
    }
  }
  const CodePoint first = start == pos ? c0 : At(text, start);
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
  const bool at_end =
      end == n || (split_digits && At(text, end).cls == CharClass::kNumber);
  if (!at_end && last > pos) return last;
  return end;
}

bool IsCrLf(char c) { return c == '\r' || c == '\n'; }

// Llama 3's pattern (max_digits 3) and Qwen2's (max_digits 1):
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
//   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t SplitPattern(std::string_view text, size_t pos, int max_digits) {
  const size_t n = text.size();
  if (const size_t end = ContractionEnd(text, pos, true)) return end;
  const CodePoint c0 = At(text, pos);
  // [^\r\n\p{L}\p{N}]?\p{L}+: a letter run, after at most one code point that is not a
  // letter, a number, CR or LF (a space, a tab, punctuation: " word", "(word").
  if (c0.cls == CharClass::kLetter) return RunEnd(text, pos + c0.len, CharClass::kLetter);
  if (c0.cls != CharClass::kNumber && !IsCrLf(text[pos]) && pos + c0.len < n &&
      At(text, pos + c0.len).cls == CharClass::kLetter) {
    return RunEnd(text, pos + c0.len, CharClass::kLetter);
  }
  // \p{N}{1,max_digits}
  if (c0.cls == CharClass::kNumber) {
    size_t end = pos + c0.len;
    for (int i = 1; i < max_digits && end < n; ++i) {
      const CodePoint c = At(text, end);
      if (c.cls != CharClass::kNumber) break;
      end += c.len;
    }
    return end;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*: an optional ASCII space, a run of "other", then CRs and
  //  LFs.
  size_t start = pos;
  if (text[pos] == ' ' && pos + 1 < n && At(text, pos + 1).cls == CharClass::kOther) {
    start = pos + 1;
  }
  const CodePoint first = start == pos ? c0 : At(text, start);
  if (first.cls == CharClass::kOther) {
    size_t end = RunEnd(text, start + first.len, CharClass::kOther);
    while (end < n && IsCrLf(text[end])) ++end;
    return end;
  }
  // c0 is white space. \s*[\r\n]+: the run up to and with its last CR or LF (\s*
  // backtracks from the whole run to the last place [\r\n]+ can match).
  size_t end = pos, last = pos, after_crlf = 0;
  while (end < n) {
    const CodePoint c = At(text, end);
    if (c.cls != CharClass::kSpace) break;
    if (IsCrLf(text[end])) after_crlf = end + 1;
    last = end;
    end += c.len;
  }
  if (after_crlf) return after_crlf;
  // \s+(?!\S), then \s+: as in GPT-2's pattern.
  if (end < n && last > pos) return last;
  return end;
}

}  // namespace

bool HfTextBuiltIn() { return true; }

size_t Gpt2ChunkEnd(std::string_view text, size_t pos) {
  return Gpt2Pattern(text, pos, false);
}

size_t ChunkEnd(PreTokenizerKind kind, std::string_view text, size_t pos) {
  switch (kind) {
    case PreTokenizerKind::kGpt2:
      return Gpt2Pattern(text, pos, false);
    case PreTokenizerKind::kSmolLm:
      return Gpt2Pattern(text, pos, true);
    case PreTokenizerKind::kLlama3:
      return SplitPattern(text, pos, 3);
    case PreTokenizerKind::kQwen2:
      return SplitPattern(text, pos, 1);
    case PreTokenizerKind::kBert:
      return BertChunkEnd(text, pos);
    case PreTokenizerKind::kDefault:
    case PreTokenizerKind::kNone:
      break;
  }
  return text.size();
}

}  // namespace ember
