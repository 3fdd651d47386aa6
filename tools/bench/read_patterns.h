// The read patterns of the bandwidth probe (bandwidth_probe.h): ways to stream through
// memory that a core may read at different rates, each summing every word it reads.
#ifndef EMBER_TOOLS_BENCH_READ_PATTERNS_H_
#define EMBER_TOOLS_BENCH_READ_PATTERNS_H_

#include <cstddef>
#include <cstdint>

namespace ember::tools {

enum class ReadPattern {
  kStream,    // front to back, the widest vector loads of the CPU
  kPrefetch,  // the same with a software prefetch of every line 16 KiB ahead into L2, as
              // decode's kernels prefetch ahead of the weights they stream
  kStreams4,  // four streams at once, one per quarter of the span, 1 KiB from each in
              // turn
};
inline constexpr ReadPattern kReadPatterns[] = {
    ReadPattern::kStream, ReadPattern::kPrefetch, ReadPattern::kStreams4};

// "stream", "prefetch", "4 streams".
const char* ReadPatternName(ReadPattern pattern);

// The sum (mod 2^64) of words[0, n), read with `pattern` (the same for every pattern:
// the probe checks that every word was read).
uint64_t SumWords(ReadPattern pattern, const uint64_t* words, size_t n);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_READ_PATTERNS_H_
