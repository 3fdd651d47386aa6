// The bandwidth probe's read patterns (read_patterns.h), in Highway code for the best
// target of the CPU: vector loads as wide as decode's kernels use.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tools/bench/read_patterns.cc"
#include "tools/bench/read_patterns.h"

#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ember::tools::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// How far ahead kPrefetch prefetches: decode's kernels' distance
// (x86::kDecodePrefetchBytes).
constexpr size_t kAheadWords = 16384 / sizeof(uint64_t);
constexpr size_t kLineWords = 64 / sizeof(uint64_t);

// words[0, n) summed in four vector accumulators (independent loads in flight), with a
// prefetch of every line kAheadWords ahead when kPrefetch. Prefetches never fault: the
// address may lie past the span.
template <bool kPrefetch>
uint64_t SumSpan(const uint64_t* HWY_RESTRICT words, size_t n) {
  const hn::ScalableTag<uint64_t> d;
  const size_t N = hn::Lanes(d);
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  size_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    if (kPrefetch) {
      // The lines this step reads, kAheadWords on (4N words: 1 to 4 lines, or part of
      // one).
      for (size_t line = 0; line < 4 * N; line += kLineWords) {
        __builtin_prefetch(words + i + line + kAheadWords, 0, 2);
      }
    }
    a0 = hn::Add(a0, hn::LoadU(d, words + i));
    a1 = hn::Add(a1, hn::LoadU(d, words + i + N));
    a2 = hn::Add(a2, hn::LoadU(d, words + i + 2 * N));
    a3 = hn::Add(a3, hn::LoadU(d, words + i + 3 * N));
  }
  uint64_t sum =
      hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  for (; i < n; ++i) sum += words[i];
  return sum;
}

uint64_t SumWordsTarget(int pattern, const uint64_t* HWY_RESTRICT words, size_t n) {
  switch (static_cast<ReadPattern>(pattern)) {
    case ReadPattern::kStream:
      return SumSpan<false>(words, n);
    case ReadPattern::kPrefetch:
      return SumSpan<true>(words, n);
    case ReadPattern::kStreams4:
      break;
  }
  // Four quarters, 1 KiB of each in turn: four streams in flight at once.
  constexpr size_t kBlockWords = 1024 / sizeof(uint64_t);
  const size_t quarter = n / 4 / kBlockWords * kBlockWords;
  uint64_t sum = 0;
  for (size_t block = 0; block < quarter; block += kBlockWords) {
    for (size_t s = 0; s < 4; ++s)
      sum += SumSpan<false>(words + s * quarter + block, kBlockWords);
  }
  return sum + SumSpan<false>(words + 4 * quarter, n - 4 * quarter);
}

}  // namespace ember::tools::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::tools {

HWY_EXPORT(SumWordsTarget);

const char* ReadPatternName(ReadPattern pattern) {
  switch (pattern) {
    case ReadPattern::kStream:
      return "stream";
    case ReadPattern::kPrefetch:
      return "prefetch";
    case ReadPattern::kStreams4:
      return "4 streams";
  }
  return "";
}

uint64_t SumWords(ReadPattern pattern, const uint64_t* words, size_t n) {
  return HWY_DYNAMIC_DISPATCH(SumWordsTarget)(static_cast<int>(pattern), words, n);
}

}  // namespace ember::tools
#endif
