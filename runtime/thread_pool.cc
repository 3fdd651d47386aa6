// ThreadPool over pthreadpool, or inline when built without threads (firmware).
#include "runtime/thread_pool.h"

#ifdef EMBER_WITH_THREADS
#include <pthreadpool.h>
#endif

namespace ember {

Result<std::unique_ptr<ThreadPool>> ThreadPool::Create(int num_threads) {
  if (num_threads < 1 || num_threads > kMaxThreads) {
    return InvalidArgument("thread count %d (1 to %d allowed)", num_threads, kMaxThreads);
  }
  std::unique_ptr<ThreadPool> pool(new ThreadPool(num_threads));
  if (num_threads > 1) {
#ifdef EMBER_WITH_THREADS
    pool->pool_ = pthreadpool_create(static_cast<size_t>(num_threads));
    if (!pool->pool_) return Internal("could not create %d threads", num_threads);
#else
    return Unimplemented("this build has no threads; use 1 thread");
#endif
  }
  return pool;
}

ThreadPool::~ThreadPool() {
#ifdef EMBER_WITH_THREADS
  if (pool_) pthreadpool_destroy(pool_);
#endif
}

void ThreadPool::ParallelTiles(size_t n, size_t tile, TileTask task,
                               void* context) const {
  if (n == 0) return;
  if (pool_ == nullptr || n <= tile) {
    for (size_t begin = 0; begin < n; begin += tile) {
      task(context, begin, n - begin < tile ? n - begin : tile);
    }
    return;
  }
#ifdef EMBER_WITH_THREADS
  pthreadpool_parallelize_1d_tile_1d(pool_, task, context, n, tile, /*flags=*/0);
#endif
}

}  // namespace ember
