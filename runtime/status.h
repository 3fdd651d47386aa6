// Status and Result<T>: how every fallible call in runtime/ reports an error, with no
// exceptions and no allocation (the message lives inside the Status).
#ifndef EMBER_RUNTIME_STATUS_H_
#define EMBER_RUNTIME_STATUS_H_

#include <cstdarg>
#include <cstddef>
#include <new>
#include <utility>

namespace ember {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,    // the caller passed something unusable (token id, size, flag)
  kInvalidModel = 2,       // the model file is malformed or inconsistent
  kNotFound = 3,           // a file or tensor that should exist does not
  kIoError = 4,            // reading, mapping or writing a file failed
  kOutOfRange = 5,         // the context is full
  kResourceExhausted = 6,  // a caller-provided buffer is too small
  kUnimplemented = 7,      // valid but not supported by this build
  kInternal = 8,
};

const char* StatusCodeName(StatusCode code);

class Status {
 public:
  static constexpr size_t kMaxMessageBytes = 240;

  // An OK status writes one byte, and a copy only the message's bytes: a Status is
  // returned per byte and per token on hot paths (a grammar's masks), where zeroing and
  // copying the whole buffer cost more than the work.
  Status() { message_[0] = '\0'; }  // OK
  Status(const Status& other) : code_(other.code_) { CopyMessage(other); }
  Status& operator=(const Status& other) {
    code_ = other.code_;
    CopyMessage(other);
    return *this;
  }
  // printf-style message; truncated to kMaxMessageBytes - 1 bytes.
  Status(StatusCode code, const char* format, ...) __attribute__((format(printf, 3, 4)));
  Status(StatusCode code, const char* format, va_list args);

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const char* message() const { return message_; }

 private:
  void CopyMessage(const Status& other) {
    size_t n = 0;  // the message and its terminator; always one of the buffer's
    while (n + 1 < kMaxMessageBytes && other.message_[n] != '\0') ++n;
    for (size_t i = 0; i < n; ++i) message_[i] = other.message_[i];
    message_[n] = '\0';
  }

  StatusCode code_ = StatusCode::kOk;
  char message_[kMaxMessageBytes];
};

// snprintf's contract (writes at most `size` bytes, always terminated when size > 0;
// returns the length the whole text needs) without the C library's printf, so a
// bare-metal image does not link newlib's floating-point printf (about 11 KB of
// Cortex-M55 code). Conversions: d i u o x X c s p % f F e E g G with flags - 0 + space
// #, width and precision (or *), lengths hh h l ll z t j L. Floating point prints what
// snprintf prints for up to 15 significant digits (%e, %g), and for %f while the value
// times 10^precision is below 2^52; past those, digits after the 15th are zeros. %n and
// unknown conversions are written out as text.
int FormatV(char* out, size_t size, const char* format, va_list args);
int Format(char* out, size_t size, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

// Shorthands: InvalidModel("tensor %s: ...", name) and so on.
#define EMBER_STATUS_FACTORY(Name) \
  Status Name(const char* format, ...) __attribute__((format(printf, 1, 2)));
EMBER_STATUS_FACTORY(InvalidArgument)
EMBER_STATUS_FACTORY(InvalidModel)
EMBER_STATUS_FACTORY(NotFound)
EMBER_STATUS_FACTORY(IoError)
EMBER_STATUS_FACTORY(OutOfRange)
EMBER_STATUS_FACTORY(ResourceExhausted)
EMBER_STATUS_FACTORY(Unimplemented)
EMBER_STATUS_FACTORY(Internal)
#undef EMBER_STATUS_FACTORY

// A T or the Status saying why there is none.
template <typename T>
class Result {
 public:
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design
  Result(T value) : has_value_(true) {                   // NOLINT
    new (&storage_) T(std::move(value));
  }
  Result(Result&& other) : status_(other.status_), has_value_(other.has_value_) {
    if (has_value_) new (&storage_) T(std::move(*other));
  }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  Result& operator=(Result&&) = delete;
  ~Result() {
    if (has_value_) value_ptr()->~T();
  }

  bool ok() const { return has_value_; }
  const Status& status() const { return status_; }
  T& operator*() { return *value_ptr(); }
  const T& operator*() const { return *value_ptr(); }
  T* operator->() { return value_ptr(); }
  const T* operator->() const { return value_ptr(); }

 private:
  T* value_ptr() { return std::launder(reinterpret_cast<T*>(&storage_)); }
  const T* value_ptr() const {
    return std::launder(reinterpret_cast<const T*>(&storage_));
  }

  Status status_;
  bool has_value_ = false;
  alignas(T) unsigned char storage_[sizeof(T)];
};

}  // namespace ember

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define EMBER_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::ember::Status ember_status_ = (expr);        \
    if (!ember_status_.ok()) return ember_status_; \
  } while (0)

#endif  // EMBER_RUNTIME_STATUS_H_
