// `ember bench --history FILE.jsonl`: each result appended to a JSON Lines file as soon
// as it is measured, without ever putting the lines already there at risk.
//
// The line goes to an O_APPEND descriptor in one write() under an exclusive flock() (so
// concurrent benches do not interleave), then fsync(); a file that was just created has
// its directory synced too. Appending never rewrites earlier bytes, so a crash or a
// power cut can at worst leave the new line incomplete at the end of the file: the next
// append then starts on a fresh line, and readers name the broken line
// (ReadBenchRecords).
#ifndef EMBER_TOOLS_BENCH_BENCH_HISTORY_H_
#define EMBER_TOOLS_BENCH_BENCH_HISTORY_H_

#include <string>

#include "runtime/status.h"

namespace ember::tools {

// Appends `lines` (complete lines, each ending in '\n') to `path`, creating it (mode
// 0644 less the umask) when missing. Empty `lines` only checks that the file can be
// opened for appending (creating it) and is not full, as a bench does before it starts.
// A line longer than kMaxBenchLineBytes, or a file that would grow past
// kMaxBenchFileBytes (bench_records.h), is refused: readers would refuse it.
Status AppendLines(const std::string& path, const std::string& lines);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_BENCH_HISTORY_H_
