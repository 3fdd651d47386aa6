// Host facts `ember bench` reports: the CPU's name, the time, and the process's peak
// resident memory.
#ifndef EMBER_TOOLS_BENCH_HOST_INFO_H_
#define EMBER_TOOLS_BENCH_HOST_INFO_H_

#include <cstdint>
#include <string>

namespace ember::tools {

// The CPU's name: x86's "model name", else the board's "Hardware", else the machine
// (with the CPU part number on Arm).
std::string CpuInfo();

// Now, as ISO 8601 UTC ("2026-01-31T12:00:00Z").
std::string UtcNow();

// Peak RSS: Linux's VmHWM, which ResetPeakRss starts again from the current RSS (false
// where that does not work: an emulator, an old kernel; PeakRssBytes then reports the
// process's lifetime peak).
bool ResetPeakRss();
uint64_t PeakRssBytes();

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_HOST_INFO_H_
