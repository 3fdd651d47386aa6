// ArgParser: the command-line options of an ember subcommand, with range-checked numbers
// and clear messages for unknown flags, missing values and bad numbers.
#ifndef EMBER_TOOLS_CLI_ARGS_H_
#define EMBER_TOOLS_CLI_ARGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/status.h"
#include "tools/util/parse.h"  // ParseInt

namespace ember::tools {

struct OptionSpec {
  std::vector<std::string> names;  // e.g. {"-m", "--model"}; the first is canonical
  bool takes_value;
  std::string help;
};

class ArgParser {
 public:
  explicit ArgParser(std::vector<OptionSpec> specs) : specs_(std::move(specs)) {}
  // Lets Parse take arguments that are not options (file names: "ember bench-compare OLD
  // NEW"); they are Positional(), in order. "--" makes every later argument one.
  ArgParser& TakePositional() {
    takes_positional_ = true;
    return *this;
  }

  // Parses argv[first, argc). Every argument must be a known option (or, with
  // TakePositional, not start with '-').
  Status Parse(int argc, char** argv, int first);
  const std::vector<std::string>& Positional() const { return positional_; }

  bool Has(const std::string& name) const;
  // The last value given for an option, or `fallback`.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  // Every value given for a repeatable option (e.g. -m a -m b), in order.
  std::vector<std::string> GetAll(const std::string& name) const;
  Status GetInt(const std::string& name, int64_t fallback, int64_t min, int64_t max,
                int64_t* out) const;
  Status GetFloat(const std::string& name, double fallback, double min, double max,
                  double* out) const;
  // A comma-separated list of integers, e.g. "-p 128,256".
  Status GetIntList(const std::string& name, const std::vector<int64_t>& fallback,
                    int64_t min, int64_t max, std::vector<int64_t>* out) const;

  std::string Usage() const;

 private:
  const OptionSpec* Find(const std::string& arg) const;
  std::vector<OptionSpec> specs_;
  std::map<std::string, std::vector<std::string>> values_;  // canonical name -> values
  bool takes_positional_ = false;
  std::vector<std::string> positional_;
};

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_ARGS_H_
