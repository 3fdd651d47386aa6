// UTF-8 validation, decoding and encoding of one code point (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF).
#ifndef EMBER_RUNTIME_TEXT_UTF8_H_
#define EMBER_RUNTIME_TEXT_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ember {

// Decodes the code point at text[pos]; returns its byte length, or 0 if the bytes there
// are not valid UTF-8.
inline size_t DecodeUtf8(std::string_view text, size_t pos, uint32_t* code_point) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[pos + i]); };
  const size_t left = text.size() - pos;
  const uint8_t b0 = byte(0);
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  }
  size_t len;
  uint32_t cp, min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (left < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return len;
}

// True if all of `text` is valid UTF-8; otherwise false with the first bad offset.
inline bool ValidUtf8(std::string_view text, size_t* bad_offset) {
  uint32_t cp;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = DecodeUtf8(text, pos, &cp);
    if (len == 0) {
      *bad_offset = pos;
      return false;
    }
    pos += len;
  }
  return true;
}

// Writes `cp` (a Unicode scalar value) as UTF-8 to out; returns its length (1 to 4).
inline size_t AppendUtf8(uint32_t cp, char* out) {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

}  // namespace ember

#endif  // EMBER_RUNTIME_TEXT_UTF8_H_
