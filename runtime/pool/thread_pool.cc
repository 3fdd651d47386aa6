// ThreadPool (thread_pool.h): workers that take tiles by stealing runs of them, or
// inline when built without threads (firmware). This is the mechanism; how many threads
// a region runs on is PoolPolicy's decision (pool_policy.h), fed what the pool saw.
//
// Why not pthreadpool's parallelize for ember's regions: it returns only when every
// worker has taken part, so one worker descheduled by another process (a busy core on a
// phone or board, a small core of big.LITTLE) stalls every region until it runs again,
// and its workers spin while they wait. Here a region is a set of runs of tiles, one run
// per thread, in per-thread words that any thread may take from: the owner from the
// front, others the back half. The caller waits only for tiles a worker has begun.
#include "runtime/pool/thread_pool.h"

#include <chrono>
#include <new>

#include "runtime/profile.h"

#ifdef EMBER_WITH_THREADS
#include <pthread.h>
#include <pthreadpool.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "hwy/cache_control.h"
#include "runtime/pool/run_queue.h"
#include "runtime/pool/tile_runs.h"
#endif

namespace ember {

#ifdef EMBER_WITH_THREADS
namespace {

uint64_t NowNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// How long a thread spins for work, or for the tiles others run, before it sleeps:
// longer than the gaps between the regions of a decode step, far shorter than a
// scheduler's time slice. A sleeping worker leaves its core to whatever else runs there
// and is woken when the next region starts.
constexpr uint64_t kSpinNs = 50000;
// A spinning thread that finds this much time gone between two looks at the clock (64
// pauses apart, a few microseconds) was descheduled: its core is shared with other work.
// Then no thread of the pool spins for kQuietNs: spinning would only take time slices
// from the thread it waits for, and a thread that sleeps between regions is woken ahead
// of a CPU-bound neighbour (it has run less), so it seldom loses its core in the middle
// of a tile, which is what the caller would have to wait for.
constexpr uint64_t kPreemptedNs = 300000;
constexpr uint64_t kQuietNs = 100000000;
// A caller asleep waiting for the last tiles looks again for tiles to take this often:
// a worker may have published a stolen run and then been descheduled.
constexpr std::chrono::microseconds kRecheck(200);

uint64_t SteadyClockNs(void*) { return NowNs(); }

// Tells the policy which thread a run-queue sample is of: each thread's own address.
uint64_t CallerId() {
  static thread_local char tag;
  return reinterpret_cast<uintptr_t>(&tag);
}

}  // namespace

struct PoolState {
  PoolState(int threads, const ThreadPoolOptions& options)
      : num_threads(threads),
        adapt(options.adapt_to_contention),
        run_queue(options.clock_ns == nullptr),
        clock_ns(options.clock_ns ? options.clock_ns : &SteadyClockNs),
        clock_context(options.clock_context),
        policy(threads, options.policy),
        region_threads(threads) {}
  const int num_threads;
  const bool adapt;      // ask the policy (else every region on all threads)
  const bool run_queue;  // read the caller's run-queue time (not with a caller's clock)
  uint64_t (*const clock_ns)(void*);
  void* const clock_context;
  PoolPolicy policy;  // under call_mutex
  TileRuns runs;      // the region's units, one run per thread

  // The region. Written by the caller before it stores the slots (release); read by a
  // thread only after it took a unit from a slot (acquire), and until that unit is done.
  ThreadPool::TileTask task = nullptr;
  void* context = nullptr;
  size_t n = 0, tile = 0, tiles_per_unit = 1;

  std::atomic<size_t> pending{0};       // units not finished
  std::atomic<uint32_t> generation{0};  // one more per region
  std::atomic<int> sleepers{0};         // workers asleep on work_cv
  std::atomic<int> region_threads;      // threads in the last region (the caller's first)
  std::atomic<int> left_out{0};         // workers asleep on left_out_cv: not in it
  std::atomic<bool> caller_waiting{false};
  std::atomic<int> caller_cpu{-1};         // the region's caller's CPU (-1: not known)
  std::atomic<bool> on_caller_cpu{false};  // a worker took units on that CPU
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> quiet_until_ns{0};  // no spinning before (see kPreemptedNs)
  std::mutex mutex;                         // for the condition variables
  std::condition_variable work_cv, done_cv, left_out_cv;
  std::mutex call_mutex;  // one region at a time

  pthread_t threads[ThreadPool::kMaxThreads];
  int started = 0;
  struct Worker {
    PoolState* state;
    int self;
  } workers[ThreadPool::kMaxThreads];  // what each worker thread is started with

  std::mutex xnn_mutex;
  std::atomic<pthreadpool*> xnn{nullptr};

  uint64_t Now() const { return clock_ns(clock_context); }
  // Threads a region starting now runs on (under call_mutex).
  int Threads() const { return adapt ? policy.ThreadsAt(Now()) : num_threads; }

  // Runs unit `unit`'s tiles and counts it done.
  void RunUnit(size_t unit) {
    const size_t tiles = (n + tile - 1) / tile;
    const size_t first = unit * tiles_per_unit;
    const size_t last = first + tiles_per_unit < tiles ? first + tiles_per_unit : tiles;
    for (size_t t = first; t < last; ++t) {
      const size_t begin = t * tile;
      task(context, begin, n - begin < tile ? n - begin : tile);
    }
    if (pending.fetch_sub(1) == 1 && caller_waiting.load()) {
      // The last unit: wake the caller if it sleeps (under the mutex, so that it cannot
      // be between its check and its wait).
      std::lock_guard<std::mutex> lock(mutex);
      done_cv.notify_one();
    }
  }

  // Spins until done() or for kSpinNs, calling check() every 64 pauses; false at once
  // while the pool is quiet (see kPreemptedNs).
  template <class Done, class Check>
  bool Spin(const Done& done, const Check& check) {
    uint64_t last = NowNs();
    const uint64_t start = last;
    if (last < quiet_until_ns.load(std::memory_order_relaxed)) return done();
    for (int i = 0; !done(); ++i) {
      hwy::Pause();
      if (i % 64 != 63) continue;
      check();
      const uint64_t now = NowNs();
      if (now - last > kPreemptedNs) {
        quiet_until_ns.store(now + kQuietNs, std::memory_order_relaxed);
        return done();
      }
      if (now - start > kSpinNs) return done();
      last = now;
    }
    return true;
  }

  // Everything `self` can take of region `gen`; how many units that was.
  size_t Work(int self, uint64_t gen) {
    size_t unit, units = 0;
    while (runs.TakeOwn(self, gen, &unit) || runs.Steal(self, gen, &unit)) {
      if (units == 0 && self != 0 && adapt) NoteCpu();  // before the unit counts done
      RunUnit(unit), ++units;
    }
    return units;
  }

  // A worker about to run units: does it share the caller's CPU (for the policy)?
  void NoteCpu() {
    const int caller = caller_cpu.load(std::memory_order_relaxed);
    if (caller < 0 || CurrentCpu() == caller) {
      on_caller_cpu.store(true, std::memory_order_relaxed);
    }
  }

  // The calling thread: its own run and what it can steal, then the tiles others run.
  void Run(ThreadPool::TileTask run_task, void* run_context, size_t items,
           size_t run_tile, int run_threads) {
    task = run_task;
    context = run_context;
    n = items;
    tile = run_tile;
    const size_t tiles = (items + run_tile - 1) / run_tile;
    tiles_per_unit = (tiles + TileRuns::kMaxUnits - 1) / TileRuns::kMaxUnits;
    const size_t units = (tiles + tiles_per_unit - 1) / tiles_per_unit;
    pending.store(units, std::memory_order_relaxed);
    if (adapt) {  // before runs.Start publishes the units
      caller_cpu.store(CurrentCpu(), std::memory_order_relaxed);
      on_caller_cpu.store(false, std::memory_order_relaxed);
    }
    const uint32_t gen = generation.load(std::memory_order_relaxed) + 1;
    runs.Start(gen, units, run_threads);
    const int last_threads = region_threads.exchange(run_threads);
    generation.store(gen);
    if (sleepers.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex);
      work_cv.notify_all();
    }
    if (run_threads > last_threads && left_out.load() > 0) {  // some take part again
      std::lock_guard<std::mutex> lock(mutex);
      left_out_cv.notify_all();
    }
    const uint64_t start = adapt ? Now() : 0;
    const size_t units_run = Work(0, gen);
    const uint64_t worked = adapt ? Now() : 0;
    // Now only units others took remain; some may yet be published for stealing (a
    // thief stores the rest of its run after taking it).
    const auto finished = [&] { return pending.load(std::memory_order_acquire) == 0; };
    if (!Spin(finished, [&] { Work(0, gen); })) {
      while (!finished()) {
        caller_waiting.store(true);
        {
          std::unique_lock<std::mutex> lock(mutex);
          if (pending.load() != 0) done_cv.wait_for(lock, kRecheck);
        }
        caller_waiting.store(false);
        Work(0, gen);
      }
    }
    if (adapt) Tell(run_threads, start, worked, units_run);
  }

  // What the caller saw of the region it ran, for the policy.
  void Tell(int run_threads, uint64_t start, uint64_t worked, size_t units_run) {
    RegionSeen seen;
    seen.threads = run_threads;
    seen.start_ns = start;
    seen.end_ns = Now();
    seen.caller_work_ns = worked - start;
    seen.caller_units = units_run;
    seen.caller_wait_ns = seen.end_ns - worked;
    seen.worker_on_caller_cpu = on_caller_cpu.load(std::memory_order_relaxed);
    if (run_queue && policy.WantsRunQueueSample(seen.end_ns)) {
      seen.has_run_queue = RunQueueNs(&seen.run_queue_ns);
      seen.caller_id = CallerId();
    }
    policy.Observe(seen);
  }

  // A worker: waits for a region (spinning, then asleep), takes what it can, repeats.
  void WorkerLoop(int self) {
    uint32_t seen = 0, gen = 0;
    const auto started = [&] {
      gen = generation.load(std::memory_order_acquire);
      return gen != seen || stop.load(std::memory_order_relaxed);
    };
    for (;;) {
      if (self >= region_threads.load()) {  // left out by the policy: asleep till wanted
        std::unique_lock<std::mutex> lock(mutex);
        left_out.fetch_add(1);
        while (self >= region_threads.load() && !stop.load()) left_out_cv.wait(lock);
        left_out.fetch_sub(1);
      }
      if (!Spin(started, [] {})) {
        std::unique_lock<std::mutex> lock(mutex);
        sleepers.fetch_add(1);
        while ((gen = generation.load()) == seen && !stop.load()) work_cv.wait(lock);
        sleepers.fetch_sub(1);
      }
      if (stop.load(std::memory_order_acquire)) return;
      seen = gen;
      if (self < region_threads.load()) Work(self, gen);
    }
  }
};

namespace {

void* WorkerMain(void* arg) {
  const PoolState::Worker* worker = static_cast<const PoolState::Worker*>(arg);
  worker->state->WorkerLoop(worker->self);
  return nullptr;
}

}  // namespace
#else
struct PoolState {};  // a build without threads has no workers: state_ stays null
#endif  // EMBER_WITH_THREADS

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads) {}

Result<std::unique_ptr<ThreadPool>> ThreadPool::Create(int num_threads,
                                                       const ThreadPoolOptions& options) {
  if (num_threads < 1 || num_threads > kMaxThreads) {
    return InvalidArgument("thread count %d (1 to %d allowed)", num_threads, kMaxThreads);
  }
  const PoolPolicyConfig& policy = options.policy;
  if (policy.stalls_to_act < 1 || policy.shared_part < 1 || policy.window_ns < 1 ||
      policy.max_window_ns < policy.window_ns) {
    return InvalidArgument(
        "pool policy: stalls_to_act, shared_part and window_ns must "
        "be at least 1, max_window_ns at least window_ns");
  }
  std::unique_ptr<ThreadPool> pool(new (std::nothrow) ThreadPool(num_threads));
  if (!pool) return ResourceExhausted("out of memory for the thread pool");
  if (num_threads == 1) return pool;
#ifdef EMBER_WITH_THREADS
  pool->state_.reset(new (std::nothrow) PoolState(num_threads, options));
  PoolState* s = pool->state_.get();
  if (!s || !s->runs.Init(num_threads)) {
    return ResourceExhausted("out of memory for the thread pool");
  }
  for (int i = 1; i < num_threads; ++i) {
    s->workers[i] = PoolState::Worker{s, i};
    if (pthread_create(&s->threads[s->started], nullptr, &WorkerMain, &s->workers[i]) !=
        0) {
      return Internal("could not create %d threads", num_threads);  // ~ThreadPool joins
    }
    ++s->started;
  }
  return pool;
#else
  (void)options;
  return Unimplemented("this build has no threads; use 1 thread");
#endif
}

ThreadPool::~ThreadPool() {
#ifdef EMBER_WITH_THREADS
  if (!state_) return;
  PoolState& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.stop.store(true);
    s.generation.fetch_add(1);
    s.work_cv.notify_all();
    s.left_out_cv.notify_all();
  }
  for (int i = 0; i < s.started; ++i) pthread_join(s.threads[i], nullptr);
  if (pthreadpool* xnn = s.xnn.load()) pthreadpool_destroy(xnn);
#endif
}

Status ThreadPool::PrepareXnnpackHandle() const {
#ifdef EMBER_WITH_THREADS
  if (!state_) return Status::Ok();
  std::lock_guard<std::mutex> lock(state_->xnn_mutex);
  if (state_->xnn.load() != nullptr) return Status::Ok();
  pthreadpool* xnn = pthreadpool_create(static_cast<size_t>(num_threads_));
  if (xnn == nullptr) return Internal("could not create %d threads", num_threads_);
  state_->xnn.store(xnn);
#endif
  return Status::Ok();
}

int ThreadPool::ActiveThreads() const {
#ifdef EMBER_WITH_THREADS
  if (state_ != nullptr) {
    std::lock_guard<std::mutex> region(state_->call_mutex);
    return state_->Threads();
  }
#endif
  return num_threads_;
}

pthreadpool* ThreadPool::handle() const {
#ifdef EMBER_WITH_THREADS
  return state_ ? state_->xnn.load(std::memory_order_acquire) : nullptr;
#else
  return nullptr;
#endif
}

void ThreadPool::ParallelTiles(size_t n, size_t tile, TileTask task, void* context,
                               ForwardProfile* profile) const {
  if (n == 0) return;
  const auto inline_run = [&] {
    for (size_t begin = 0; begin < n; begin += tile) {
      task(context, begin, n - begin < tile ? n - begin : tile);
    }
  };
#ifdef EMBER_WITH_THREADS
  // One region at a time: a second caller runs its tiles itself rather than wait.
  if (!state_ || n <= tile || !state_->call_mutex.try_lock()) return inline_run();
  std::lock_guard<std::mutex> region(state_->call_mutex, std::adopt_lock);
  const int threads = state_->Threads();  // fewer in a window of the policy
  if (profile == nullptr) {
    return threads == 1 ? inline_run() : state_->Run(task, context, n, tile, threads);
  }
  // A region, with its tiles timed; run alone, its workers idle in it.
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
  if (threads == 1) {
    inline_run();
  } else {
    state_->Run(run, &timed, n, tile, threads);
  }
  const uint64_t wall = NowNs() - start;
  if (threads == 1) profile->tile_ns += wall;
  profile->region_ns += wall;
  profile->region_thread_ns += wall * static_cast<uint64_t>(num_threads_);
#else
  (void)profile;  // no workers without threads: every call runs inline
  inline_run();
#endif
}

}  // namespace ember
