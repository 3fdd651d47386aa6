// Parsing numbers from text (command lines, JSON keys) with range checks and messages.
#ifndef EMBER_TOOLS_UTIL_PARSE_H_
#define EMBER_TOOLS_UTIL_PARSE_H_

#include <cstdint>
#include <string>

#include "runtime/status.h"

namespace ember::tools {

// Parses a whole decimal integer in [min, max]; `what` names it in the message.
Status ParseInt(const std::string& text, const char* what, int64_t min, int64_t max,
                int64_t* out);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_PARSE_H_
