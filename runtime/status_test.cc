// FormatV against the C library's snprintf (the oracle): every conversion, flag, width,
// precision and length ember's messages use, then seeded random doubles through %g, %e
// and %f at the precisions FormatV computes exactly.
#include "runtime/status.h"

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "gtest/gtest.h"

namespace ember {
namespace {

// Both formatters into 512-byte buffers; the texts and the returned lengths must agree.
void ExpectSame(const char* format, ...) {
  char ours[512], libc[512];
  va_list a, b;
  va_start(a, format);
  va_copy(b, a);
  const int n_ours = FormatV(ours, sizeof(ours), format, a);
  const int n_libc = vsnprintf(libc, sizeof(libc), format, b);
  va_end(b);
  va_end(a);
  EXPECT_STREQ(ours, libc) << "format \"" << format << "\"";
  EXPECT_EQ(n_ours, n_libc) << "format \"" << format << "\"";
}

TEST(FormatTest, IntegersMatchSnprintf) {
  ExpectSame("%d %i %u", 0, -1, 4294967295u);
  ExpectSame("%d %d", std::numeric_limits<int>::min(), std::numeric_limits<int>::max());
  ExpectSame("%lld %llu", std::numeric_limits<long long>::min(),
             std::numeric_limits<unsigned long long>::max());
  ExpectSame("%ld %lu %zu %zd", -123456789L, 123456789UL, size_t{987654321},
             ptrdiff_t{-5});
  ExpectSame("%hd %hu %hhd %hhu", 70000, 70000, 300, 300);
  ExpectSame("%jd %ju", intmax_t{-42}, uintmax_t{42});
  ExpectSame("[%5d] [%-5d] [%05d] [%+d] [% d] [%+05d]", 42, 42, 42, 42, 42, -42);
  ExpectSame("[%.3d] [%8.3d] [%-8.3d] [%08.3d] [%.0d] [%5.0d]", 7, 7, 7, 7, 0, 0);
  ExpectSame("%x %X %o %#x %#X %#o %#o", 0xbeefu, 0xbeefu, 8u, 255u, 255u, 8u, 0u);
  ExpectSame("%02X %04X %02x %08x %04x %#x", 0xau, 0xabu, 0xfu, 0xdeadu, 0x1u, 0u);
  ExpectSame("%02lld %03lld %02d", 5LL, -5LL, 9);
  ExpectSame("[%*d] [%-*d] [%*d] [%.*d]", 6, 1, 6, 1, -6, 1, 4, 1);
}

TEST(FormatTest, TextMatchesSnprintf) {
  ExpectSame("%s|%10s|%-10s|%.2s|%.*s|%.0s", "abc", "abc", "abc", "abc", 3, "abcdef",
             "x");
  ExpectSame("%c%c%5c%-3c|", 'a', 'b', 'c', 'd');
  ExpectSame("100%% of %s", "it");
  ExpectSame("no conversions at all");
  ExpectSame("%s", "");
  int local = 0;
  ExpectSame("%p", static_cast<void*>(&local));
  ExpectSame("%p", static_cast<void*>(nullptr));
}

TEST(FormatTest, FloatsInEmbersMessagesMatchSnprintf) {
  for (const double v : {0.0,         -0.0,     1.0,      -1.0,
                         0.5,         1.5,      2.5,      0.15,
                         0.25,        0.35,     1e-6,     1e6,
                         1e12,        1e-5,     1e-4,     123456.0,
                         1234567.0,   0.1,      0.7,      3.14159265358979,
                         2.0 / 3.0,   99999.95, 999999.5, 9.9999995,
                         1e22,        1e-22,    5e-324,   1.7976931348623157e308,
                         0.000123456, 65504.0,  1e15,     123.456}) {
    ExpectSame("%g %e %G %E %.1g %.3g %.10g %.0e %.3e %.14e", v, v, v, v, v, v, v, v, v,
               v);
    ExpectSame("[%-12.3g] [%+g] [% e] [%#.0e] [%012.3e]", v, v, v, v, v);
    if (std::fabs(v) < 4.5e-1) ExpectSame("%.15f", v);
    if (std::fabs(v) < 4.5e9) {  // %f is exact while the value x 10^precision < 2^52
      ExpectSame("%f %F %.0f %.1f %.4f", v, v, v, v, v);
      ExpectSame("[%12.3f] [%012.2f] [%#.0f] [%-+9.2f]", v, v, v, v);
    }
  }
  // %#g keeps trailing zeros. (glibc prints 999999.5 as "1.e+06" where C says
  // "1.00000e+06", so the loop above leaves %#g out.)
  ExpectSame("%#g %#g %#.3g %#g", 1.5, 100.0, 0.0001, 0.0);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ExpectSame("%g %f %e %G %F %E [%5g] [%-6f] [%06g]", inf, -inf, inf, inf, -inf, inf, inf,
             inf, -inf);
  ExpectSame("%g %f %G [%5g]", nan, nan, nan, nan);
  ExpectSame("%Lg %Lf", 1.25L, -3.5L);
  ExpectSame(
      "the model's context of %zu positions needs a session of %.1f GiB, over the "
      "%.0f GiB allowed",
      size_t{131072}, 17.25, 4.0);
}

// Seeded, so every run checks the same values: doubles spread over 1e-300..1e300 for
// %g and %e, 1e-15..1e15 for %f (and their negatives), at every precision FormatV
// computes exactly (for %f: while the value x 10^precision stays below 2^52).
TEST(FormatTest, RandomDoublesMatchSnprintf) {
  std::mt19937_64 rng(20261129);
  std::uniform_real_distribution<double> exponent(-300.0, 300.0), fixed(-15.0, 15.0);
  std::uniform_int_distribution<int> sign(0, 1);
  char format[16];
  for (int i = 0; i < 20000; ++i) {
    double v = std::pow(10.0, i % 2 == 0 ? exponent(rng) : fixed(rng));
    if (i % 3 == 0) v = std::round(v * 1000.0) / 1000.0;  // short decimals: many ties
    if (sign(rng) != 0) v = -v;
    const int precision = i % 15;
    for (const char conv : {'g', 'e', 'f'}) {
      if (conv == 'f' && std::fabs(v) * std::pow(10.0, precision) >= 4.5e15) continue;
      std::snprintf(format, sizeof(format), "%%.%d%c", precision + (conv == 'g'), conv);
      ExpectSame(format, v);
    }
    if (HasFailure()) break;  // one value's report, not thousands
  }
}

// "%.*s" of text with no terminator reads only the precision's bytes (the template VM's
// messages name slices of its strings this way); ASan sees a read past them.
TEST(FormatTest, APrecisionBoundsTheTextRead) {
  const char unterminated[3] = {'a', 'b', 'c'};
  char out[16];
  EXPECT_EQ(Format(out, sizeof(out), "[%.*s]", 3, unterminated), 5);
  EXPECT_STREQ(out, "[abc]");
  EXPECT_EQ(Format(out, sizeof(out), "[%.2s]", unterminated), 4);
  EXPECT_STREQ(out, "[ab]");
}

TEST(FormatTest, TruncatesAndTerminatesLikeSnprintf) {
  char out[8];
  std::memset(out, 'x', sizeof(out));
  EXPECT_EQ(Format(out, sizeof(out), "%s-%d", "abcdef", 12345), 12);
  EXPECT_STREQ(out, "abcdef-");
  EXPECT_EQ(Format(out, 1, "%d", 7), 1);
  EXPECT_STREQ(out, "");
  EXPECT_EQ(Format(nullptr, 0, "%g", 2.5), 3);
}

// Format without the compiler's format check, for formats it would refuse.
int Unchecked(char* out, size_t size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int n = FormatV(out, size, format, args);
  va_end(args);
  return n;
}

TEST(FormatTest, NeverInterpretsPercentNOrUnknownConversions) {
  char out[64];
  int ignored = 0;
  Unchecked(out, sizeof(out), "a%nb", &ignored);
  EXPECT_STREQ(out, "a%nb");
  EXPECT_EQ(ignored, 0);
  Unchecked(out, sizeof(out), "%y%", 1);
  EXPECT_STREQ(out, "%y%");
}

TEST(FormatTest, StatusMessagesAreFormattedByIt) {
  const Status status = InvalidArgument("temperature %g: not a finite number >= 0", -0.5);
  EXPECT_STREQ(status.message(), "temperature -0.5: not a finite number >= 0");
  std::string long_text(1000, 'y');
  const Status cut = Internal("%s", long_text.c_str());
  EXPECT_EQ(std::strlen(cut.message()), Status::kMaxMessageBytes - 1);
}

}  // namespace
}  // namespace ember
