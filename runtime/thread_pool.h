// ThreadPool: the one pool of worker threads (pthreadpool, shared with XNNPACK), created
// by the caller at load and passed explicitly. Idle workers sleep; they do not spin.
#ifndef EMBER_RUNTIME_THREAD_POOL_H_
#define EMBER_RUNTIME_THREAD_POOL_H_

#include <cstddef>
#include <memory>

#include "runtime/status.h"

struct pthreadpool;

namespace ember {

struct ForwardProfile;

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
  // For XNNPACK; null when single-threaded or built without threads.
  pthreadpool* handle() const { return pool_; }

  // Calls task(context, begin, count) over [0, n) in tiles of `tile` items (the last may
  // be shorter). The split depends only on n and tile, never on the thread count.
  // With a profile, a call that runs on more than one thread adds its wall time and its
  // threads' time in tiles to it (see ForwardProfile); that costs two clock reads a tile.
  using TileTask = void (*)(void* context, size_t begin, size_t count);
  void ParallelTiles(size_t n, size_t tile, TileTask task, void* context,
                     ForwardProfile* profile = nullptr) const;

 private:
  explicit ThreadPool(int num_threads) : num_threads_(num_threads) {}
  // The tiles on the pool's threads (n > tile, pool_ set).
  void Parallelize(size_t n, size_t tile, TileTask task, void* context) const;
  int num_threads_;
  pthreadpool* pool_ = nullptr;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_THREAD_POOL_H_
