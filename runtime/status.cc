// Status: messages into the fixed buffer (formatted by FormatV, status_format.cc), and
// code names.
#include "runtime/status.h"

#include <cstdarg>

namespace ember {

Status::Status(StatusCode code, const char* format, ...) : code_(code) {
  message_[0] = '\0';  // what is left if formatting fails
  va_list args;
  va_start(args, format);
  FormatV(message_, sizeof(message_), format, args);
  va_end(args);
}

Status::Status(StatusCode code, const char* format, va_list args) : code_(code) {
  message_[0] = '\0';
  FormatV(message_, sizeof(message_), format, args);
}

#define EMBER_STATUS_FACTORY(Name, Code)           \
  Status Name(const char* format, ...) {           \
    va_list args;                                  \
    va_start(args, format);                        \
    Status status(StatusCode::Code, format, args); \
    va_end(args);                                  \
    return status;                                 \
  }
EMBER_STATUS_FACTORY(InvalidArgument, kInvalidArgument)
EMBER_STATUS_FACTORY(InvalidModel, kInvalidModel)
EMBER_STATUS_FACTORY(NotFound, kNotFound)
EMBER_STATUS_FACTORY(IoError, kIoError)
EMBER_STATUS_FACTORY(OutOfRange, kOutOfRange)
EMBER_STATUS_FACTORY(ResourceExhausted, kResourceExhausted)
EMBER_STATUS_FACTORY(Unimplemented, kUnimplemented)
EMBER_STATUS_FACTORY(Internal, kInternal)
#undef EMBER_STATUS_FACTORY

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kInvalidModel:
      return "invalid model";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kOutOfRange:
      return "out of range";
    case StatusCode::kResourceExhausted:
      return "resource exhausted";
    case StatusCode::kUnimplemented:
      return "unimplemented";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

}  // namespace ember
