// TileRuns: the thread pool's lock-free core. A region's units of work are split into
// one run of consecutive units per thread, each run in a 64-bit word that any thread may
// take from with one compare-and-swap: its owner from the front, others the back half
// (work stealing). A thread that steals stores the rest of the stolen half in its own
// (empty) word, where others may steal from it in turn.
#ifndef EMBER_RUNTIME_POOL_TILE_RUNS_H_
#define EMBER_RUNTIME_POOL_TILE_RUNS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace ember {

class TileRuns {
 public:
  // Most units a region has: units are tiles, or groups of tiles past this many.
  static constexpr uint64_t kMaxUnits = (uint64_t{1} << 24) - 1;

  // False if out of memory.
  bool Init(int num_threads) {
    num_threads_ = num_threads;
    slots_.reset(new (std::nothrow) Slot[num_threads]);
    return slots_ != nullptr;
  }

  // Region `gen`: units [0, units) in `threads` runs of (nearly) equal length, the
  // others' words empty. Stored with release: a thread that takes a unit sees what the
  // caller wrote before.
  void Start(uint64_t gen, size_t units, int threads) {
    const size_t t = static_cast<size_t>(threads);
    for (size_t i = 0; i < static_cast<size_t>(num_threads_); ++i) {
      slots_[i].run.store(
          i < t ? Pack(gen, i * units / t, (i + 1) * units / t) : Pack(gen, 0, 0),
          std::memory_order_release);
    }
  }

  // The next unit of `self`'s run, from the front.
  bool TakeOwn(int self, uint64_t gen, size_t* unit) {
    std::atomic<uint64_t>& run = slots_[self].run;
    uint64_t v = run.load(std::memory_order_acquire);
    while (GenOf(v) == (gen & 0xFFFF) && BeginOf(v) < EndOf(v)) {
      if (run.compare_exchange_weak(v, v + (uint64_t{1} << 24), std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
        *unit = BeginOf(v);
        return true;
      }
    }
    return false;
  }

  // The back half (rounded up) of another thread's run: its first unit to run now, the
  // rest into self's (empty) word.
  bool Steal(int self, uint64_t gen, size_t* unit) {
    for (int k = 1; k < num_threads_; ++k) {
      std::atomic<uint64_t>& run = slots_[(self + k) % num_threads_].run;
      uint64_t v = run.load(std::memory_order_acquire);
      while (GenOf(v) == (gen & 0xFFFF) && BeginOf(v) < EndOf(v)) {
        const uint64_t begin = BeginOf(v), end = EndOf(v);
        const uint64_t mid = end - (end - begin + 1) / 2;
        if (run.compare_exchange_weak(v, Pack(gen, begin, mid), std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
          slots_[self].run.store(Pack(gen, mid + 1, end), std::memory_order_release);
          *unit = mid;
          return true;
        }
      }
    }
    return false;
  }

 private:
  // A run [begin, end) of region `gen` (16 bits of it) in one word, so that taking from
  // either end is one compare-and-swap and a stale thread's swap fails.
  static uint64_t Pack(uint64_t gen, uint64_t begin, uint64_t end) {
    return (gen & 0xFFFF) << 48 | begin << 24 | end;
  }
  static uint64_t GenOf(uint64_t run) { return run >> 48; }
  static uint64_t BeginOf(uint64_t run) { return (run >> 24) & kMaxUnits; }
  static uint64_t EndOf(uint64_t run) { return run & kMaxUnits; }

  struct alignas(64) Slot {
    std::atomic<uint64_t> run{0};
  };
  int num_threads_ = 0;
  std::unique_ptr<Slot[]> slots_;  // one per thread; the caller's is slots_[0]
};

}  // namespace ember

#endif  // EMBER_RUNTIME_POOL_TILE_RUNS_H_
