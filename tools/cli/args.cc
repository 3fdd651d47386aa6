// ArgParser (see args.h).
#include "tools/cli/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace ember::tools {

const OptionSpec* ArgParser::Find(const std::string& arg) const {
  for (const OptionSpec& s : specs_) {
    for (const std::string& n : s.names) {
      if (n == arg) return &s;
    }
  }
  return nullptr;
}

Status ArgParser::Parse(int argc, char** argv, int first) {
  bool options_done = false;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (takes_positional_ &&
        (options_done || arg.empty() || arg[0] != '-' || arg == "-")) {
      positional_.push_back(arg);
      continue;
    }
    if (takes_positional_ && arg == "--") {
      options_done = true;
      continue;
    }
    std::string value;
    bool has_inline_value = false;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_inline_value = true;
    }
    const OptionSpec* spec = Find(arg);
    if (!spec) return InvalidArgument("unknown option '%s'", arg.c_str());
    if (spec->takes_value) {
      if (!has_inline_value) {
        if (i + 1 >= argc) return InvalidArgument("option %s needs a value", arg.c_str());
        value = argv[++i];
      }
    } else if (has_inline_value) {
      return InvalidArgument("option %s takes no value", arg.c_str());
    }
    values_[spec->names[0]].push_back(value);
  }
  return Status::Ok();
}

bool ArgParser::Has(const std::string& name) const { return values_.count(name) > 0; }

std::string ArgParser::Get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> ArgParser::GetAll(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>() : it->second;
}

Status ArgParser::GetInt(const std::string& name, int64_t fallback, int64_t min,
                         int64_t max, int64_t* out) const {
  if (!Has(name)) {
    *out = fallback;
    return Status::Ok();
  }
  return ParseInt(Get(name), name.c_str(), min, max, out);
}

Status ArgParser::GetFloat(const std::string& name, double fallback, double min,
                           double max, double* out) const {
  if (!Has(name)) {
    *out = fallback;
    return Status::Ok();
  }
  const std::string text = Get(name);
  char* end = nullptr;
  const double v = strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) {
    return InvalidArgument("%s: '%s' is not a number", name.c_str(), text.c_str());
  }
  if (v < min || v > max) {
    return InvalidArgument("%s: %g is outside [%g, %g]", name.c_str(), v, min, max);
  }
  *out = v;
  return Status::Ok();
}

Status ArgParser::GetIntList(const std::string& name,
                             const std::vector<int64_t>& fallback, int64_t min,
                             int64_t max, std::vector<int64_t>* out) const {
  if (!Has(name)) {
    *out = fallback;
    return Status::Ok();
  }
  out->clear();
  for (const std::string& value : GetAll(name)) {
    size_t start = 0;
    while (start <= value.size()) {
      const size_t comma = value.find(',', start);
      const size_t end = comma == std::string::npos ? value.size() : comma;
      int64_t v;
      EMBER_RETURN_IF_ERROR(
          ParseInt(value.substr(start, end - start), name.c_str(), min, max, &v));
      out->push_back(v);
      start = end + 1;
    }
  }
  return Status::Ok();
}

std::string ArgParser::Usage() const {
  std::string usage;
  for (const OptionSpec& s : specs_) {
    std::string names;
    for (const std::string& n : s.names) names += (names.empty() ? "" : ", ") + n;
    if (s.takes_value) names += " VALUE";
    usage += "  " + names + std::string(names.size() < 26 ? 26 - names.size() : 1, ' ') +
             s.help + "\n";
  }
  return usage;
}

}  // namespace ember::tools
