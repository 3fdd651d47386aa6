// ThreadPool: the one pool of worker threads, created by the caller at load and passed
// explicitly. ember's own parallel regions run on its workers, which take tiles as they
// come (work stealing) so that a busy or slow core delays no one; XNNPACK gets a
// pthreadpool of the same size (created when a session on the XNNPACK backend asks).
// Idle workers spin briefly, then sleep; they never spin forever. When the caller keeps
// waiting for a worker that lost its core mid-tile, or for a CPU (a core shared with
// other work, or more threads than free cores), the pool runs its regions on one thread
// fewer for a while (down to the calling thread alone), then tries them all again.
#ifndef EMBER_RUNTIME_THREAD_POOL_H_
#define EMBER_RUNTIME_THREAD_POOL_H_

#include <cstddef>
#include <memory>

#include "runtime/status.h"

struct pthreadpool;

namespace ember {

struct ForwardProfile;
struct PoolState;  // thread_pool.cc

class ThreadPool {
 public:
  // Most threads a pool may have; more is an error, not a silent clamp.
  static constexpr int kMaxThreads = 256;

  // num_threads >= 1 (the calling thread counts as one).
  static Result<std::unique_ptr<ThreadPool>> Create(int num_threads);
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
  // When the pool's threads do not each have a core (another process runs on one, or
  // there are more threads than cores), the pool runs every call on one thread fewer for
  // 500 ms (ActiveThreads(); the last workers sleep), then on all again; if the fewer
  // still stall, on one fewer again, down to the calling thread alone (RunsAlone()). The
  // sign, four times in a row with under 100 ms between (once, in the first 100 ms after
  // such a window, which then resumes with its thread count): the caller waited in a
  // region, far longer than its tiles take, for a tile a worker began (the worker lost
  // its core mid-tile), or for a CPU while runnable, over a quarter of the last 5 ms or
  // more (Linux). A window that starts within 1 s of the last is twice as long, up to
  // 4 s. The tiles are the same either way.
  //
  // With a profile, a call that runs on more than one thread adds its wall time and its
  // threads' time in tiles to it (see ForwardProfile); that costs two clock reads a tile.
  // A call run alone for that reason counts as a region whose workers were idle.
  using TileTask = void (*)(void* context, size_t begin, size_t count);
  void ParallelTiles(size_t n, size_t tile, TileTask task, void* context,
                     ForwardProfile* profile = nullptr) const;
  // How many threads calls now run on: num_threads() but in a window (see above).
  int ActiveThreads() const;
  // Whether calls now run on the calling thread alone (a window of one thread).
  bool RunsAlone() const;

 private:
  explicit ThreadPool(int num_threads);
  int num_threads_;
  std::unique_ptr<PoolState> state_;  // null when single-threaded
};

}  // namespace ember

#endif  // EMBER_RUNTIME_THREAD_POOL_H_
