// Bench results as JSON records (see bench_records.h).
#include "tools/bench/bench_records.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <set>

namespace ember::tools {
namespace {

constexpr double kMaxTokensPerSecond = 1e12;

// Why nlohmann could not parse `text`: "column 7: syntax error while parsing value -
// invalid literal", "number overflow parsing '1e999'", or that the text ends early (a
// line cut short by an interrupted write: the error is at its end).
std::string ParseProblem(const BenchJson::exception& e, size_t byte,
                         const std::string& text) {
  std::string what = e.what();
  if (what.find("unexpected end of input") != std::string::npos || byte >= text.size()) {
    return "it ends early: cut short by an interrupted write?";
  }
  const size_t column = what.find("column ");
  const size_t tag = what.find("] ");
  if (column != std::string::npos) {
    what = what.substr(column);
  } else if (tag != std::string::npos) {
    what = what.substr(tag + 2);
  }
  const size_t last = what.find("; last read");
  if (last != std::string::npos) what.resize(last);
  return what.substr(0, 90);
}

// Parses `text`: one line of a file, numbered `line`, or (line 0) a whole file, whose
// error then names the line it is on.
Status ParseJson(const std::string& text, const std::string& name, size_t line,
                 BenchJson* out) {
  size_t byte = 0;
  try {
    *out = BenchJson::parse(text);
    return Status::Ok();
  } catch (const BenchJson::parse_error& e) {
    byte = e.byte ? e.byte - 1 : 0;
    if (line == 0) {
      const size_t at = std::min(byte, text.size());
      line = 1 + std::count(text.begin(), text.begin() + at, '\n');
    }
    return InvalidArgument("%s:%zu: not valid JSON: %s", name.c_str(), line,
                           ParseProblem(e, byte, text).c_str());
  } catch (const BenchJson::exception& e) {  // a number beyond a double's range
    const std::string where = line ? name + ":" + std::to_string(line) : name;
    return InvalidArgument("%s: not valid JSON: %s", where.c_str(),
                           ParseProblem(e, 0, text).c_str());
  }
}

bool PositiveNumber(const BenchJson& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0;
}

// A non-empty array of positive numbers.
Status PositiveArray(const BenchJson& v, const std::string& where, const char* name,
                     std::vector<double>* out) {
  if (!v.is_array() || v.empty()) {
    return InvalidArgument("%s: '%s' is not a list of numbers", where.c_str(), name);
  }
  for (const BenchJson& x : v) {
    if (!PositiveNumber(x)) {
      return InvalidArgument("%s: '%s' holds %s, not a positive number", where.c_str(),
                             name, x.dump().substr(0, 24).c_str());
    }
    out->push_back(x.get<double>());
  }
  return Status::Ok();
}

// A count field: a non-negative integer, 0 when missing.
Status Count(const BenchJson& record, const char* name, const std::string& where,
             int64_t* out) {
  *out = 0;
  const auto it = record.find(name);
  if (it == record.end() || it->is_null()) return Status::Ok();
  if (!it->is_number_integer() || it->get<int64_t>() < 0 ||
      (it->is_number_unsigned() && it->get<uint64_t>() > (uint64_t{1} << 40))) {
    return InvalidArgument("%s: '%s' is %s, not a count", where.c_str(), name,
                           it->dump().substr(0, 24).c_str());
  }
  *out = it->get<int64_t>();
  return Status::Ok();
}

// "64 MiB", "1 MiB": a limit in bytes as people say it.
std::string Mebibytes(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// Where the arrays and objects in `text` first nest deeper than kMaxBenchNesting
// (brackets in strings do not count), or npos.
size_t TooDeep(const std::string& text) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxBenchNesting) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string::npos;
}

Status TooDeepError(const std::string& where) {
  return ResourceExhausted(
      "%s: arrays and objects nested more than %zu deep, the most a bench result may "
      "nest",
      where.c_str(), kMaxBenchNesting);
}

// The limits on what a whole file holds (the results' count is checked as they are read).
Status CheckFileTotals(const std::vector<BenchRecord>& records, const std::string& name) {
  size_t samples = 0;
  std::set<std::string> fields;
  for (const BenchRecord& r : records) {
    for (const auto& item : r.fields.items()) {
      if (fields.insert(item.key()).second && fields.size() > kMaxBenchFields) {
        return ResourceExhausted(
            "%s: more than %zu field names in all, the most a bench file may hold",
            r.where.c_str(), kMaxBenchFields);
      }
    }
    samples += r.speed.samples.size();
    if (samples > kMaxBenchSamples) {
      return ResourceExhausted(
          "%s: more than %zu repetitions (samples) in all, the most a bench file may "
          "hold: split it",
          r.where.c_str(), kMaxBenchSamples);
    }
  }
  if (records.empty()) return InvalidArgument("%s: no results", name.c_str());
  return Status::Ok();
}

Status TooManyResults(const std::string& where) {
  return ResourceExhausted(
      "%s: more than %zu results, the most a bench file may hold: split it",
      where.c_str(), kMaxBenchResults);
}

}  // namespace

BenchField ClassifyBenchField(const std::string& name) {
  static const char* const kTest[] = {"test", "n_prompt", "n_gen"};
  static const char* const kModel[] = {"model_filename", "model_type",  "model_size",
                                       "model_n_params", "weight_type", "dtype_mix",
                                       "model_sha256"};
  static const char* const kMeasurement[] = {
      // times and speeds
      "avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns", "samples_ts",
      "test_time", "ttft_ns", "load_ns",
      // memory, traffic and bandwidth
      "peak_rss_bytes", "arena_bytes", "heap_allocs", "weight_bytes_per_token",
      "kv_bytes_per_token", "effective_gbps", "measured_gbps", "probe_bytes",
      "weights_read_gbps", "roofline_pct", "roofline_gbps", "roofline_read", "llc_bytes",
      "from_cache"};
  for (const char* n : kTest)
    if (name == n) return BenchField::kTest;
  for (const char* n : kModel)
    if (name == n) return BenchField::kModel;
  for (const char* n : kMeasurement)
    if (name == n) return BenchField::kMeasurement;
  if (name.rfind("profile_", 0) == 0) return BenchField::kMeasurement;
  return BenchField::kConfig;
}

Status MakeBenchRecord(BenchJson fields, std::string where, BenchRecord* out) {
  if (!fields.is_object()) {
    return InvalidArgument("%s: a result must be a JSON object, not %s", where.c_str(),
                           fields.type_name());
  }
  int64_t n_prompt, n_gen;
  EMBER_RETURN_IF_ERROR(Count(fields, "n_prompt", where, &n_prompt));
  EMBER_RETURN_IF_ERROR(Count(fields, "n_gen", where, &n_gen));
  const auto ts = fields.find("samples_ts");
  const auto ns = fields.find("samples_ns");
  const auto avg = fields.find("avg_ts");
  std::vector<double> samples;
  if (ts != fields.end() && !ts->is_null()) {
    EMBER_RETURN_IF_ERROR(PositiveArray(*ts, where, "samples_ts", &samples));
    out->speed = FromSamples(std::move(samples));
  } else if (ns != fields.end() && !ns->is_null()) {
    if (n_prompt + n_gen == 0) {
      return InvalidArgument("%s: samples_ns without n_prompt or n_gen: no tokens/s",
                             where.c_str());
    }
    std::vector<double> times;
    EMBER_RETURN_IF_ERROR(PositiveArray(*ns, where, "samples_ns", &times));
    for (double t : times) samples.push_back((n_prompt + n_gen) * 1e9 / t);
    out->speed = FromSamples(std::move(samples));
  } else if (avg != fields.end() && PositiveNumber(*avg)) {
    out->speed = BenchSpeed();
    out->speed.mean = avg->get<double>();
    const auto sd = fields.find("stddev_ts");
    if (sd != fields.end() && sd->is_number() && std::isfinite(sd->get<double>()) &&
        sd->get<double>() >= 0) {
      out->speed.stddev = sd->get<double>();
    }
  } else {
    return InvalidArgument("%s: no tokens/s (samples_ts, samples_ns or avg_ts)",
                           where.c_str());
  }
  // Rates a chart and sums can hold (a sum of 1e300s overflows; no device decodes a
  // trillion tokens a second).
  const std::vector<double>& rates =
      out->speed.samples.empty() ? std::vector<double>{out->speed.mean, out->speed.stddev}
                                 : out->speed.samples;
  for (double rate : rates) {
    if (!(rate <= kMaxTokensPerSecond)) {
      return InvalidArgument("%s: %g tokens/s is out of range", where.c_str(), rate);
    }
  }
  const auto test = fields.find("test");
  if ((test == fields.end() || !test->is_string()) && n_prompt + n_gen == 0) {
    return InvalidArgument("%s: no test (test, n_prompt or n_gen)", where.c_str());
  }
  out->fields = std::move(fields);
  out->where = std::move(where);
  return Status::Ok();
}

Status ParseBenchRecords(const std::string& text, const std::string& name,
                         std::vector<BenchRecord>* out) {
  out->clear();
  if (text.size() > kMaxBenchFileBytes) {
    return ResourceExhausted(
        "%s: more than %zu bytes (%s), the most a bench file may hold: split it",
        name.c_str(), kMaxBenchFileBytes, Mebibytes(kMaxBenchFileBytes).c_str());
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return InvalidArgument("%s: no results", name.c_str());
  // A JSON array, or one (possibly pretty-printed) object.
  if (text[first] == '[' || text[first] == '{') {
    const size_t deep = TooDeep(text);
    if (deep != std::string::npos && text[first] == '[') {
      const long line = 1 + std::count(text.begin(), text.begin() + deep, '\n');
      return TooDeepError(name + ":" + std::to_string(line));
    }
    // An object too deep to parse may be the first line of JSON Lines: each line is
    // checked below.
    BenchJson all;
    const Status parsed =
        deep == std::string::npos ? ParseJson(text, name, 0, &all) : TooDeepError(name);
    if (!parsed.ok() && text[first] == '[') return parsed;
    if (parsed.ok() && all.is_object()) {
      // One object: named by the line it starts on, as a line of JSON Lines is.
      const long line = 1 + std::count(text.begin(), text.begin() + first, '\n');
      BenchRecord r;
      EMBER_RETURN_IF_ERROR(
          MakeBenchRecord(std::move(all), name + ":" + std::to_string(line), &r));
      out->push_back(std::move(r));
      return CheckFileTotals(*out, name);
    }
    if (parsed.ok()) {
      if (all.size() > kMaxBenchResults) {
        return TooManyResults(name + ": result " + std::to_string(kMaxBenchResults + 1));
      }
      for (size_t i = 0; i < all.size(); ++i) {
        BenchRecord r;
        EMBER_RETURN_IF_ERROR(MakeBenchRecord(
            std::move(all[i]), name + ": result " + std::to_string(i + 1), &r));
        out->push_back(std::move(r));
      }
      return CheckFileTotals(*out, name);
    }
  }
  // JSON Lines.
  size_t line_number = 0;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const size_t line_begin = begin;
    begin = end + 1;
    ++line_number;
    const std::string where = name + ":" + std::to_string(line_number);
    if (end - line_begin > kMaxBenchLineBytes) {
      return ResourceExhausted(
          "%s: a line of %zu bytes, more than %zu (%s), the most a line of a bench file "
          "may hold",
          where.c_str(), end - line_begin, kMaxBenchLineBytes,
          Mebibytes(kMaxBenchLineBytes).c_str());
    }
    const std::string line = text.substr(line_begin, end - line_begin);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (out->size() == kMaxBenchResults) return TooManyResults(where);
    if (TooDeep(line) != std::string::npos) return TooDeepError(where);
    BenchJson fields;
    EMBER_RETURN_IF_ERROR(ParseJson(line, name, line_number, &fields));
    BenchRecord r;
    EMBER_RETURN_IF_ERROR(MakeBenchRecord(std::move(fields), where, &r));
    out->push_back(std::move(r));
  }
  return CheckFileTotals(*out, name);
}

Status ReadBenchRecords(const std::string& path, std::vector<BenchRecord>* out) {
  // Stops within a buffer past the limit, so a larger file (or an endless pipe) is
  // refused without being read whole.
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return IoError("cannot open '%s': %s", path.c_str(), strerror(errno));
  std::string text;
  char buf[1 << 16];
  size_t n;
  while (text.size() <= kMaxBenchFileBytes && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
    text.append(buf, n);
  }
  const bool failed = ferror(f);
  const int read_errno = errno;  // e.g. EISDIR: fopen succeeds on a directory
  fclose(f);
  if (failed) return IoError("cannot read '%s': %s", path.c_str(), strerror(read_errno));
  return ParseBenchRecords(text, path, out);
}

std::string TestLabel(const BenchJson& record) {
  const auto test = record.find("test");
  if (test != record.end() && test->is_string()) return test->get<std::string>();
  int64_t n_prompt = 0, n_gen = 0;
  (void)Count(record, "n_prompt", "", &n_prompt);
  (void)Count(record, "n_gen", "", &n_gen);
  if (n_gen == 0) return "pp" + std::to_string(n_prompt);
  if (n_prompt == 0) return "tg" + std::to_string(n_gen);
  return "pp" + std::to_string(n_prompt) + "+tg" + std::to_string(n_gen);
}

std::string FieldText(const BenchJson& record, const std::string& name) {
  const auto it = record.find(name);
  return it == record.end() ? "-" : ValueText(*it);
}

std::string ValueText(const BenchJson& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

FieldValues CollectFieldValues(const std::vector<BenchRecord>& records) {
  FieldValues f;
  std::map<std::string, size_t> holders;  // records with the field
  for (const BenchRecord& r : records) {
    for (const auto& item : r.fields.items()) {
      if (ClassifyBenchField(item.key()) == BenchField::kMeasurement) continue;
      const auto added = f.texts.emplace(item.key(), std::set<std::string>());
      if (added.second) f.names.push_back(item.key());
      added.first->second.insert(ValueText(item.value()));
      ++holders[item.key()];
    }
  }
  for (auto& [name, texts] : f.texts) {
    if (holders[name] < records.size()) texts.insert("-");
  }
  return f;
}

FieldPicker::FieldPicker(const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) positions_.emplace(names[i], i);
}

std::vector<std::string> FieldPicker::Pick(const BenchJson& record) const {
  std::vector<std::string> texts(positions_.size(), "-");
  for (const auto& item : record.items()) {
    const auto it = positions_.find(item.key());
    if (it != positions_.end()) texts[it->second] = ValueText(item.value());
  }
  return texts;
}

std::string DescribeField(const std::string& name, const std::string& value) {
  if (name == "n_threads") return value + (value == "1" ? " thread" : " threads");
  if (name == "backends" || name == "hwy_target" || name == "cpu_info" ||
      name == "model_filename" || name == "model_type") {
    return value;
  }
  if (name == "type_k") return "KV " + value;
  if (name == "type_v") return "V " + value;
  if (name == "int8_dot") return "int8 " + value;
  if (name == "isa") return "tier " + value;
  if (name == "n_depth") return "depth " + value;
  if (name == "n_batch") return "batch " + value;
  if (name == "build_commit") return "build " + value;
  if (name == "ember_version") return "ember " + value;
  if (name == "weight_type") return "weights " + value;
  return name + " " + value;
}

}  // namespace ember::tools
