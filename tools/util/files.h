// Whole-file reads for the tools (importers, tests): clear messages, never a crash.
#ifndef EMBER_TOOLS_UTIL_FILES_H_
#define EMBER_TOOLS_UTIL_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace ember::tools {

// Reads a whole file (a directory or an unreadable path is an IoError naming it).
Status ReadFile(const std::string& path, std::vector<uint8_t>* bytes);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_FILES_H_
