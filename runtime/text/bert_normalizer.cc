// BertNormalizer and BertPreTokenizer (see bert_normalizer.h): one pass over the code
// points, each looked up by binary search in the generated tables.
#include "runtime/text/bert_normalizer.h"

#include "runtime/text/normalizer.h"
#include "runtime/text/unicode.h"
#include "runtime/text/utf8.h"

namespace ember {
namespace {

// kGeneratedMaxGrowth, kBertClassRuns, kBertLowerFrom, kBertLowerTo, kBertLowerPool:
// generated at build time (CMakeLists.txt).
#include "runtime/text/unicode_bert.inc"

static_assert(kGeneratedMaxGrowth == kBertMaxGrowth, "regenerate the BERT tables");

enum BertClass : uint32_t {
  kNone = 0,
  kPunct = 1,
  kOtherCategory = 2,
  kNonspacingMark = 3
};

BertClass ClassOf(uint32_t cp) {
  if (cp > 0x10FFFF) return kNone;
  const uint32_t key = (cp << 2) | 3;  // the last run whose first code point is <= cp
  size_t lo = 0, hi = sizeof(kBertClassRuns) / sizeof(kBertClassRuns[0]);
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (kBertClassRuns[mid] <= key) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return static_cast<BertClass>(kBertClassRuns[lo] & 3);
}

// Appends the lowercase of cp (1 to 3 code points) as UTF-8.
size_t AppendLower(uint32_t cp, char* out) {
  if (cp < 0x80) {
    *out = static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
    return 1;
  }
  size_t lo = 0, hi = sizeof(kBertLowerFrom) / sizeof(kBertLowerFrom[0]);
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (kBertLowerFrom[mid] < cp) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == sizeof(kBertLowerFrom) / sizeof(kBertLowerFrom[0]) ||
      kBertLowerFrom[lo] != cp) {
    return AppendUtf8(cp, out);
  }
  const uint32_t ref = kBertLowerTo[lo];
  size_t bytes = 0;
  for (uint32_t i = 0; i < (ref & 3); ++i) {
    bytes += AppendUtf8(kBertLowerPool[(ref >> 2) + i], out + bytes);
  }
  return bytes;
}

// One code point's accents stripped (decomposed, Mn dropped) and/or lowercased.
size_t AppendStrippedLowered(uint32_t cp, const BertNormalizerOptions& options,
                             char* out) {
  if (!options.strip_accents) {
    return options.lowercase ? AppendLower(cp, out) : AppendUtf8(cp, out);
  }
  uint32_t parts[kMaxDecomposition];
  const size_t n = cp < 0xC0 ? (parts[0] = cp, 1) : CanonicalDecomposition(cp, parts);
  size_t bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    if (parts[i] >= 0x300 && ClassOf(parts[i]) == kNonspacingMark) continue;
    bytes += options.lowercase ? AppendLower(parts[i], out + bytes)
                               : AppendUtf8(parts[i], out + bytes);
  }
  return bytes;
}

}  // namespace

bool IsBertChineseChar(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool IsBertPunctuation(uint32_t cp) { return ClassOf(cp) == kPunct; }

bool IsBertSpace(uint32_t cp) {
  return cp == '\t' || cp == '\n' || cp == '\r' ||
         ClassifyCodePoint(cp) == CharClass::kSpace;
}

size_t BertNormalize(std::string_view text, const BertNormalizerOptions& options,
                     char* out) {
  size_t bytes = 0;
  uint32_t cp = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t len = DecodeUtf8(text, pos, &cp);
    if (len == 0) len = 1, cp = 0xFFFD;  // not reached for validated text
    pos += len;
    if (options.clean_text) {
      // Dropped first (U+0085 is a control character before it is white space), then
      // white space becomes ' '.
      const bool tab_or_line = cp == '\t' || cp == '\n' || cp == '\r';
      if (cp == 0 || cp == 0xFFFD || (!tab_or_line && ClassOf(cp) == kOtherCategory)) {
        continue;
      }
      if (IsBertSpace(cp)) {
        out[bytes++] = ' ';
        continue;
      }
    }
    const bool spaced = options.handle_chinese_chars && IsBertChineseChar(cp);
    if (spaced) out[bytes++] = ' ';
    bytes += AppendStrippedLowered(cp, options, out + bytes);
    if (spaced) out[bytes++] = ' ';
  }
  return bytes;
}

size_t BertChunkEnd(std::string_view text, size_t pos) {
  uint32_t cp = 0;
  size_t len = DecodeUtf8(text, pos, &cp);
  if (len == 0) return pos + 1;  // not reached for validated text; never loop forever
  if (IsBertPunctuation(cp)) return pos + len;
  const bool space = IsBertSpace(cp);
  for (pos += len; pos < text.size(); pos += len) {
    len = DecodeUtf8(text, pos, &cp);
    if (len == 0) return pos;
    if (IsBertSpace(cp) != space || (!space && IsBertPunctuation(cp))) break;
  }
  return pos;
}

}  // namespace ember
