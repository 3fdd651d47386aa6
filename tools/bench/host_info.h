// Host facts `ember bench` reports: the CPU's name and last-level cache, the time, and
// the process's peak resident memory.
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

// The size of the largest cache of CPU 0 (Linux sysfs: the unified or data cache of the
// highest level), 0 when unknown. A decode test whose working set fits it reads from
// the cache, not from memory. `cache_dir` holds index0/, index1/, ... (tests pass their
// own).
uint64_t LastLevelCacheBytes(
    const std::string& cache_dir = "/sys/devices/system/cpu/cpu0/cache");

// Peak RSS: Linux's VmHWM, which ResetPeakRss starts again from the current RSS (false
// where that does not work: an emulator, an old kernel; PeakRssBytes then reports the
// process's lifetime peak).
bool ResetPeakRss();
uint64_t PeakRssBytes();

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_HOST_INFO_H_
