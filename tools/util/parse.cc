// ParseInt and ParseBytes (see parse.h).
#include "tools/util/parse.h"

#include <strings.h>

#include <cctype>
#include <cerrno>
#include <cmath>
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

Status ParseBytes(const std::string& text, const char* what, uint64_t* out) {
  errno = 0;
  char* end = nullptr;
  const double number = text.empty() || !isdigit(static_cast<unsigned char>(text[0]))
                            ? -1.0
                            : strtod(text.c_str(), &end);
  if (number < 0 || errno == ERANGE || !std::isfinite(number)) {
    return InvalidArgument("%s: '%s' is not a size (e.g. 64MiB, 1.5GiB, 100000)", what,
                           text.c_str());
  }
  struct Unit {
    const char* name;
    double bytes;
  };
  static const Unit kUnits[] = {
      {"", 1},          {"b", 1},           {"k", 1024.0},       {"kib", 1024.0},
      {"m", 1048576.0}, {"mib", 1048576.0}, {"g", 1073741824.0}, {"gib", 1073741824.0},
      {"kb", 1e3},      {"mb", 1e6},        {"gb", 1e9}};
  for (const Unit& unit : kUnits) {
    if (strcasecmp(end, unit.name) != 0) continue;
    const double bytes = std::floor(number * unit.bytes);
    if (bytes > 4611686018427387904.0) {  // 2^62
      return InvalidArgument("%s: '%s' is too large", what, text.c_str());
    }
    *out = static_cast<uint64_t>(bytes);
    return Status::Ok();
  }
  return InvalidArgument("%s: '%s' has an unknown unit (B, KiB, MiB, GiB, KB, MB, GB)",
                         what, text.c_str());
}

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> items;
  for (size_t begin = 0; begin <= list.size();) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    items.push_back(list.substr(begin, end - begin));
    begin = end + 1;
  }
  return items;
}

}  // namespace ember::tools
