// FormatV and Format: ember's printf (status.h says what it formats), so messages need no
// C library printf (a bare-metal image links none) and print the same everywhere.
#include <cmath>
#include <cstdarg>
#include <cstdint>

#include "runtime/status.h"

namespace ember {
namespace {

constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                             1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                             1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr int kMaxExactPow =
    22;                         // 10^22: the largest power of ten a double holds exactly
constexpr int kMaxDigits = 15;  // significant digits computed (10^15 < 2^53)

// a * 10^k (a >= 0, the result below 2^52) rounded to an integer, ties to even, as the
// decimal value of a rounds. The product is carried as a double-double (hi + lo, the
// rounding errors from fma kept in lo), so lo settles a product that lands on a half.
uint64_t ScaleRound(double a, int k) {
  double hi = a, lo = 0;
  const auto renormalize = [&] {
    const double sum = hi + lo;
    lo -= sum - hi;
    hi = sum;
  };
  while (k > 0) {
    const int step = k < kMaxExactPow ? k : kMaxExactPow;
    k -= step;
    const double s = kPow10[step];
    const double product = hi * s;
    lo = lo * s + std::fma(hi, s, -product);
    hi = product;
    renormalize();
  }
  while (k < 0) {
    const int step = -k < kMaxExactPow ? -k : kMaxExactPow;
    k += step;
    const double d = kPow10[step];
    const double quotient = hi / d;
    lo = (std::fma(-quotient, d, hi) + lo) / d;  // hi - quotient*d is exact
    hi = quotient;
    renormalize();
  }
  const double whole = std::floor(hi);
  const double frac = hi - whole;
  uint64_t n = static_cast<uint64_t>(whole);
  if (frac > 0.5 || (frac == 0.5 && (lo > 0 || (lo == 0 && (n & 1) != 0)))) ++n;
  return n;
}

uint64_t Pow10U(int k) {
  uint64_t p = 1;
  while (k-- > 0) p *= 10;
  return p;
}

// The `digits` (1..15) significant digits of a > 0, rounded, and the decimal exponent
// of the first: a ~ n * 10^(exp10 - digits + 1).
uint64_t Significant(double a, int digits, int* exp10) {
  int e2 = 0;
  std::frexp(a, &e2);
  int e = static_cast<int>(std::floor((e2 - 1) * 0.30102999566398120));
  const uint64_t low = Pow10U(digits - 1), high = Pow10U(digits);
  uint64_t n = 0;
  for (int tries = 0; tries < 4; ++tries) {  // the guess is off by at most one
    n = ScaleRound(a, digits - 1 - e);
    if (n >= high) {
      ++e;
    } else if (n < low) {
      --e;
    } else {
      break;
    }
  }
  if (n >= high) n = high - 1;  // only if the steps above failed to settle
  *exp10 = e;
  return n;
}

struct Sink {
  char* out;
  size_t size;
  size_t n = 0;
  void Put(char c) {
    if (n + 1 < size) out[n] = c;
    ++n;
  }
  void Put(const char* s, size_t len) {
    for (size_t i = 0; i < len; ++i) Put(s[i]);
  }
  void Repeat(char c, int count) {
    for (int i = 0; i < count; ++i) Put(c);
  }
};

struct Spec {
  bool left = false, zero = false, plus = false, space = false, alt = false;
  int width = 0;
  int precision = -1;
  char conv = 0;
};

// Writes prefix (sign, 0x) and body padded to the width, as printf pads.
void Field(Sink& sink, const Spec& spec, const char* prefix, size_t prefix_len,
           const char* body, size_t body_len, bool zero_pad) {
  const int pad = spec.width - static_cast<int>(prefix_len + body_len);
  if (!spec.left && !zero_pad) sink.Repeat(' ', pad);
  sink.Put(prefix, prefix_len);
  if (!spec.left && zero_pad) sink.Repeat('0', pad);
  sink.Put(body, body_len);
  if (spec.left) sink.Repeat(' ', pad);
}

// Digits of n in `base` into the end of buf[0, 24); returns the first.
char* Digits(uint64_t n, unsigned base, bool upper, char* end) {
  const char* set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char* p = end;
  do {
    *--p = set[n % base];
    n /= base;
  } while (n != 0);
  return p;
}

void Integer(Sink& sink, const Spec& spec, uint64_t magnitude, bool negative) {
  char buf[96];
  char* end = buf + sizeof(buf);
  const char c = spec.conv;
  const unsigned base = (c == 'x' || c == 'X' || c == 'p') ? 16 : c == 'o' ? 8 : 10;
  char* p = (magnitude == 0 && spec.precision == 0)
                ? end
                : Digits(magnitude, base, c == 'X', end);
  const int precision =
      spec.precision < 0 ? 1 : (spec.precision > 64 ? 64 : spec.precision);
  while (end - p < precision) *--p = '0';
  if (c == 'o' && spec.alt && (p == end || *p != '0')) *--p = '0';
  char prefix[3];
  size_t prefix_len = 0;
  if (negative) {
    prefix[prefix_len++] = '-';
  } else if ((c == 'd' || c == 'i') && (spec.plus || spec.space)) {
    prefix[prefix_len++] = spec.plus ? '+' : ' ';
  }
  if ((spec.alt && (c == 'x' || c == 'X') && magnitude != 0) || c == 'p') {
    prefix[prefix_len++] = '0';
    prefix[prefix_len++] = c == 'X' ? 'X' : 'x';
  }
  Field(sink, spec, prefix, prefix_len, p, static_cast<size_t>(end - p),
        spec.zero && spec.precision < 0);
}

// The text of a decimal number into buf: digits d[0, n) whose first stands for 10^e
// (digits past n are zeros), one digit before the point (scientific) or all the integer
// digits (fixed), `shown` digits after it (trailing zeros stripped if asked), then the
// exponent if scientific. Returns the length.
size_t Decimal(char* buf, const char* d, int n, int e, bool scientific, int shown,
               bool strip, bool alt, bool upper) {
  size_t len = 0;
  const int point = scientific ? 1 : e + 1;  // digits of d before the point
  const auto digit = [&](int i) { return i >= 0 && i < n ? d[i] : '0'; };
  while (strip && shown > 0 && digit(point + shown - 1) == '0') --shown;
  if (point <= 0) buf[len++] = '0';
  for (int i = 0; i < point; ++i) buf[len++] = digit(i);
  if (shown > 0 || alt) buf[len++] = '.';
  for (int i = 0; i < shown; ++i) buf[len++] = digit(point + i);
  if (scientific) {
    buf[len++] = upper ? 'E' : 'e';
    buf[len++] = e < 0 ? '-' : '+';
    const int magnitude = e < 0 ? -e : e;
    if (magnitude >= 100) buf[len++] = static_cast<char>('0' + magnitude / 100);
    buf[len++] = static_cast<char>('0' + magnitude / 10 % 10);
    buf[len++] = static_cast<char>('0' + magnitude % 10);
  }
  return len;
}

// %f, %e and %g of a double.
void Floating(Sink& sink, const Spec& spec, double v) {
  const char c = spec.conv;
  const bool upper = c == 'F' || c == 'E' || c == 'G';
  char prefix[1];
  size_t prefix_len = 0;
  if (std::signbit(v)) {
    prefix[prefix_len++] = '-';
  } else if (spec.plus || spec.space) {
    prefix[prefix_len++] = spec.plus ? '+' : ' ';
  }
  const double a = std::fabs(v);
  if (!std::isfinite(a)) {
    const char* text = std::isnan(a) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
    Field(sink, spec, prefix, prefix_len, text, 3, false);
    return;
  }
  const int precision =
      spec.precision < 0 ? 6 : (spec.precision > 64 ? 64 : spec.precision);
  char digits[24];
  char* const end = digits + sizeof(digits);
  char buf[400];  // the largest %f: 309 integer digits, a point and 64 decimals
  size_t len = 0;
  if (c == 'f' || c == 'F') {
    int e = 0, n = kMaxDigits;
    const char* d = nullptr;
    if (precision <= kMaxExactPow && a * kPow10[precision] < 4.5e15) {  // below 2^52
      d = Digits(ScaleRound(a, precision), 10, false, end);
      n = static_cast<int>(end - d);
      e = n - 1 - precision;
    } else {
      d = Digits(Significant(a, kMaxDigits, &e), 10, false, end);
    }
    len = Decimal(buf, d, n, e, false, precision, false, spec.alt, upper);
  } else {
    const bool g = c == 'g' || c == 'G';
    const int wanted = g ? (precision == 0 ? 1 : precision) : precision + 1;
    const int n = wanted < kMaxDigits ? wanted : kMaxDigits;
    int e = 0;
    char* d = Digits(a == 0 ? 0 : Significant(a, n, &e), 10, false, end);
    while (end - d < n) *--d = '0';  // zero: n zeros
    const bool scientific = !g || e >= wanted || e < -4;
    const int shown = g ? (scientific ? wanted - 1 : wanted - 1 - e) : precision;
    len = Decimal(buf, d, n, e, scientific, shown, g && !spec.alt, spec.alt, upper);
  }
  Field(sink, spec, prefix, prefix_len, buf, len, spec.zero);
}

}  // namespace

int FormatV(char* out, size_t size, const char* format, va_list args) {
  Sink sink{out, size};
  for (const char* f = format; *f != '\0'; ++f) {
    if (*f != '%') {
      sink.Put(*f);
      continue;
    }
    const char* start = f++;
    Spec spec;
    for (;; ++f) {
      if (*f == '-')
        spec.left = true;
      else if (*f == '0')
        spec.zero = true;
      else if (*f == '+')
        spec.plus = true;
      else if (*f == ' ')
        spec.space = true;
      else if (*f == '#')
        spec.alt = true;
      else
        break;
    }
    if (*f == '*') {
      spec.width = va_arg(args, int);
      if (spec.width < 0) spec.left = true, spec.width = -spec.width;
      ++f;
    } else {
      while (*f >= '0' && *f <= '9' && spec.width < 100000)
        spec.width = spec.width * 10 + (*f++ - '0');
    }
    if (*f == '.') {
      ++f;
      spec.precision = 0;
      if (*f == '*') {
        spec.precision = va_arg(args, int);
        if (spec.precision < 0) spec.precision = -1;
        ++f;
      } else {
        while (*f >= '0' && *f <= '9' && spec.precision < 100000)
          spec.precision = spec.precision * 10 + (*f++ - '0');
      }
    }
    if (spec.width > 4096) spec.width = 4096;
    enum Length { kInt, kShort, kChar, kLong, kLongLong, kSize, kMax, kLongDouble };
    Length length = kInt;
    switch (*f) {
      case 'h':
        length = f[1] == 'h' ? (++f, kChar) : kShort;
        ++f;
        break;
      case 'l':
        length = f[1] == 'l' ? (++f, kLongLong) : kLong;
        ++f;
        break;
      case 'z':
      case 't':
        length = kSize;
        ++f;
        break;
      case 'j':
        length = kMax;
        ++f;
        break;
      case 'L':
        length = kLongDouble;
        ++f;
        break;
      default:
        break;
    }
    spec.conv = *f;
    switch (spec.conv) {
      case 'd':
      case 'i': {
        long long v = 0;
        switch (length) {
          case kShort:
            v = static_cast<short>(va_arg(args, int));
            break;
          case kChar:
            v = static_cast<signed char>(va_arg(args, int));
            break;
          case kLong:
            v = va_arg(args, long);
            break;
          case kLongLong:
            v = va_arg(args, long long);
            break;
          case kSize:
            v = va_arg(args, ptrdiff_t);
            break;
          case kMax:
            v = va_arg(args, intmax_t);
            break;
          default:
            v = va_arg(args, int);
            break;
        }
        const uint64_t m =
            v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
        Integer(sink, spec, m, v < 0);
        break;
      }
      case 'u':
      case 'o':
      case 'x':
      case 'X': {
        unsigned long long v = 0;
        switch (length) {
          case kShort:
            v = static_cast<unsigned short>(va_arg(args, unsigned));
            break;
          case kChar:
            v = static_cast<unsigned char>(va_arg(args, unsigned));
            break;
          case kLong:
            v = va_arg(args, unsigned long);
            break;
          case kLongLong:
            v = va_arg(args, unsigned long long);
            break;
          case kSize:
            v = va_arg(args, size_t);
            break;
          case kMax:
            v = va_arg(args, uintmax_t);
            break;
          default:
            v = va_arg(args, unsigned);
            break;
        }
        Integer(sink, spec, v, false);
        break;
      }
      case 'p': {
        const void* v = va_arg(args, void*);
        if (v == nullptr) {
          Field(sink, spec, "", 0, "(nil)", 5, false);
        } else {
          spec.alt = false;
          Integer(sink, spec, reinterpret_cast<uintptr_t>(v), false);
        }
        break;
      }
      case 'c': {
        const char ch = static_cast<char>(va_arg(args, int));
        Field(sink, spec, "", 0, &ch, 1, false);
        break;
      }
      case 's': {
        const char* s = va_arg(args, const char*);
        if (s == nullptr) s = "(null)";
        // The precision bounds the read: "%.*s" may name text with no terminator.
        size_t n = 0;
        while ((spec.precision < 0 || n < static_cast<size_t>(spec.precision)) &&
               s[n] != '\0')
          ++n;
        Field(sink, spec, "", 0, s, n, false);
        break;
      }
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
        Floating(sink, spec,
                 length == kLongDouble ? static_cast<double>(va_arg(args, long double))
                                       : va_arg(args, double));
        break;
      case '%':
        sink.Put('%');
        break;
      default:  // %n, an unknown conversion or a format cut short: written as text
        if (*f == '\0') --f;
        sink.Put(start, static_cast<size_t>(f - start + 1));
        break;
    }
  }
  if (size > 0) out[sink.n < size ? sink.n : size - 1] = '\0';
  return sink.n > 0x7fffffff ? 0x7fffffff : static_cast<int>(sink.n);
}

int Format(char* out, size_t size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int n = FormatV(out, size, format, args);
  va_end(args);
  return n;
}

}  // namespace ember
