// ThreadPool: the one pool of worker threads, created by the caller at load and passed
// explicitly. ember's own parallel regions run on its workers, which take tiles as they
// come (work stealing) so that a busy or slow core delays no one; XNNPACK gets a
// pthreadpool of the same size (created when a session on the XNNPACK backend asks).
// Idle workers spin briefly, then sleep; they never spin forever. How many threads a
// region runs on is the PoolPolicy's decision (pool_policy.h), which an embedder can
// switch off (ThreadPoolOptions::adapt_to_contention).
#ifndef EMBER_RUNTIME_POOL_THREAD_POOL_H_
#define EMBER_RUNTIME_POOL_THREAD_POOL_H_

#include <cstddef>
#include <memory>

#include "runtime/pool/pool_policy.h"
#include "runtime/status.h"

struct pthreadpool;

namespace ember {

struct ForwardProfile;
struct PoolState;  // thread_pool.cc

struct ThreadPoolOptions {
  // On (the default): when the pool's threads do not each have a core, regions run on
  // fewer of them for a while (PoolPolicy). Off: every region on all threads, and the
  // pool never reads the caller's run-queue time.
  bool adapt_to_contention = true;
  // The policy's clock, in ns, monotonic; null: std::chrono::steady_clock. Tests give a
  // fake one. Called by the thread that calls ParallelTiles, a few times a region. With
  // a clock of the caller's the policy has no run-queue sign (the kernel's times could
  // not be compared with the clock's).
  uint64_t (*clock_ns)(void* context) = nullptr;
  void* clock_context = nullptr;
  PoolPolicyConfig policy;
};

class ThreadPool {
 public:
  // Most threads a pool may have; more is an error, not a silent clamp.
  static constexpr int kMaxThreads = 256;

  // num_threads >= 1 (the calling thread counts as one).
  static Result<std::unique_ptr<ThreadPool>> Create(
      int num_threads, const ThreadPoolOptions& options = ThreadPoolOptions());
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // A pthreadpool of num_threads() for XNNPACK, created on the first call (at load: a
  // session on the XNNPACK backend calls it when it is created); null when
  // single-threaded or built without threads. handle() returns it once made (else null:
  // XNNPACK then runs on the calling thread).
  Status PrepareXnnpackHandle() const;
  pthreadpool* handle() const;

  // Calls task(context, begin, count) over [0, n) in tiles of `tile` items (the last may
  // be shorter). The tiles depend only on n and tile, never on the thread count or on
  // which thread runs which, so results are bitwise the same for any thread count.
  //
  // How tiles are handed out: each thread starts on its own run of consecutive tiles
  // (the calling thread on the first), takes them front to back, and when its run is
  // done takes the back half of another's. The caller never waits for a worker that has
  // not started (a descheduled worker's tiles are taken over), only for tiles a worker
  // is running. Calls from several threads at once: one runs on the workers, the others
  // run their tiles on their own thread.
  //
  // A call runs on the threads the policy gives (ActiveThreads(); the other workers
  // sleep); the tiles are the same either way.
  //
  // With a profile, a call that runs on more than one thread adds its wall time and its
  // threads' time in tiles to it (see ForwardProfile); that costs two clock reads a tile.
  // A call run alone for that reason counts as a region whose workers were idle.
  using TileTask = void (*)(void* context, size_t begin, size_t count);
  void ParallelTiles(size_t n, size_t tile, TileTask task, void* context,
                     ForwardProfile* profile = nullptr) const;
  // How many threads a call starting now runs on: num_threads() but in a window of the
  // policy (pool_policy.h). Waits for a call running on the workers to end: do not call
  // it from inside a tile.
  int ActiveThreads() const;

 private:
  explicit ThreadPool(int num_threads);
  int num_threads_;
  std::unique_ptr<PoolState> state_;  // null when single-threaded
};

}  // namespace ember

#endif  // EMBER_RUNTIME_POOL_THREAD_POOL_H_
