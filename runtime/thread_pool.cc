// ThreadPool (thread_pool.h): workers that take tiles by stealing runs of them, or
// inline when built without threads (firmware).
//
// Why not pthreadpool's parallelize for ember's regions: it returns only when every
// worker has taken part, so one worker descheduled by another process (a busy core on a
// phone or board, a small core of big.LITTLE) stalls every region until it runs again,
// and its workers spin while they wait. Here a region is a set of runs of tiles, one run
// per thread, in per-thread words that any thread may take from: the owner from the
// front, others the back half. The caller waits only for tiles a worker has begun.
#include "runtime/thread_pool.h"

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
#ifdef __linux__
#include <fcntl.h>
#include <unistd.h>
#endif
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
// When its threads do not each have a core of their own, the pool runs its regions on
// one thread fewer for kSoloNs (the last worker asleep, so that the scheduler can give
// the others free cores), then tries all its threads again; if the fewer threads stall
// too, one fewer again, down to the calling thread alone. The sign: kStalls stalls in a
// row, each within kStallWindowNs of the last, a stall being either
// - a caller that waited for units a worker began, longer than kStallNs and than
//   kStallUnits of its own units took on average: it waited for a worker that lost its
//   core in the middle of a tile (or a slower core); or
// - a caller that waited for a CPU while runnable (Linux's run-queue time) for more than
//   a kSharedPart of the last kSampleNs or more: it shares its core, with another process
//   or with its own worker (which the scheduler may wake on the caller's CPU when the
//   other one is busy).
// With a CPU-bound process on one of two cores, decode on 2 threads otherwise waits out
// that process's time slices and runs slower than on 1 (0.63x to 0.74x measured on the
// EPYC VM, docs/benchmarks.md). A quiet machine shows a stall now and then (other tasks
// wake on its cores, a model's first pass faults its pages in), seldom kStalls in a row.
// Right after a window (within kStallWindowNs of its end) one stall starts the next, on
// as many threads; a window that starts within kAgainNs of the last one's end is twice as
// long, up to kMaxSoloNs: under lasting contention the tries cost little.
constexpr int kStalls = 4;
constexpr uint64_t kStallNs = 500000;
constexpr uint64_t kStallUnits = 8;
constexpr uint64_t kSampleNs = 5000000;
constexpr uint64_t kSharedPart = 4;
constexpr uint64_t kStallWindowNs = 100000000;
constexpr uint64_t kSoloNs = 500000000;
constexpr uint64_t kAgainNs = 1000000000;
constexpr uint64_t kMaxSoloNs = 8 * kSoloNs;
// A caller asleep waiting for the last tiles looks again for tiles to take this often:
// a worker may have published a stolen run and then been descheduled.
constexpr std::chrono::microseconds kRecheck(200);

// How long the calling thread has waited, runnable, for a CPU since it started (the
// second field of Linux's /proc/thread-self/schedstat), in ns; 0 where not known.
uint64_t RunQueueNs() {
#ifdef __linux__
  const int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[96];
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  const char* c = text;
  while (*c >= '0' && *c <= '9') ++c;  // time on a CPU
  if (*c++ != ' ') return 0;
  uint64_t ns = 0;
  for (; *c >= '0' && *c <= '9'; ++c) ns = ns * 10 + static_cast<uint64_t>(*c - '0');
  return ns;
#else
  return 0;
#endif
}

// A run of units [begin, end) of region `gen` (16 bits of it) in one 64-bit word, so
// that taking from either end is one compare-and-swap and a stale thread's swap fails.
// Units are tiles, or groups of tiles when a region has more than kMaxUnits of them.
constexpr uint64_t kMaxUnits = (uint64_t{1} << 24) - 1;
uint64_t Pack(uint64_t gen, uint64_t begin, uint64_t end) {
  return (gen & 0xFFFF) << 48 | begin << 24 | end;
}
uint64_t GenOf(uint64_t run) { return run >> 48; }
uint64_t BeginOf(uint64_t run) { return (run >> 24) & kMaxUnits; }
uint64_t EndOf(uint64_t run) { return run & kMaxUnits; }

struct alignas(64) Slot {
  std::atomic<uint64_t> run{0};
};

}  // namespace

struct PoolState {
  explicit PoolState(int threads) : num_threads(threads), region_threads(threads) {}
  const int num_threads;
  std::unique_ptr<Slot[]> slots;  // one per thread; the caller's is slots[0]

  // The region. Written by the caller before it stores the slots (release); read by a
  // thread only after it took a unit from a slot (acquire), and until that unit is done.
  ThreadPool::TileTask task = nullptr;
  void* context = nullptr;
  size_t n = 0, tile = 0, tiles_per_unit = 1;

  std::atomic<size_t> pending{0};       // units not finished
  std::atomic<uint32_t> generation{0};  // one more per region
  std::atomic<int> sleepers{0};         // workers asleep on work_cv
  std::atomic<int> region_threads;      // threads in the last region (the caller's first)
  std::atomic<int> benched{0};          // workers asleep on bench_cv (see kStallNs)
  std::atomic<bool> caller_waiting{false};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> quiet_until_ns{0};      // no spinning before (see kPreemptedNs)
  std::atomic<uint64_t> window_until_ns{0};     // regions on fewer threads (kStallNs)
  std::atomic<int> window_threads{0};           // how many, until then
  uint64_t last_stall_ns = 0;                   // the caller's (under call_mutex)
  int stalls = 0;                               // in a row (likewise)
  uint64_t solo_ns = kSoloNs;                   // the next window's length (likewise)
  uint64_t sample_ns = 0, sample_queue_ns = 0;  // the caller's last run-queue sample
  pthread_t sample_thread{};                    // (likewise), taken on this thread
  std::mutex mutex;                             // for the two condition variables
  std::condition_variable work_cv, done_cv, bench_cv;
  std::mutex call_mutex;  // one region at a time

  pthread_t threads[ThreadPool::kMaxThreads];
  int started = 0;
  struct Worker {
    PoolState* state;
    int self;
  } workers[ThreadPool::kMaxThreads];  // what each worker thread is started with

  std::mutex xnn_mutex;
  std::atomic<pthreadpool*> xnn{nullptr};

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

  // The next unit of `self`'s run, from the front.
  bool TakeOwn(int self, uint64_t gen, size_t* unit) {
    std::atomic<uint64_t>& run = slots[self].run;
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
  // rest into self's (empty) slot, where others may take from it in turn.
  bool Steal(int self, uint64_t gen, size_t* unit) {
    for (int k = 1; k < num_threads; ++k) {
      std::atomic<uint64_t>& run = slots[(self + k) % num_threads].run;
      uint64_t v = run.load(std::memory_order_acquire);
      while (GenOf(v) == (gen & 0xFFFF) && BeginOf(v) < EndOf(v)) {
        const uint64_t begin = BeginOf(v), end = EndOf(v);
        const uint64_t mid = end - (end - begin + 1) / 2;
        if (run.compare_exchange_weak(v, Pack(gen, begin, mid), std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
          slots[self].run.store(Pack(gen, mid + 1, end), std::memory_order_release);
          *unit = mid;
          return true;
        }
      }
    }
    return false;
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
    while (TakeOwn(self, gen, &unit) || Steal(self, gen, &unit)) RunUnit(unit), ++units;
    return units;
  }

  // How many threads a region starting now takes part in (see kStallNs).
  int Threads(uint64_t now) const {
    return now < window_until_ns.load(std::memory_order_acquire)
               ? window_threads.load(std::memory_order_relaxed)
               : num_threads;
  }

  // Whether the caller waited for a CPU for more than a kSharedPart of the time since the
  // last sample (at least kSampleNs ago): then it shares its core (see kStallNs).
  bool CallerShares(uint64_t now) {
    if (now - sample_ns < kSampleNs) return false;
    const uint64_t queue_ns = RunQueueNs();
    const pthread_t self = pthread_self();
    const bool shares = sample_ns != 0 && pthread_equal(self, sample_thread) &&
                        queue_ns - sample_queue_ns > (now - sample_ns) / kSharedPart;
    sample_ns = now;
    sample_queue_ns = queue_ns;
    sample_thread = self;
    return shares;
  }

  // A region on `threads` threads from `start` to `now` in which the caller ran `units`
  // units in `work_ns`, then waited `wait_ns` for the rest: was it stalled (kStallNs)?
  void NoteRegion(int threads, uint64_t start, uint64_t now, uint64_t work_ns,
                  size_t units, uint64_t wait_ns) {
    const bool waited =
        wait_ns > kStallNs && wait_ns > kStallUnits * work_ns / (units ? units : 1);
    if (!CallerShares(now) && !waited) return;
    stalls =
        last_stall_ns != 0 && start - last_stall_ns < kStallWindowNs ? stalls + 1 : 1;
    last_stall_ns = now;
    const uint64_t last_end = window_until_ns.load(std::memory_order_relaxed);
    const bool in_window = threads < num_threads;
    const bool retry = !in_window && last_end != 0 && start - last_end < kStallWindowNs;
    if (stalls < kStalls && !retry) return;
    // A window's threads stall too: one fewer, as long again. A retry: the last count.
    const int next = in_window ? threads - 1
                     : retry   ? window_threads.load(std::memory_order_relaxed)
                               : num_threads - 1;
    if (!in_window) {
      const bool again = last_end != 0 && now - last_end < kAgainNs;
      solo_ns = again ? (2 * solo_ns < kMaxSoloNs ? 2 * solo_ns : kMaxSoloNs) : kSoloNs;
    }
    window_threads.store(next, std::memory_order_relaxed);
    window_until_ns.store(now + solo_ns, std::memory_order_release);  // after the count
    last_stall_ns = 0;
  }

  // The calling thread: its own run and what it can steal, then the tiles others run.
  void Run(ThreadPool::TileTask run_task, void* run_context, size_t items,
           size_t run_tile, int run_threads) {
    task = run_task;
    context = run_context;
    n = items;
    tile = run_tile;
    const size_t tiles = (items + run_tile - 1) / run_tile;
    tiles_per_unit = (tiles + kMaxUnits - 1) / kMaxUnits;
    const size_t units = (tiles + tiles_per_unit - 1) / tiles_per_unit;
    pending.store(units, std::memory_order_relaxed);
    const uint32_t gen = generation.load(std::memory_order_relaxed) + 1;
    const size_t threads = static_cast<size_t>(run_threads);
    for (size_t i = 0; i < static_cast<size_t>(num_threads); ++i) {
      slots[i].run.store(i < threads
                             ? Pack(gen, i * units / threads, (i + 1) * units / threads)
                             : Pack(gen, 0, 0),
                         std::memory_order_release);
    }
    const int last_threads = region_threads.exchange(run_threads);
    generation.store(gen);
    if (sleepers.load() > 0) {
      std::lock_guard<std::mutex> lock(mutex);
      work_cv.notify_all();
    }
    if (run_threads > last_threads && benched.load() > 0) {  // some take part again
      std::lock_guard<std::mutex> lock(mutex);
      bench_cv.notify_all();
    }
    const uint64_t start = NowNs();
    const size_t units_run = Work(0, gen);
    const uint64_t worked = NowNs();
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
    const uint64_t now = NowNs();
    NoteRegion(run_threads, start, now, worked - start, units_run, now - worked);
  }

  // A worker: waits for a region (spinning, then asleep), takes what it can, repeats.
  void WorkerLoop(int self) {
    uint32_t seen = 0, gen = 0;
    const auto started = [&] {
      gen = generation.load(std::memory_order_acquire);
      return gen != seen || stop.load(std::memory_order_relaxed);
    };
    for (;;) {
      if (self >= region_threads.load()) {  // left out (see kStallNs): asleep till wanted
        std::unique_lock<std::mutex> lock(mutex);
        benched.fetch_add(1);
        while (self >= region_threads.load() && !stop.load()) bench_cv.wait(lock);
        benched.fetch_sub(1);
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

Result<std::unique_ptr<ThreadPool>> ThreadPool::Create(int num_threads) {
  if (num_threads < 1 || num_threads > kMaxThreads) {
    return InvalidArgument("thread count %d (1 to %d allowed)", num_threads, kMaxThreads);
  }
  std::unique_ptr<ThreadPool> pool(new (std::nothrow) ThreadPool(num_threads));
  if (!pool) return ResourceExhausted("out of memory for the thread pool");
  if (num_threads == 1) return pool;
#ifdef EMBER_WITH_THREADS
  pool->state_.reset(new (std::nothrow) PoolState(num_threads));
  PoolState* s = pool->state_.get();
  if (s) s->slots.reset(new (std::nothrow) Slot[num_threads]);
  if (!s || !s->slots) return ResourceExhausted("out of memory for the thread pool");
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
    s.bench_cv.notify_all();
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

bool ThreadPool::RunsAlone() const { return state_ != nullptr && ActiveThreads() == 1; }

int ThreadPool::ActiveThreads() const {
#ifdef EMBER_WITH_THREADS
  if (state_ != nullptr) return state_->Threads(NowNs());
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
  const int threads = state_->Threads(NowNs());  // fewer in a window (kStallNs)
  if (threads == 1) {
    if (profile == nullptr) return inline_run();
    // A region all the same, with the workers idle in it.
    const uint64_t start = NowNs();
    inline_run();
    const uint64_t wall = NowNs() - start;
    profile->region_ns += wall;
    profile->region_thread_ns += wall * static_cast<uint64_t>(num_threads_);
    profile->tile_ns += wall;
    return;
  }
  if (profile == nullptr) return state_->Run(task, context, n, tile, threads);
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
  state_->Run(run, &timed, n, tile, threads);
  const uint64_t wall = NowNs() - start;
  profile->region_ns += wall;
  profile->region_thread_ns += wall * static_cast<uint64_t>(num_threads_);
#else
  (void)profile;  // no workers without threads: every call runs inline
  inline_run();
#endif
}

}  // namespace ember
