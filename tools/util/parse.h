// Parsing numbers and sizes from text (command lines, JSON keys) with range checks and
// messages.
#ifndef EMBER_TOOLS_UTIL_PARSE_H_
#define EMBER_TOOLS_UTIL_PARSE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/status.h"

namespace ember::tools {

// Parses a whole decimal integer in [min, max]; `what` names it in the message.
Status ParseInt(const std::string& text, const char* what, int64_t min, int64_t max,
                int64_t* out);

// Parses a size in bytes: a number (decimals allowed) with an optional unit, KiB, MiB,
// GiB (powers of 1024; K, M, G alike), KB, MB, GB (powers of 1000) or B, any case, e.g.
// "64MiB", "1.5GiB", "100000". Whole bytes (rounded down), at most 2^62.
Status ParseBytes(const std::string& text, const char* what, uint64_t* out);

// "a,b,c" -> {"a", "b", "c"}; empty items are kept ("" -> {""}, "a," -> {"a", ""}), so
// the parser of each item refuses them.
std::vector<std::string> SplitList(const std::string& list);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_UTIL_PARSE_H_
