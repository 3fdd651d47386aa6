// Text helpers of the chat template builtins (see template_text.h).
#include "runtime/chat/template_text.h"

#include <cstdio>

namespace ember::tmpl {

bool IsSpaceCodePoint(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

uint32_t Decode(std::string_view s, size_t at, size_t* len) {
  const unsigned char c = static_cast<unsigned char>(s[at]);
  size_t n = c < 0x80         ? 1
             : (c >> 5) == 6  ? 2
             : (c >> 4) == 14 ? 3
             : (c >> 3) == 30 ? 4
                              : 1;
  if (at + n > s.size()) n = 1;
  uint32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (size_t i = 1; i < n; ++i)
    cp = cp << 6 | (static_cast<unsigned char>(s[at + i]) & 0x3F);
  *len = n;
  return cp;
}

namespace {

// Whether code point `cp` (at s[at], `len` bytes) is stripped: in `chars` when given,
// else whitespace.
bool Strippable(std::string_view s, size_t at, size_t len, const Value& chars) {
  if (chars.is_string())
    return chars.str().find(s.substr(at, len)) != std::string_view::npos;
  size_t unused;
  return IsSpaceCodePoint(Decode(s, at, &unused));
}

}  // namespace

std::string_view Strip(std::string_view s, const Value& chars, bool left, bool right) {
  size_t from = 0, to = s.size();
  while (left && from < to) {
    size_t len;
    Decode(s, from, &len);
    if (!Strippable(s, from, len, chars)) break;
    from += len;
  }
  while (right && to > from) {
    size_t start = to - 1;
    while (start > from && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (!Strippable(s, start, to - start, chars)) break;
    to = start;
  }
  return s.substr(from, to - from);
}

Value ChangeCase(std::string_view s, Case mode, Heap* heap) {
  heap->Begin();
  bool word_start = true;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    const bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z';
    bool to_upper = mode == Case::kUpper;
    if (mode == Case::kTitle) to_upper = word_start;
    if (mode == Case::kCapitalize) to_upper = i == 0;
    if (to_upper && lower) c = static_cast<char>(c - 32);
    if (!to_upper && upper) c = static_cast<char>(c + 32);
    word_start = !(lower || upper);
    heap->AppendChar(c);
  }
  return heap->End();
}

Value Replace(std::string_view s, std::string_view from, std::string_view to,
              int64_t count, Heap* heap) {
  heap->Begin();
  size_t at = 0;
  int64_t done = 0;
  while (at <= s.size() && (count < 0 || done < count)) {
    const size_t found = from.empty() ? at : s.find(from, at);
    if (found == std::string_view::npos || found > s.size()) break;
    heap->Append(s.substr(at, found - at));
    heap->Append(to);
    ++done;
    if (from.empty()) {  // Python inserts `to` between every character
      if (found == s.size()) return heap->End();
      size_t len;
      Decode(s, found, &len);
      heap->Append(s.substr(found, len));
      at = found + len;
    } else {
      at = found + from.size();
    }
  }
  if (at < s.size()) heap->Append(s.substr(at));
  return heap->End();
}

Value Split(std::string_view s, const Value& sep, int64_t max_split, Heap* heap) {
  // Two passes: count, then fill (the list's values are one array).
  Value* out = nullptr;
  Value list;
  for (int pass = 0; pass < 2; ++pass) {
    uint32_t n = 0;
    const auto add = [&](std::string_view piece) {
      if (out) out[n] = Value::String(piece);
      ++n;
    };
    if (sep.is_string()) {
      size_t at = 0;
      while (max_split < 0 || static_cast<int64_t>(n) < max_split) {
        const size_t found = s.find(sep.str(), at);
        if (found == std::string_view::npos) break;
        add(s.substr(at, found - at));
        at = found + sep.size;
      }
      add(s.substr(at));
    } else {  // runs of whitespace, no empty pieces
      size_t at = 0;
      while (true) {
        const std::string_view rest = Strip(s.substr(at), Value(), true, false);
        if (rest.empty()) break;
        at = s.size() - rest.size();
        if (max_split >= 0 && static_cast<int64_t>(n) >= max_split) {
          add(Strip(rest, Value(), false, true));
          break;
        }
        size_t end = at;
        while (end < s.size()) {
          size_t len;
          if (IsSpaceCodePoint(Decode(s, end, &len))) break;
          end += len;
        }
        add(s.substr(at, end - at));
        at = end;
      }
    }
    if (pass == 0) list = NewList(n, &out, heap);
    if (!out) break;
  }
  return list;
}

const Value& Arg(const Value* args, uint32_t argc, uint32_t i) {
  static const Value kUndefined;
  return i < argc ? args[i] : kUndefined;
}

Status NeedString(const Value& v, const char* what) {
  if (v.is_string()) return Status::Ok();
  return InvalidArgument("chat template: %s needs a string", what);
}

Status Strftime(int64_t seconds, std::string_view format, Heap* heap, Value* out) {
  static const char* const kMonths[] = {"January",   "February", "March",    "April",
                                        "May",       "June",     "July",     "August",
                                        "September", "October",  "November", "December"};
  static const char* const kDays[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                      "Friday", "Saturday", "Sunday"};
  const int64_t days = seconds / 86400, rest = seconds % 86400;
  // Civil date from days since 1970-01-01 (Howard Hinnant's days_from_civil, inverted).
  const int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153, day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9, year = yoe + era * 400 + (month <= 2);
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  static const int kBefore[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
  const int64_t yday = kBefore[month - 1] + day + (leap && month > 2);
  const int weekday = static_cast<int>((days % 7 + 7 + 3) % 7);  // 1970-01-01: Thursday
  heap->Begin();
  char buf[24];
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 == format.size()) {
      heap->AppendChar(format[i]);
      continue;
    }
    const char d = format[++i];
    const auto number = [&](const char* f, int64_t v) {
      heap->Append(std::string_view(
          buf,
          static_cast<size_t>(snprintf(buf, sizeof(buf), f, static_cast<long long>(v)))));
    };
    switch (d) {
      case 'd':
        number("%02lld", day);
        break;
      case 'm':
        number("%02lld", month);
        break;
      case 'Y':
        number("%lld", year);
        break;
      case 'y':
        number("%02lld", year % 100);
        break;
      case 'j':
        number("%03lld", yday);
        break;
      case 'H':
        number("%02lld", rest / 3600);
        break;
      case 'M':
        number("%02lld", rest / 60 % 60);
        break;
      case 'S':
        number("%02lld", rest % 60);
        break;
      case 'B':
        heap->Append(kMonths[month - 1]);
        break;
      case 'b':
        heap->Append(std::string_view(kMonths[month - 1], 3));
        break;
      case 'A':
        heap->Append(kDays[weekday]);
        break;
      case 'a':
        heap->Append(std::string_view(kDays[weekday], 3));
        break;
      case '%':
        heap->AppendChar('%');
        break;
      default:
        heap->AppendChar('%');
        heap->AppendChar(d);
    }
  }
  *out = heap->End();
  return Done(*heap);
}

}  // namespace ember::tmpl
