// NFC: a quick-check scan copies the spans already normalized; each span that is not
// (from the last boundary before the first failing code point to the next boundary) is
// decomposed, reordered and composed as UAX #15 specifies.
#include "runtime/text/normalizer.h"

#include <cstring>

#include "runtime/text/utf8.h"

namespace ember {
namespace {

// kNfcFirstNontrivial, kNfcPropertyRuns, kNfcDecomposed, kNfcDecompositionRefs,
// kNfcDecompositionPool, kNfcCompositionPairs, kNfcCompositions: generated at build
// time (runtime/CMakeLists.txt).
#include "runtime/text/unicode_nfc.inc"

struct Props {
  uint32_t quick_check;  // 0 yes, 1 maybe, 2 no
  uint32_t ccc;          // canonical combining class
};

Props PropsOf(uint32_t cp) {
  if (cp < kNfcFirstNontrivial) return {0, 0};
  // The last run whose first code point is <= cp.
  const uint32_t key = (cp << 11) | 0x7FF;
  size_t lo = 0, hi = sizeof(kNfcPropertyRuns) / sizeof(kNfcPropertyRuns[0]);
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (kNfcPropertyRuns[mid] <= key) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return {(kNfcPropertyRuns[lo] >> 8) & 3, kNfcPropertyRuns[lo] & 0xFF};
}

// A boundary: no text before it changes it, and it changes no text before it.
bool IsBoundary(Props p) { return p.quick_check == 0 && p.ccc == 0; }

// Hangul syllables decompose and compose by arithmetic (Unicode ch. 3.12).
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr uint32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

// Code points are held with their combining class above them while normalizing.
constexpr int kCccShift = 21;
constexpr uint32_t kCpMask = (1u << kCccShift) - 1;
uint32_t Packed(uint32_t cp) { return (PropsOf(cp).ccc << kCccShift) | cp; }
uint32_t Ccc(uint32_t packed) { return packed >> kCccShift; }

// Appends the full canonical decomposition of cp to out; returns its length.
size_t Decompose(uint32_t cp, uint32_t* out) {
  if (cp - kSBase < kSCount) {
    const uint32_t s = cp - kSBase;
    out[0] = Packed(kLBase + s / kNCount);
    out[1] = Packed(kVBase + s % kNCount / kTCount);
    if (s % kTCount == 0) return 2;
    out[2] = Packed(kTBase + s % kTCount);
    return 3;
  }
  const uint32_t* end = kNfcDecomposed + sizeof(kNfcDecomposed) / sizeof(uint32_t);
  size_t lo = 0, hi = static_cast<size_t>(end - kNfcDecomposed);
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (kNfcDecomposed[mid] < cp) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (kNfcDecomposed + lo == end || kNfcDecomposed[lo] != cp) {
    out[0] = Packed(cp);
    return 1;
  }
  const uint32_t ref = kNfcDecompositionRefs[lo];
  const size_t n = ref & 7;
  for (size_t i = 0; i < n; ++i) out[i] = Packed(kNfcDecompositionPool[(ref >> 3) + i]);
  return n;
}

// The primary composite of (a, b), or 0 (no composite is U+0000).
uint32_t Compose(uint32_t a, uint32_t b) {
  if (a - kLBase < kLCount && b - kVBase < kVCount) {
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  }
  if (a - kSBase < kSCount && (a - kSBase) % kTCount == 0 &&
      b - kTBase - 1 < kTCount - 1) {
    return a + (b - kTBase);
  }
  const uint64_t key = (uint64_t{a} << 21) | b;
  size_t lo = 0, hi = sizeof(kNfcCompositionPairs) / sizeof(kNfcCompositionPairs[0]);
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (kNfcCompositionPairs[mid] < key) {
      lo = mid + 1;
    } else if (kNfcCompositionPairs[mid] > key) {
      hi = mid;
    } else {
      return kNfcCompositions[mid];
    }
  }
  return 0;
}

// Stable sort of v[0, n) by combining class, with tmp[0, n) to merge through: insertion
// for short runs (the usual one or two marks), bottom-up merging above, so that a long
// run of marks stays O(n log n).
void SortByClass(uint32_t* v, size_t n, uint32_t* tmp) {
  constexpr size_t kRun = 16;
  for (size_t start = 0; start < n; start += kRun) {
    const size_t end = start + kRun < n ? start + kRun : n;
    for (size_t i = start + 1; i < end; ++i) {
      const uint32_t x = v[i];
      size_t j = i;
      for (; j > start && Ccc(v[j - 1]) > Ccc(x); --j) v[j] = v[j - 1];
      v[j] = x;
    }
  }
  for (size_t width = kRun; width < n; width *= 2) {
    for (size_t lo = 0; lo + width < n; lo += 2 * width) {
      const size_t mid = lo + width, hi = mid + width < n ? mid + width : n;
      size_t a = lo, b = mid, k = 0;
      while (a < mid && b < hi) tmp[k++] = Ccc(v[b]) < Ccc(v[a]) ? v[b++] : v[a++];
      while (a < mid) tmp[k++] = v[a++];
      while (b < hi) tmp[k++] = v[b++];
      memcpy(v + lo, tmp, k * sizeof(uint32_t));
    }
  }
}

// Normalizes `span` (from a boundary to the next) into out, using the 4-byte aligned
// memory from out onwards for its code points (at most 3 per 2 bytes) and a merge
// buffer of as many: the UTF-8 written never passes the code point being read.
size_t NormalizeSpan(std::string_view span, char* out) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(out);
  uint32_t* cps = reinterpret_cast<uint32_t*>(out + (4 - address % 4) % 4);
  size_t n = 0;
  uint32_t cp = 0;
  for (size_t pos = 0; pos < span.size();) {
    const size_t len = DecodeUtf8(span, pos, &cp);  // > 0: validated text
    n += Decompose(cp, cps + n);
    pos += len;
  }
  // Canonical order: each run of non-starters sorted by combining class.
  for (size_t i = 0; i < n;) {
    if (Ccc(cps[i]) == 0) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < n && Ccc(cps[end]) != 0) ++end;
    SortByClass(cps + i, end - i, cps + n);
    i = end;
  }
  // Canonical composition: a character joins the last starter unless a character
  // between them has class 0 or a class at least its own (it is blocked).
  size_t kept = 1, starter = 0;
  uint32_t last_class = Ccc(cps[0]) == 0 ? 0 : 256;  // a leading mark blocks composing
  for (size_t i = 1; i < n; ++i) {
    const uint32_t c = cps[i], cls = Ccc(c);
    const uint32_t composite = Compose(cps[starter] & kCpMask, c & kCpMask);
    if (composite != 0 && (last_class < cls || last_class == 0)) {
      cps[starter] = Packed(composite);
      continue;
    }
    if (cls == 0) starter = kept;
    last_class = cls;
    cps[kept++] = c;
  }
  size_t bytes = 0;
  for (size_t i = 0; i < kept; ++i) bytes += AppendUtf8(cps[i] & kCpMask, out + bytes);
  return bytes;
}

// The end of the code point at pos, and its properties.
size_t Next(std::string_view text, size_t pos, Props* props) {
  uint32_t cp = 0;
  size_t len = DecodeUtf8(text, pos, &cp);
  if (len == 0) len = 1;  // not reached for validated text; never loop forever
  *props = PropsOf(cp);
  return pos + len;
}

}  // namespace

size_t CanonicalDecomposition(uint32_t code_point, uint32_t* out) {
  const size_t n = Decompose(code_point, out);
  for (size_t i = 0; i < n; ++i) out[i] &= kCpMask;
  return n;
}

bool IsNfcQuick(std::string_view text) {
  uint32_t last_class = 0;
  Props p;
  for (size_t pos = 0; pos < text.size();) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {  // ASCII: yes, class 0
      last_class = 0;
      ++pos;
      continue;
    }
    pos = Next(text, pos, &p);
    if (p.quick_check != 0 || (p.ccc != 0 && p.ccc < last_class)) return false;
    last_class = p.ccc;
  }
  return true;
}

size_t ToNfc(std::string_view text, char* work) {
  size_t written = 0, copied_to = 0, boundary = 0;
  uint32_t last_class = 0;
  Props p;
  for (size_t pos = 0; pos < text.size();) {
    const size_t next = Next(text, pos, &p);
    if (IsBoundary(p)) {
      boundary = pos;
      last_class = 0;
    } else if (p.quick_check == 0 && p.ccc >= last_class) {
      last_class = p.ccc;  // a mark in canonical order after a boundary: unchanged
    } else {
      // Normalize from the last boundary to the next one.
      if (boundary > copied_to) {
        memcpy(work + written, text.data() + copied_to, boundary - copied_to);
      }
      written += boundary - copied_to;
      size_t end = next;
      while (end < text.size()) {
        const size_t after = Next(text, end, &p);
        if (IsBoundary(p)) break;
        end = after;
      }
      written += NormalizeSpan(text.substr(boundary, end - boundary), work + written);
      copied_to = boundary = end;
      last_class = 0;
      pos = end;
      continue;
    }
    pos = next;
  }
  if (text.size() > copied_to) {
    memcpy(work + written, text.data() + copied_to, text.size() - copied_to);
  }
  return written + text.size() - copied_to;
}

}  // namespace ember
