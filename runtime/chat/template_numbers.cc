// Python's arithmetic on the chat template's numbers (see template_numbers.h).
#include "runtime/chat/template_numbers.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "runtime/chat/template_text.h"
#include "runtime/checked_math.h"

namespace ember::tmpl {
namespace {

constexpr double kTwoTo63 = 9223372036854775808.0;

double FloatOf(const Value& v) {
  return v.kind == Kind::kFloat ? v.f : static_cast<double>(IntOf(v));
}

// A number as Python prints it, for messages; in brackets when negative, so that
// (-2) ** 64 reads as it was written.
struct Printed {
  explicit Printed(const Value& v) {
    char digits[32];
    if (v.kind == Kind::kFloat) {
      digits[FormatFloat(v.f, digits)] = '\0';
    } else {
      snprintf(digits, sizeof(digits), "%lld", static_cast<long long>(IntOf(v)));
    }
    snprintf(text, sizeof(text), digits[0] == '-' ? "(%s)" : "%s", digits);
  }
  char text[40];
};

const char* OperatorText(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSubtract:
      return "-";
    case BinaryOp::kMultiply:
      return "*";
    case BinaryOp::kDivide:
      return "/";
    case BinaryOp::kFloorDivide:
      return "//";
    case BinaryOp::kModulo:
      return "%";
    default:
      return "**";
  }
}

Status TooBig(BinaryOp op, const Value& a, const Value& b) {
  return InvalidArgument("chat template: %s %s %s does not fit a 64-bit integer",
                         Printed(a).text, OperatorText(op), Printed(b).text);
}

// Python's float // and %: the quotient floored, the remainder with the divisor's sign
// (7.5 % inf is 7.5 and -7.5 % inf is inf, where x - floor(x / y) * y gives nan).
double FloorDivide(double x, double y, double* remainder) {
  double mod = std::fmod(x, y);
  double div = (x - mod) / y;
  if (mod != 0) {
    if ((y < 0) != (mod < 0)) {
      mod += y;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, y);
  }
  if (div != 0) {
    const double floored = std::floor(div);
    div = div - floored > 0.5 ? floored + 1.0 : floored;
  } else {
    div = std::copysign(0.0, x / y);
  }
  *remainder = mod;
  return div;
}

// Python's float ** float, which raises where C's pow returns inf or nan.
Status FloatPower(const Value& a, const Value& b, Value* out) {
  const double x = FloatOf(a), y = FloatOf(b);
  const bool finite = std::isfinite(x) && std::isfinite(y);
  if (x == 0 && y < 0 && std::isfinite(y)) {
    return InvalidArgument(
        "chat template: %s ** %s: zero cannot be raised to a negative power",
        Printed(a).text, Printed(b).text);
  }
  if (finite && x < 0 && y != std::floor(y)) {
    return InvalidArgument(
        "chat template: %s ** %s is a complex number (a negative base, a fractional "
        "exponent)",
        Printed(a).text, Printed(b).text);
  }
  const double r = std::pow(x, y);
  if (finite && std::isinf(r)) {
    return InvalidArgument("chat template: %s ** %s overflows a float", Printed(a).text,
                           Printed(b).text);
  }
  *out = Value::Float(r);
  return Status::Ok();
}

// base ** exponent exactly (exponent >= 0), by squaring: at most 63 steps whatever the
// exponent, and false as soon as the result cannot fit.
bool IntPower(int64_t base, int64_t exponent, int64_t* out) {
  int64_t result = 1;
  while (true) {
    if ((exponent & 1) && !CheckedMul(result, base, &result)) return false;
    exponent >>= 1;
    if (exponent == 0) break;
    // Squaring overflows only for |base| >= 2^32, and then any further factor does too.
    if (!CheckedMul(base, base, &base)) return false;
  }
  *out = result;
  return true;
}

Status IntBinary(BinaryOp op, const Value& a, const Value& b, Value* out) {
  const int64_t x = IntOf(a), y = IntOf(b);
  int64_t r = 0;
  bool fits = true;
  switch (op) {
    case BinaryOp::kAdd:
      fits = CheckedAdd(x, y, &r);
      break;
    case BinaryOp::kSubtract:
      fits = !__builtin_sub_overflow(x, y, &r);
      break;
    case BinaryOp::kMultiply:
      fits = CheckedMul(x, y, &r);
      break;
    case BinaryOp::kFloorDivide:
    case BinaryOp::kModulo: {
      int64_t q, m;
      if (y == -1) {  // x / -1 traps for the smallest x; its remainder is 0
        fits = x != std::numeric_limits<int64_t>::min();
        q = fits ? -x : 0;
        m = 0;
      } else {
        q = x / y;
        m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) {  // Python floors toward -infinity
          --q;
          m += y;
        }
      }
      r = op == BinaryOp::kFloorDivide ? q : m;
      if (op == BinaryOp::kModulo) fits = true;
      break;
    }
    case BinaryOp::kPower:
      if (y < 0) return FloatPower(a, b, out);  // 2 ** -1 is 0.5 in Python
      fits = IntPower(x, y, &r);
      break;
    default:
      return InvalidArgument("chat template: unknown operator");
  }
  if (!fits) return TooBig(op, a, b);
  *out = Value::Int(r);
  return Status::Ok();
}

// Python's int() of a finite float: truncated toward zero.
Status Truncate(double f, Value* out) {
  const double t = std::trunc(f);
  if (!(t >= -kTwoTo63 && t < kTwoTo63)) {
    char text[40];
    text[FormatFloat(f, text)] = '\0';
    return InvalidArgument("chat template: int of %s does not fit a 64-bit integer",
                           text);
  }
  *out = Value::Int(static_cast<int64_t>(t));
  return Status::Ok();
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Python's int(s, 10) of a stripped string: sign, then digits with single underscores
// between them. kTooBig: Python reads it, as an integer past 64 bits.
enum class Read { kNo, kYes, kTooBig, kTooLong };

Read ReadInt(std::string_view s, int64_t* out) {
  size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) ++i;
  uint64_t magnitude = 0;
  size_t digits = 0;
  bool big = false;
  for (; i < s.size(); ++i) {
    if (IsDigit(s[i])) {
      const uint64_t d = static_cast<uint64_t>(s[i] - '0');
      big |= magnitude > (std::numeric_limits<uint64_t>::max() - d) / 10;
      if (!big) magnitude = magnitude * 10 + d;
      ++digits;
    } else if (!(s[i] == '_' && digits > 0 && i + 1 < s.size() && IsDigit(s[i + 1]))) {
      break;
    }
  }
  if (digits == 0 || i != s.size()) return Read::kNo;
  const uint64_t limit = (uint64_t{1} << 63) - (negative ? 0 : 1);
  if (big || magnitude > limit) return Read::kTooBig;
  *out = !negative            ? static_cast<int64_t>(magnitude)
         : magnitude == limit ? std::numeric_limits<int64_t>::min()
                              : -static_cast<int64_t>(magnitude);
  return Read::kYes;
}

bool SameLetters(std::string_view s, const char* lower) {
  size_t i = 0;
  for (; i < s.size() && lower[i]; ++i) {
    if ((s[i] | 0x20) != lower[i]) return false;
  }
  return i == s.size() && !lower[i];
}

// Python's float(s) of a stripped string: decimal digits (underscores between them),
// an optional fraction and exponent, or inf, infinity, nan in any case. strtod alone
// also reads hex ("0x10") and "nan(...)", which Python refuses.
Read ReadFloat(std::string_view s, double* out) {
  char buf[64];
  size_t n = 0, i = 0;
  const auto put = [&](char c) {
    if (n + 1 < sizeof(buf)) buf[n] = c;
    ++n;
  };
  const auto digits = [&]() {
    size_t count = 0;
    for (; i < s.size(); ++i) {
      if (IsDigit(s[i])) {
        put(s[i]);
        ++count;
      } else if (!(s[i] == '_' && count > 0 && i + 1 < s.size() && IsDigit(s[i + 1]))) {
        break;
      }
    }
    return count;
  };
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) put(s[i++]);
  const std::string_view word = s.substr(i);
  if (SameLetters(word, "inf") || SameLetters(word, "infinity")) {
    *out = negative ? -HUGE_VAL : HUGE_VAL;
    return Read::kYes;
  }
  if (SameLetters(word, "nan")) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return Read::kYes;
  }
  size_t mantissa = digits();
  if (i < s.size() && s[i] == '.') {
    put(s[i++]);
    mantissa += digits();
  }
  if (mantissa == 0) return Read::kNo;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    put(s[i++]);
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) put(s[i++]);
    if (digits() == 0) return Read::kNo;
  }
  if (i != s.size()) return Read::kNo;
  if (n >= sizeof(buf)) return Read::kTooLong;
  buf[n] = '\0';
  *out = strtod(buf, nullptr);
  return Read::kYes;
}

Status TooLong(const char* filter, std::string_view s) {
  return InvalidArgument(
      "chat template: %s of a number written in %zu characters (at most 63 are read)",
      filter, s.size());
}

}  // namespace

Status NumberBinary(BinaryOp op, const Value& a, const Value& b, Value* out) {
  const bool ints = IsInteger(a) && IsInteger(b);
  if (op != BinaryOp::kAdd && op != BinaryOp::kSubtract && op != BinaryOp::kMultiply &&
      op != BinaryOp::kPower && FloatOf(b) == 0.0) {
    return InvalidArgument("chat template: %s %s 0: division by zero", Printed(a).text,
                           OperatorText(op));
  }
  if (ints && op != BinaryOp::kDivide) return IntBinary(op, a, b, out);
  const double x = FloatOf(a), y = FloatOf(b);
  double remainder;
  switch (op) {
    case BinaryOp::kAdd:
      *out = Value::Float(x + y);
      return Status::Ok();
    case BinaryOp::kSubtract:
      *out = Value::Float(x - y);
      return Status::Ok();
    case BinaryOp::kMultiply:
      *out = Value::Float(x * y);
      return Status::Ok();
    case BinaryOp::kDivide:
      *out = Value::Float(x / y);
      return Status::Ok();
    case BinaryOp::kFloorDivide:
      *out = Value::Float(FloorDivide(x, y, &remainder));
      return Status::Ok();
    case BinaryOp::kModulo:
      FloorDivide(x, y, &remainder);
      *out = Value::Float(remainder);
      return Status::Ok();
    case BinaryOp::kPower:
      return FloatPower(a, b, out);
    default:
      return InvalidArgument("chat template: unknown operator");
  }
}

Status Negate(const Value& v, Value* out) {
  if (v.kind == Kind::kFloat) {
    *out = Value::Float(-v.f);
  } else if (IntOf(v) == std::numeric_limits<int64_t>::min()) {
    return InvalidArgument("chat template: -%s does not fit a 64-bit integer",
                           Printed(v).text);
  } else {
    *out = Value::Int(-IntOf(v));
  }
  return Status::Ok();
}

Status Abs(const Value& v, Value* out) {
  if (v.kind == Kind::kFloat) {
    *out = Value::Float(std::fabs(v.f));
    return Status::Ok();
  }
  if (IntOf(v) == std::numeric_limits<int64_t>::min()) {
    return InvalidArgument("chat template: abs(%lld) does not fit a 64-bit integer",
                           static_cast<long long>(IntOf(v)));
  }
  *out = Value::Int(IntOf(v) < 0 ? -IntOf(v) : IntOf(v));
  return Status::Ok();
}

Status IntFilter(const Value& value, const Value& fallback, Value* out) {
  const Value otherwise = Given(fallback) ? fallback : Value::Int(0);
  if (IsInteger(value)) {
    *out = Value::Int(IntOf(value));
    return Status::Ok();
  }
  if (value.kind == Kind::kFloat) {
    // int(nan) is a ValueError, which the filter turns into its default; int(inf) is
    // an OverflowError, which it lets through.
    if (std::isnan(value.f)) {
      *out = otherwise;
      return Status::Ok();
    }
    if (std::isinf(value.f)) {
      return InvalidArgument("chat template: int of %s (an infinity is no integer)",
                             value.f < 0 ? "-inf" : "inf");
    }
    return Truncate(value.f, out);
  }
  if (!value.is_string()) {
    *out = otherwise;
    return Status::Ok();
  }
  const std::string_view s = Strip(value.str(), Value(), true, true);
  int64_t i;
  switch (ReadInt(s, &i)) {
    case Read::kYes:
      *out = Value::Int(i);
      return Status::Ok();
    case Read::kTooBig:
      return InvalidArgument("chat template: int of '%.*s' does not fit a 64-bit integer",
                             static_cast<int>(s.size() < 64 ? s.size() : 64), s.data());
    default:
      break;
  }
  // Then int(float(s)), which turns "1.5" into 1 and nan or inf (both errors there,
  // both caught) into the default.
  double f;
  const Read read = ReadFloat(s, &f);
  if (read == Read::kTooLong) return TooLong("int", s);
  if (read == Read::kNo || !std::isfinite(f)) {
    *out = otherwise;
    return Status::Ok();
  }
  return Truncate(f, out);
}

Status FloatFilter(const Value& value, const Value& fallback, Value* out) {
  const Value otherwise = Given(fallback) ? fallback : Value::Float(0);
  if (value.kind == Kind::kFloat || IsInteger(value)) {
    *out = Value::Float(FloatOf(value));
    return Status::Ok();
  }
  double f;
  const Read read = value.is_string()
                        ? ReadFloat(Strip(value.str(), Value(), true, true), &f)
                        : Read::kNo;
  if (read == Read::kTooLong) return TooLong("float", value.str());
  *out = read == Read::kYes ? Value::Float(f) : otherwise;
  return Status::Ok();
}

}  // namespace ember::tmpl
