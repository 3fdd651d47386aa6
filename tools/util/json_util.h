// JSON helpers for the importers: parse a file without exceptions and read typed fields
// with messages that name the file and the key (nlohmann-json, Debian's
// nlohmann-json3-dev).
#ifndef EMBER_TOOLS_UTIL_JSON_UTIL_H_
#define EMBER_TOOLS_UTIL_JSON_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "runtime/status.h"

namespace ember::tools {

using Json = nlohmann::json;

// Parses a whole JSON file; a syntax error names the file.
Status ReadJsonFile(const std::string& path, Json* out);

// Runs `body` (returning Status), turning a nlohmann exception (a value of an unexpected
// type met by a convenience accessor) into an error naming `where`.
template <typename Body>
Status CatchJsonErrors(const std::string& where, Body body) {
  try {
    return body();
  } catch (const Json::exception& e) {
    return InvalidArgument("%s: unexpected JSON: %.160s", where.c_str(), e.what());
  }
}

// Typed reads of one key of a JSON object. A missing (or null) key gives `fallback`
// unless `required`; a value of the wrong type or out of [min, max] is an error naming
// `where` (e.g. "config.json") and the key.
class JsonFields {
 public:
  JsonFields(const Json& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  bool Has(const char* key) const;
  Status Int(const char* key, bool required, int64_t fallback, int64_t min, int64_t max,
             int64_t* out) const;
  Status Float(const char* key, bool required, double fallback, double min, double max,
               double* out) const;
  Status Bool(const char* key, bool required, bool fallback, bool* out) const;
  Status String(const char* key, bool required, const std::string& fallback,
                std::string* out) const;
  // A list of strings, or of numbers; a missing key gives an empty list.
  Status StringList(const char* key, std::vector<std::string>* out) const;
  Status NumberList(const char* key, std::vector<float>* out) const;

 private:
  const Json* Get(const char* key) const;  // null when missing or JSON null
  const Json& object_;
  std::string where_;
};

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_JSON_UTIL_H_
