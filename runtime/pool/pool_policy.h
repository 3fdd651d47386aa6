// PoolPolicy: how many of its threads the pool runs a region on, decided from what the
// pool saw of its last regions. A pure state machine: no threads, no atomics, no clock of
// its own (times come in the observations), so tests drive it with tables of events.
//
// Why: on a machine where the pool's threads do not each have a core (another process
// on one of two cores, more threads than free cores, a small core of big.LITTLE), a
// region waits for a worker that lost its core mid-tile, or the caller waits for a CPU.
// Decode on 2 threads beside a busy core then ran at 0.63x to 0.74x of 1 thread
// (docs/benchmarks.md). The policy answers with a window: regions on one thread fewer for
// a while, then all threads again.
//
// Contention that lasts: a row of stalls, at least stalls_to_act, each within
// stall_gap_ns of the last, the row at least persist_ns long. A burst shorter than that
// (a kernel thread's few ms, the host taking a vCPU for a while) costs less than a
// window would on one thread fewer: on a quiet VM such bursts came every second or two,
// and 0.5 s windows on one thread brought two-thread decode down to 1.06x one thread.
//
// States (StateAt):
//   kAllThreads    every region on all threads; a row of stalls starts a window;
//   kFewerThreads  a window: regions on window_threads() until it ends; if the fewer
//                  threads stall too (a row again), one fewer, as long again;
//   kRetrying      within again_ns of a window's end: all threads again; a row starts
//                  the next window on as many threads as the last, twice as long (up to
//                  max_window_ns), so lasting contention costs few tries.
// A stall: the caller waited for units a worker began longer than stall_wait_ns and than
// stall_units of its own units took (the worker lost its core), or the caller's run-queue
// time (waiting for a CPU while runnable) grew by more than 1/shared_part of the time
// since the last sample while a worker ran on the caller's CPU (the two took turns on
// one CPU). A foreign thread on the caller's CPU is no reason for fewer threads: the
// workers on the other CPUs take the caller's units.
#ifndef EMBER_RUNTIME_POOL_POLICY_H_
#define EMBER_RUNTIME_POOL_POLICY_H_

#include <cstddef>
#include <cstdint>

namespace ember {

// The policy's constants, in one place. Times in ns of the pool's clock.
struct PoolPolicyConfig {
  int stalls_to_act = 4;                // stalls in a row that start a window...
  uint64_t stall_gap_ns = 100000000;    // ...each this soon after the last...
  uint64_t persist_ns = 50000000;       // ...the row this long
  uint64_t stall_wait_ns = 500000;      // a caller's wait that may be a stall...
  uint64_t stall_units = 8;             // ...if longer than this many of its units
  uint64_t sample_ns = 5000000;         // least time between run-queue samples
  uint64_t shared_part = 4;             // run-queue growth over 1/this: shares
  uint64_t window_ns = 100000000;       // a window's length
  uint64_t again_ns = 1000000000;       // a window this soon after: twice as long
  uint64_t max_window_ns = 4000000000;  // the longest window
};

// What the pool saw of one region that ran on more than one thread.
struct RegionSeen {
  int threads = 0;              // threads the region ran on
  uint64_t start_ns = 0;        // the caller began its own units
  uint64_t end_ns = 0;          // every unit was done
  uint64_t caller_work_ns = 0;  // the caller's time in its own units...
  size_t caller_units = 0;      // ...and how many it ran
  uint64_t caller_wait_ns = 0;  // then its wait for the units others ran
  // A worker ran units of it on the caller's CPU (or the CPUs are not known).
  bool worker_on_caller_cpu = true;
  // The caller thread's run-queue time so far (ns), if the policy asked for a sample
  // (WantsRunQueueSample) and the pool could read it; and which thread the caller was.
  bool has_run_queue = false;
  uint64_t run_queue_ns = 0;
  uint64_t caller_id = 0;
};

class PoolPolicy {
 public:
  enum class State { kAllThreads, kFewerThreads, kRetrying };

  explicit PoolPolicy(int num_threads,
                      const PoolPolicyConfig& config = PoolPolicyConfig())
      : num_threads_(num_threads), config_(config), next_window_ns_(config.window_ns) {}

  // Threads a region that starts at now_ns runs on (1 to num_threads).
  int ThreadsAt(uint64_t now_ns) const {
    return now_ns < window_end_ns_ ? window_threads_ : num_threads_;
  }
  State StateAt(uint64_t now_ns) const;
  // Whether the pool should read the caller's run-queue time for the region ending now.
  bool WantsRunQueueSample(uint64_t now_ns) const {
    return sample_ns_ == 0 || now_ns - sample_ns_ >= config_.sample_ns;
  }
  // The region just seen; may start, shrink or renew a window.
  void Observe(const RegionSeen& region);

  int num_threads() const { return num_threads_; }
  int window_threads() const { return window_threads_; }
  uint64_t window_end_ns() const { return window_end_ns_; }
  const PoolPolicyConfig& config() const { return config_; }

 private:
  bool Stalled(const RegionSeen& region);

  const int num_threads_;
  const PoolPolicyConfig config_;
  int stalls_ = 0;              // in a row
  uint64_t row_start_ns_ = 0;   // the row's first stalled region began
  uint64_t last_stall_ns_ = 0;  // 0: none counted
  uint64_t window_end_ns_ = 0;  // 0: there was no window yet
  int window_threads_ = 0;
  uint64_t next_window_ns_;
  uint64_t sample_ns_ = 0, sample_run_queue_ns_ = 0, sample_caller_ = 0;
  bool co_ran_ = false;  // a worker ran on the caller's CPU since the last sample
};

}  // namespace ember

#endif  // EMBER_RUNTIME_POOL_POLICY_H_
