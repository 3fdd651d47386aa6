// Whole-file reads, read-only mappings and an early check that an output can be written,
// for the tools (importers, tests): clear messages, never a crash.
#ifndef EMBER_TOOLS_UTIL_FILES_H_
#define EMBER_TOOLS_UTIL_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace ember::tools {

// Reads a whole file (a directory or an unreadable path is an IoError naming it).
Status ReadFile(const std::string& path, std::vector<uint8_t>* bytes);

// A regular file mapped read-only (an empty file maps to no bytes), unmapped when
// destroyed. Weight files are read in place, never copied.
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // A directory, an unreadable path or a file larger than this host can map is an
  // error naming the path.
  Status Map(const std::string& path);
  const uint8_t* data() const { return static_cast<const uint8_t*>(data_); }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Whether `path` can be written later (its directory exists and is writable, and it is
// not a directory), so a long job can fail before it starts rather than at its end.
Status CheckWritable(const std::string& path);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_FILES_H_
