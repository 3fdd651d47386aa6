// Bandwidth probe: the best rate at which this machine reads memory with a given number
// of threads, which `ember bench` divides decode's traffic by (the roofline %). It must
// not understate the machine (a roofline % over 100 in a memory-bound test would mean
// the probe, not decode, fell short), so it takes the best pass of several read
// patterns (read_patterns.h) over two kinds of memory: a fresh buffer much larger than
// the caches, with transparent huge pages requested, and the very pages decode reads
// (the model file's mapping, in whatever page sizes the page cache holds it).
#ifndef EMBER_TOOLS_BENCH_BANDWIDTH_PROBE_H_
#define EMBER_TOOLS_BENCH_BANDWIDTH_PROBE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/status.h"
#include "runtime/pool/thread_pool.h"

namespace ember::tools {

struct RooflineProbe {
  double buffer_gbps = 0;  // the best pass over the buffer: bytes / seconds / 1e9
  double memory_gbps = 0;  // over the given memory (0: not read)
  std::string best;        // which read gave max(buffer, memory): "file, prefetch"
  uint64_t buffer_bytes = 0;
  int passes = 0;  // timed passes in all

  double gbps() const { return buffer_gbps > memory_gbps ? buffer_gbps : memory_gbps; }
  // The best of this probe and another (the same test's before and after).
  void Merge(const RooflineProbe& other);
};

// A buffer under this many times the last-level cache is partly read from the cache
// across passes (a victim cache keeps some of a stream that overflows it), so its rate
// overstates memory's.
inline constexpr uint64_t kProbeLlcMultiple = 4;

// The buffer size to probe with by default: 256 MiB, or kProbeLlcMultiple times the
// last-level cache (0: unknown) when that is more (a server's 105 MiB L3), but at most a
// quarter of the physical memory (at least 16 MiB).
uint64_t DefaultProbeBytes(uint64_t llc_bytes);

// Empty, or why a buffer of `probe_bytes` may overstate memory with this last-level
// cache (under kProbeLlcMultiple times it).
std::string ProbeSizeNote(uint64_t probe_bytes, uint64_t llc_bytes);

// Fills a buffer of `buffer_bytes` once (every page resident; transparent huge pages
// requested where available), then reads it with every read pattern, and then, unless
// `memory` is null, `memory_bytes` of it (8-byte aligned: `memory_name`, e.g. "file",
// names it in `best`), each pattern `min_passes` times or more (until ~0.1 s have
// passed), split over the pool's threads in 1 MiB tiles (pool may be null: one thread).
// Every pass's sum is checked: every word was read.
Status ProbeRoofline(uint64_t buffer_bytes, const void* memory, uint64_t memory_bytes,
                     const char* memory_name, const ThreadPool* pool, int min_passes,
                     RooflineProbe* result);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_BANDWIDTH_PROBE_H_
