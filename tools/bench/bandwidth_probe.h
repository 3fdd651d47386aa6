// Bandwidth probe: the machine's memory read bandwidth, measured by streaming through a
// buffer much larger than the caches with a given number of threads. `ember bench`
// divides decode's effective bandwidth by it (the roofline %).
#ifndef EMBER_TOOLS_BENCH_BANDWIDTH_PROBE_H_
#define EMBER_TOOLS_BENCH_BANDWIDTH_PROBE_H_

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"
#include "runtime/thread_pool.h"

namespace ember::tools {

struct BandwidthResult {
  double gbps = 0;         // best pass: bytes read / seconds / 1e9
  double median_gbps = 0;  // median pass
  uint64_t buffer_bytes = 0;
  int passes = 0;
};

// The buffer size to probe with by default: 256 MiB, or a quarter of the physical memory
// on a smaller device (at least 16 MiB).
uint64_t DefaultProbeBytes();

// Fills a buffer of `buffer_bytes` once (so every page is resident; transparent huge
// pages requested where available), then reads all of it
// `min_passes` times or more (until ~0.25 s have passed), split evenly over the pool's
// threads (pool may be null: one thread).
Status MeasureReadBandwidth(uint64_t buffer_bytes, const ThreadPool* pool, int min_passes,
                            BandwidthResult* result);

// The same, reading `bytes` of existing memory (8-byte aligned) instead: `ember bench`
// reads the model's mapped file with it, so decode is compared with a plain read of the
// very pages its weights are in (the same page sizes, the same cache residency).
Status MeasureReadBandwidthOf(const void* data, uint64_t bytes, const ThreadPool* pool,
                              int min_passes, BandwidthResult* result);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_BANDWIDTH_PROBE_H_
