// Whole-file reads for the tools (importers, tests) and an early check that an output
// can be written: clear messages, never a crash.
#ifndef EMBER_TOOLS_UTIL_FILES_H_
#define EMBER_TOOLS_UTIL_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace ember::tools {

// Reads a whole file (a directory or an unreadable path is an IoError naming it).
Status ReadFile(const std::string& path, std::vector<uint8_t>* bytes);

// Whether `path` can be written later (its directory exists and is writable, and it is
// not a directory), so a long job can fail before it starts rather than at its end.
Status CheckWritable(const std::string& path);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_FILES_H_
