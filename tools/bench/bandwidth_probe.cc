// Bandwidth probe (see bandwidth_probe.h): every read pattern over a large buffer and
// over the memory decode reads, the best pass of each kept.
#include "tools/bench/bandwidth_probe.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "tools/bench/read_patterns.h"

namespace ember::tools {
namespace {

// The probe's buffer: anonymous memory that asks for transparent huge pages where the
// kernel offers them (madvise mode included). With 4 KiB pages a core reads measurably
// slower (here 27 against 33 GB/s on one thread).
class ProbeBuffer {
 public:
  explicit ProbeBuffer(size_t bytes) {
    constexpr size_t kHuge = size_t{2} << 20;
    reserved_ = bytes + kHuge;
    void* map = mmap(nullptr, reserved_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return;
    map_ = map;
    const uintptr_t aligned =
        (reinterpret_cast<uintptr_t>(map) + kHuge - 1) & ~uintptr_t{kHuge - 1};
    words_ = reinterpret_cast<uint64_t*>(aligned);
#ifdef MADV_HUGEPAGE
    madvise(words_, bytes, MADV_HUGEPAGE);  // a hint: without THP the pages stay 4 KiB
#endif
  }
  ~ProbeBuffer() {
    if (map_) munmap(map_, reserved_);
  }
  ProbeBuffer(const ProbeBuffer&) = delete;
  ProbeBuffer& operator=(const ProbeBuffer&) = delete;
  uint64_t* words() const { return words_; }

 private:
  void* map_ = nullptr;
  size_t reserved_ = 0;
  uint64_t* words_ = nullptr;
};

// One pass: tiles of a span, each summed with the pattern into sums[tile].
struct ReadTask {
  const uint64_t* words;
  size_t num_words, tile_words;
  ReadPattern pattern;
  std::vector<uint64_t> sums;
};

void ReadTiles(void* context, size_t begin, size_t count) {
  ReadTask& t = *static_cast<ReadTask*>(context);
  for (size_t tile = begin; tile < begin + count; ++tile) {
    const size_t first = tile * t.tile_words;
    t.sums[tile] =
        SumWords(t.pattern, t.words + first, std::min(t.tile_words, t.num_words - first));
  }
}

// Threads read the span in tiles of 1 MiB (fewer bytes: at least 8 tiles per thread, of
// at least 4 KiB), each starting on its own run of consecutive tiles (ThreadPool): as
// decode reads a matrix's row tiles.
size_t TileWords(size_t num_words, size_t threads) {
  const size_t per_thread = num_words / (threads * 8);
  return std::min<size_t>(size_t{1} << 17, std::max<size_t>(512, per_thread));
}

// The best pass of every pattern over words[0, n), whose sum is `expected`: into *gbps
// and *best (kept where not better), *passes counting every pass.
Status TimePatterns(const uint64_t* words, size_t n, uint64_t expected,
                    const ThreadPool* pool, int min_passes, double* gbps,
                    ReadPattern* best, int* passes) {
  using Clock = std::chrono::steady_clock;
  const size_t threads = pool ? static_cast<size_t>(pool->num_threads()) : 1;
  ReadTask task;
  task.words = words;
  task.num_words = n;
  task.tile_words = TileWords(n, threads);
  const size_t tiles = (n + task.tile_words - 1) / task.tile_words;
  task.sums.assign(tiles, 0);
  for (ReadPattern pattern : kReadPatterns) {
    task.pattern = pattern;
    const Clock::time_point start = Clock::now();
    for (int pass = 0;
         pass < min_passes ||
         (Clock::now() - start < std::chrono::milliseconds(100) && pass < 50);
         ++pass) {
      const Clock::time_point t0 = Clock::now();
      if (pool) {
        pool->ParallelTiles(tiles, 1, &ReadTiles, &task);
      } else {
        ReadTiles(&task, 0, tiles);
      }
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      uint64_t sum = 0;
      for (uint64_t s : task.sums) sum += s;
      if (sum != expected) return Internal("bandwidth probe: wrong sum");
      const double rate = static_cast<double>(n * sizeof(uint64_t)) / seconds / 1e9;
      if (rate > *gbps) {
        *gbps = rate;
        *best = pattern;
      }
      ++*passes;
    }
  }
  return Status::Ok();
}

// Enough words that every thread has 64 (smaller spans are not worth a probe).
bool BigEnough(uint64_t bytes, const ThreadPool* pool) {
  const uint64_t threads = pool ? static_cast<uint64_t>(pool->num_threads()) : 1;
  return bytes / sizeof(uint64_t) >= threads * 64;
}

}  // namespace

void RooflineProbe::Merge(const RooflineProbe& other) {
  if (other.gbps() > gbps()) best = other.best;
  buffer_gbps = std::max(buffer_gbps, other.buffer_gbps);
  memory_gbps = std::max(memory_gbps, other.memory_gbps);
  buffer_bytes = std::max(buffer_bytes, other.buffer_bytes);
  passes += other.passes;
}

uint64_t DefaultProbeBytes(uint64_t llc_bytes) {
  uint64_t bytes = std::max(uint64_t{256} << 20, kProbeLlcMultiple * llc_bytes);
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_bytes > 0) {
    const uint64_t quarter = static_cast<uint64_t>(pages) * page_bytes / 4;
    bytes = std::min(bytes, std::max<uint64_t>(quarter, uint64_t{16} << 20));
  }
  return bytes;
}

std::string ProbeSizeNote(uint64_t probe_bytes, uint64_t llc_bytes) {
  if (probe_bytes >= kProbeLlcMultiple * llc_bytes) return "";
  char text[200];
  snprintf(text, sizeof(text),
           "the probe's %llu MiB are under %llu times the %llu MiB last-level cache: its "
           "rate may be partly the cache's, and the roofline %% too low",
           static_cast<unsigned long long>(probe_bytes >> 20),
           static_cast<unsigned long long>(kProbeLlcMultiple),
           static_cast<unsigned long long>(llc_bytes >> 20));
  return text;
}

Status ProbeRoofline(uint64_t buffer_bytes, const void* memory, uint64_t memory_bytes,
                     const char* memory_name, const ThreadPool* pool, int min_passes,
                     RooflineProbe* result) {
  *result = RooflineProbe();
  if (!BigEnough(buffer_bytes, pool)) {
    return InvalidArgument("bandwidth probe: a buffer of %llu bytes is too small",
                           static_cast<unsigned long long>(buffer_bytes));
  }
  ReadPattern buffer_best = ReadPattern::kStream, memory_best = ReadPattern::kStream;
  {
    const size_t num_words = buffer_bytes / sizeof(uint64_t);
    ProbeBuffer buffer(num_words * sizeof(uint64_t));
    uint64_t* words = buffer.words();
    if (!words) {
      return ResourceExhausted(
          "bandwidth probe: cannot allocate %llu bytes (try a smaller --probe-mib)",
          static_cast<unsigned long long>(buffer_bytes));
    }
    for (size_t i = 0; i < num_words; ++i) words[i] = i;  // every page resident
    // sum(0 .. n-1) = n (n - 1) / 2, halving the even factor first (mod 2^64).
    const uint64_t n = num_words;
    const uint64_t expected = n % 2 ? n * ((n - 1) / 2) : (n / 2) * (n - 1);
    EMBER_RETURN_IF_ERROR(TimePatterns(words, num_words, expected, pool, min_passes,
                                       &result->buffer_gbps, &buffer_best,
                                       &result->passes));
    result->buffer_bytes = num_words * sizeof(uint64_t);
  }
  if (memory != nullptr && BigEnough(memory_bytes, pool)) {
    if (reinterpret_cast<uintptr_t>(memory) % sizeof(uint64_t) != 0) {
      return InvalidArgument("bandwidth probe: the memory to read is not 8-byte aligned");
    }
    const uint64_t* words = static_cast<const uint64_t*>(memory);
    const size_t num_words = memory_bytes / sizeof(uint64_t);
    // One untimed pass: every page resident, and the sum each timed pass must give.
    const uint64_t expected = SumWords(ReadPattern::kStream, words, num_words);
    EMBER_RETURN_IF_ERROR(TimePatterns(words, num_words, expected, pool, min_passes,
                                       &result->memory_gbps, &memory_best,
                                       &result->passes));
  }
  result->best = result->memory_gbps > result->buffer_gbps
                     ? std::string(memory_name) + ", " + ReadPatternName(memory_best)
                     : std::string("buffer, ") + ReadPatternName(buffer_best);
  return Status::Ok();
}

}  // namespace ember::tools
