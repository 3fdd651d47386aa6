// JSON helpers (see json_util.h).
#include "tools/util/json_util.h"

#include <cmath>
#include <vector>

#include "tools/util/files.h"

namespace ember::tools {

Status ReadJsonFile(const std::string& path, Json* out) {
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(ReadFile(path, &bytes));
  *out = Json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded()) return InvalidArgument("%s: not valid JSON", path.c_str());
  return Status::Ok();
}

const Json* JsonFields::Get(const char* key) const {
  if (!object_.is_object()) return nullptr;
  const auto it = object_.find(key);
  return it == object_.end() || it->is_null() ? nullptr : &*it;
}

bool JsonFields::Has(const char* key) const { return Get(key) != nullptr; }

Status JsonFields::Int(const char* key, bool required, int64_t fallback, int64_t min,
                       int64_t max, int64_t* out) const {
  const Json* v = Get(key);
  if (!v) {
    if (required) return InvalidArgument("%s: '%s' is missing", where_.c_str(), key);
    *out = fallback;
    return Status::Ok();
  }
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    return InvalidArgument("%s: '%s' is too large", where_.c_str(), key);
  }
  if (!v->is_number_integer()) {
    return InvalidArgument("%s: '%s' must be an integer", where_.c_str(), key);
  }
  const int64_t value = v->get<int64_t>();
  if (value < min || value > max) {
    return InvalidArgument("%s: '%s' = %lld is outside [%lld, %lld]", where_.c_str(), key,
                           static_cast<long long>(value), static_cast<long long>(min),
                           static_cast<long long>(max));
  }
  *out = value;
  return Status::Ok();
}

Status JsonFields::Float(const char* key, bool required, double fallback, double min,
                         double max, double* out) const {
  const Json* v = Get(key);
  if (!v) {
    if (required) return InvalidArgument("%s: '%s' is missing", where_.c_str(), key);
    *out = fallback;
    return Status::Ok();
  }
  if (!v->is_number()) {
    return InvalidArgument("%s: '%s' must be a number", where_.c_str(), key);
  }
  const double value = v->get<double>();
  if (!std::isfinite(value) || value < min || value > max) {
    return InvalidArgument("%s: '%s' = %g is outside [%g, %g]", where_.c_str(), key,
                           value, min, max);
  }
  *out = value;
  return Status::Ok();
}

Status JsonFields::Bool(const char* key, bool required, bool fallback, bool* out) const {
  const Json* v = Get(key);
  if (!v) {
    if (required) return InvalidArgument("%s: '%s' is missing", where_.c_str(), key);
    *out = fallback;
    return Status::Ok();
  }
  if (!v->is_boolean()) {
    return InvalidArgument("%s: '%s' must be true or false", where_.c_str(), key);
  }
  *out = v->get<bool>();
  return Status::Ok();
}

Status JsonFields::String(const char* key, bool required, const std::string& fallback,
                          std::string* out) const {
  const Json* v = Get(key);
  if (!v) {
    if (required) return InvalidArgument("%s: '%s' is missing", where_.c_str(), key);
    *out = fallback;
    return Status::Ok();
  }
  if (!v->is_string()) {
    return InvalidArgument("%s: '%s' must be a string", where_.c_str(), key);
  }
  *out = v->get<std::string>();
  return Status::Ok();
}

Status JsonFields::StringList(const char* key, std::vector<std::string>* out) const {
  out->clear();
  const Json* v = Get(key);
  if (!v) return Status::Ok();
  if (!v->is_array()) {
    return InvalidArgument("%s: '%s' must be a list of strings", where_.c_str(), key);
  }
  for (const Json& item : *v) {
    if (!item.is_string()) {
      return InvalidArgument("%s: '%s' must be a list of strings", where_.c_str(), key);
    }
    out->push_back(item.get<std::string>());
  }
  return Status::Ok();
}

Status JsonFields::NumberList(const char* key, std::vector<float>* out) const {
  out->clear();
  const Json* v = Get(key);
  if (!v) return Status::Ok();
  if (!v->is_array()) {
    return InvalidArgument("%s: '%s' must be a list of numbers", where_.c_str(), key);
  }
  for (const Json& item : *v) {
    if (!item.is_number() || !std::isfinite(item.get<double>())) {
      return InvalidArgument("%s: '%s' must be a list of numbers", where_.c_str(), key);
    }
    out->push_back(item.get<float>());
  }
  return Status::Ok();
}

}  // namespace ember::tools
