// Unicode normalization form C (UAX #15) of UTF-8 text, in the caller's memory: the
// tables are generated at build time from Debian's unicode-data, nothing is allocated.
#ifndef EMBER_RUNTIME_TEXT_NORMALIZER_H_
#define EMBER_RUNTIME_TEXT_NORMALIZER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ember {

// True when the quick check (NFC_Quick_Check, canonical order) proves `text` is in NFC:
// normalizing would return it unchanged. False means it may not be. `text` must be
// valid UTF-8.
bool IsNfcQuick(std::string_view text);

// NFC never makes text more than 3 times longer in UTF-8 (U+1D160 is 4 bytes, its
// normalization 12; gen_unicode_classes.py checks the bound on the tables).
inline constexpr size_t kNfcMaxGrowth = 3;

// Bytes of work memory ToNfc needs for text of `text_bytes` bytes: room for the result
// (kNfcMaxGrowth per byte) and, after it, the code points of the span being normalized
// with a merge buffer for reordering (at most 3 code points per 2 bytes, 4 bytes each,
// twice), plus alignment.
inline constexpr size_t NfcWorkBytes(size_t text_bytes) { return 15 * text_bytes + 8; }

// Writes the NFC form of `text` (valid UTF-8) to work[0, returned size). `work` holds
// at least NfcWorkBytes(text.size()) bytes and must not overlap `text`. Spans already in
// NFC are copied; the rest is decomposed, put in canonical order and composed.
size_t ToNfc(std::string_view text, char* work);

// The full canonical decomposition of `code_point` (itself when it has none) into
// out[0, returned count), at most kMaxDecomposition code points, Hangul syllables
// included (BertNormalizer's strip_accents decomposes one code point at a time).
inline constexpr size_t kMaxDecomposition = 7;
size_t CanonicalDecomposition(uint32_t code_point, uint32_t* out);

}  // namespace ember

#endif  // EMBER_RUNTIME_TEXT_NORMALIZER_H_
