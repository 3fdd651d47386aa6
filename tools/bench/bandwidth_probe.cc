// Bandwidth probe (see bandwidth_probe.h): a STREAM-like read of a large buffer.
#include "tools/bench/bandwidth_probe.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

namespace ember::tools {
namespace {

struct ReadTask {
  const uint64_t* words;
  size_t words_per_thread;
  size_t num_words;
  uint64_t sums[ThreadPool::kMaxThreads];
};

// Sums chunk i's words with eight independent accumulators, which the compiler turns
// into vector loads: the loop is bound by memory, not by the additions.
void ReadChunk(void* context, size_t begin, size_t count) {
  ReadTask& t = *static_cast<ReadTask*>(context);
  for (size_t chunk = begin; chunk < begin + count; ++chunk) {
    const size_t first = chunk * t.words_per_thread;
    const size_t last = std::min(t.num_words, first + t.words_per_thread);
    uint64_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = first;
    for (; i + 8 <= last; i += 8) {
      for (int j = 0; j < 8; ++j) acc[j] += t.words[i + j];
    }
    for (; i < last; ++i) acc[0] += t.words[i];
    uint64_t sum = 0;
    for (int j = 0; j < 8; ++j) sum += acc[j];
    t.sums[chunk] = sum;
  }
}

// The probe's buffer: anonymous memory that asks for transparent huge pages where the
// kernel offers them (madvise mode included). With 4 KiB pages a core reads measurably
// slower (here 27 against 33 GB/s on one thread), and model weights in the page cache
// may well sit in huge folios: a 4 KiB-page probe would understate the machine and
// overstate the roofline.
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

}  // namespace

uint64_t DefaultProbeBytes() {
  uint64_t bytes = uint64_t{256} << 20;
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_bytes > 0) {
    const uint64_t quarter = static_cast<uint64_t>(pages) * page_bytes / 4;
    bytes = std::min(bytes, std::max<uint64_t>(quarter, uint64_t{16} << 20));
  }
  return bytes;
}

namespace {

// Reads words[0, num_words) `min_passes` times or more (until ~0.25 s have passed), split
// over the pool's threads; *checksum gets the sum of every word read.
void TimeReads(const uint64_t* words, size_t num_words, const ThreadPool* pool,
               int min_passes, BandwidthResult* result, uint64_t* checksum) {
  using Clock = std::chrono::steady_clock;
  const size_t threads = pool ? static_cast<size_t>(pool->num_threads()) : 1;
  std::unique_ptr<ReadTask> task(new ReadTask());
  task->words = words;
  task->num_words = num_words;
  task->words_per_thread = (num_words + threads - 1) / threads;
  std::vector<double> gbps;
  const Clock::time_point start = Clock::now();
  uint64_t check = 0;
  while (static_cast<int>(gbps.size()) < min_passes ||
         (Clock::now() - start < std::chrono::milliseconds(250) && gbps.size() < 100)) {
    const Clock::time_point t0 = Clock::now();
    if (pool) {
      pool->ParallelTiles(threads, 1, &ReadChunk, task.get());
    } else {
      ReadChunk(task.get(), 0, 1);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    gbps.push_back(static_cast<double>(num_words * sizeof(uint64_t)) / seconds / 1e9);
    for (size_t i = 0; i < threads; ++i) check += task->sums[i];
  }
  std::vector<double> sorted = gbps;
  std::sort(sorted.begin(), sorted.end());
  result->gbps = sorted.back();
  result->median_gbps = sorted[sorted.size() / 2];
  result->buffer_bytes = num_words * sizeof(uint64_t);
  result->passes = static_cast<int>(gbps.size());
  *checksum = check;
}

Status CheckSize(uint64_t bytes, const ThreadPool* pool) {
  const size_t threads = pool ? static_cast<size_t>(pool->num_threads()) : 1;
  if (bytes / sizeof(uint64_t) < threads * 64) {
    return InvalidArgument("bandwidth probe: a buffer of %llu bytes is too small",
                           static_cast<unsigned long long>(bytes));
  }
  return Status::Ok();
}

}  // namespace

Status MeasureReadBandwidth(uint64_t buffer_bytes, const ThreadPool* pool, int min_passes,
                            BandwidthResult* result) {
  EMBER_RETURN_IF_ERROR(CheckSize(buffer_bytes, pool));
  const size_t num_words = buffer_bytes / sizeof(uint64_t);
  ProbeBuffer buffer(num_words * sizeof(uint64_t));
  uint64_t* words = buffer.words();
  if (!words) {
    return ResourceExhausted(
        "bandwidth probe: cannot allocate %llu bytes (try a smaller "
        "--probe-mib)",
        static_cast<unsigned long long>(buffer_bytes));
  }
  for (size_t i = 0; i < num_words; ++i) words[i] = i;  // every page resident
  uint64_t check = 0;
  TimeReads(words, num_words, pool, min_passes, result, &check);
  // sum(0 .. n-1) per pass: proves every word was read (and keeps the reads alive).
  const uint64_t n = num_words, per_pass = n % 2 ? n * ((n - 1) / 2) : (n / 2) * (n - 1);
  if (check != per_pass * static_cast<uint64_t>(result->passes)) {
    return Internal("bandwidth probe: wrong sum");
  }
  return Status::Ok();
}

Status MeasureReadBandwidthOf(const void* data, uint64_t bytes, const ThreadPool* pool,
                              int min_passes, BandwidthResult* result) {
  if (data == nullptr || reinterpret_cast<uintptr_t>(data) % sizeof(uint64_t) != 0) {
    return InvalidArgument("bandwidth probe: the memory to read is not 8-byte aligned");
  }
  EMBER_RETURN_IF_ERROR(CheckSize(bytes, pool));
  const uint64_t* words = static_cast<const uint64_t*>(data);
  const size_t num_words = bytes / sizeof(uint64_t);
  // One untimed pass: every page resident, and the sum each timed pass must give.
  ReadTask whole;
  whole.words = words;
  whole.num_words = num_words;
  whole.words_per_thread = num_words;
  ReadChunk(&whole, 0, 1);
  uint64_t check = 0;
  TimeReads(words, num_words, pool, min_passes, result, &check);
  if (check != whole.sums[0] * static_cast<uint64_t>(result->passes)) {
    return Internal("bandwidth probe: wrong sum");
  }
  return Status::Ok();
}

}  // namespace ember::tools
