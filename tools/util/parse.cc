// ParseInt (see parse.h).
#include "tools/util/parse.h"

#include <cerrno>
#include <cstdlib>

namespace ember::tools {

Status ParseInt(const std::string& text, const char* what, int64_t min, int64_t max,
                int64_t* out) {
  errno = 0;
  char* end = nullptr;
  const long long v = strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE) {
    return InvalidArgument("%s: '%s' is not a whole number", what, text.c_str());
  }
  if (v < min || v > max) {
    return InvalidArgument("%s: %lld is outside [%lld, %lld]", what, v,
                           static_cast<long long>(min), static_cast<long long>(max));
  }
  *out = v;
  return Status::Ok();
}

}  // namespace ember::tools
