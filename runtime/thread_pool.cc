// ThreadPool over pthreadpool, or inline when built without threads (firmware).
#include "runtime/thread_pool.h"

#include <chrono>
#include <new>

#include "runtime/profile.h"

#ifdef EMBER_WITH_THREADS
#include <pthreadpool.h>
#endif

// ThreadSanitizer cannot see the synchronization inside Debian's pthreadpool (it is not
// instrumented), so it would report every hand-over of a task's data to the workers as a
// race. Under TSan, ParallelTiles states pthreadpool's documented contract instead: the
// call happens before each tile, and each tile happens before the call returns. Tiles
// are not ordered among themselves, so races between tiles are still reported.
#if defined(__SANITIZE_THREAD__)
#define EMBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define EMBER_TSAN 1
#endif
#endif
#if defined(EMBER_TSAN) && defined(EMBER_WITH_THREADS)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace ember {

Result<std::unique_ptr<ThreadPool>> ThreadPool::Create(int num_threads) {
  if (num_threads < 1 || num_threads > kMaxThreads) {
    return InvalidArgument("thread count %d (1 to %d allowed)", num_threads, kMaxThreads);
  }
  std::unique_ptr<ThreadPool> pool(new (std::nothrow) ThreadPool(num_threads));
  if (!pool) return ResourceExhausted("out of memory for the thread pool");
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

#ifdef EMBER_WITH_THREADS
namespace {

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace
#endif

void ThreadPool::ParallelTiles(size_t n, size_t tile, TileTask task, void* context,
                               ForwardProfile* profile) const {
  if (n == 0) return;
  if (pool_ == nullptr || n <= tile) {
    for (size_t begin = 0; begin < n; begin += tile) {
      task(context, begin, n - begin < tile ? n - begin : tile);
    }
    return;
  }
#ifdef EMBER_WITH_THREADS
  if (profile == nullptr) {
    Parallelize(n, tile, task, context);
    return;
  }
  struct Timed {
    TileTask task;
    void* context;
    uint64_t* tile_ns;
  } timed{task, context, &profile->tile_ns};
  const TileTask run = [](void* p, size_t begin, size_t count) {
    auto* t = static_cast<Timed*>(p);
    const uint64_t start = NowNs();
    t->task(t->context, begin, count);
    __atomic_fetch_add(t->tile_ns, NowNs() - start, __ATOMIC_RELAXED);
  };
  const uint64_t start = NowNs();
  Parallelize(n, tile, run, &timed);
  const uint64_t wall = NowNs() - start;
  profile->region_ns += wall;
  profile->region_thread_ns += wall * static_cast<uint64_t>(num_threads_);
#else
  (void)profile;  // no pool_ without threads: every call ran inline above
#endif
}

#ifdef EMBER_WITH_THREADS
void ThreadPool::Parallelize(size_t n, size_t tile, TileTask task, void* context) const {
#if defined(EMBER_TSAN)
  struct Annotated {
    TileTask task;
    void* context;
    char start, done;  // TSan sync objects: distinct, so tiles stay unordered
  } annotated{task, context, 0, 0};
  const TileTask run = [](void* p, size_t begin, size_t count) {
    auto* a = static_cast<Annotated*>(p);
    __tsan_acquire(&a->start);
    a->task(a->context, begin, count);
    __tsan_release(&a->done);
  };
  __tsan_release(&annotated.start);
  pthreadpool_parallelize_1d_tile_1d(pool_, run, &annotated, n, tile, /*flags=*/0);
  __tsan_acquire(&annotated.done);
#else
  pthreadpool_parallelize_1d_tile_1d(pool_, task, context, n, tile, /*flags=*/0);
#endif
}
#endif  // EMBER_WITH_THREADS

}  // namespace ember
