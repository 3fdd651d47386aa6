// Threads: sessions over one model run concurrently from several threads and agree with
// the golden run; every tile of a region runs exactly once however the threads take
// them; a worker stalled in its tiles, or a caller that shares its CPU, makes the pool
// run alone for a while; a pool whose work is done sleeps instead of spinning; a
// profile accounts for the pool's regions.
#include <time.h>
#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/generate.h"
#include "runtime/model/model.h"
#include "runtime/profile.h"
#include "runtime/session.h"
#include "runtime/thread_pool.h"
#include "testing/testing.h"
#include "tests/stories260k.h"

namespace ember {
namespace {

std::vector<int32_t> Greedy(const Model& model, const ThreadPool* pool, size_t n) {
  auto session = Session::Create(model, SessionOptions(), pool);
  if (!session.ok()) return {};
  SamplerOptions greedy;
  greedy.temperature = 0.0f;
  Sampler sampler(greedy, model.config().vocab_size, session->sampler_scratch());
  std::vector<int32_t> ids;
  const int32_t bos = model.tokenizer().bos_id();
  GenerateResult result;
  auto collect = [](void* user, int32_t id, std::string_view) {
    static_cast<std::vector<int32_t>*>(user)->push_back(id);
    return true;
  };
  if (!Generate(*session, sampler, &bos, 1, n, collect, &ids, &result).ok()) return {};
  return ids;
}

TEST(ThreadsTest, ConcurrentSessionsOverOneModel) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  auto model = Model::Open(testing::Stories260KPath().c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto shared_pool = ThreadPool::Create(2);
  ASSERT_TRUE(shared_pool.ok());
  const std::vector<int32_t> golden(testing::Stories260KGolden().begin(),
                                    testing::Stories260KGolden().begin() + 80);
  std::vector<std::vector<int32_t>> results(6);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    // Half the sessions run single-threaded, half share one pool (one region runs on
    // its workers at a time; a session that finds it busy runs its tiles itself).
    const ThreadPool* pool = i % 2 ? shared_pool->get() : nullptr;
    threads.emplace_back([&, i, pool] { results[i] = Greedy(**model, pool, 80); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < results.size(); ++i)
    EXPECT_EQ(results[i], golden) << "session " << i;
}

// Tiles are taken by stealing: whatever the thread count (more threads than cores too),
// the tile size and the tiles' durations, each item is run exactly once per region, in
// tiles of the size asked for, and ParallelTiles returns only when all are done.
TEST(ThreadsTest, EveryTileRunsExactlyOnce) {
  struct Region {
    std::vector<std::atomic<int>>* runs;
    size_t n, tile;
    std::atomic<int> bad_tiles{0};
  };
  const ThreadPool::TileTask task = [](void* p, size_t begin, size_t count) {
    Region& r = *static_cast<Region*>(p);
    if (begin % r.tile != 0 || count != std::min(r.tile, r.n - begin)) ++r.bad_tiles;
    // Uneven work: some tiles take tens of microseconds, so threads steal.
    if (begin % 7 == 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    for (size_t i = begin; i < begin + count; ++i) (*r.runs)[i].fetch_add(1);
  };
  for (int threads : {2, 3, 8}) {
    auto pool = ThreadPool::Create(threads);
    ASSERT_TRUE(pool.ok());
    for (size_t n : {1, 2, 3, 17, 1000, 4097}) {
      for (size_t tile : {1, 3, 64}) {
        std::vector<std::atomic<int>> runs(n);
        Region region;
        region.runs = &runs;
        region.n = n;
        region.tile = tile;
        constexpr int kRegions = 10;
        for (int k = 0; k < kRegions; ++k) (*pool)->ParallelTiles(n, tile, task, &region);
        EXPECT_EQ(region.bad_tiles.load(), 0);
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(runs[i].load(), kRegions) << "item " << i << " of " << n << ", tile "
                                              << tile << ", " << threads << " threads";
        }
      }
    }
  }
}

// More tiles than a run's word holds (2^24 - 1): they are handed out in groups, still
// each once.
TEST(ThreadsTest, RegionsOfManyTiles) {
  constexpr size_t kTiles = (size_t{1} << 24) + 1000;
  std::vector<uint8_t> runs(kTiles, 0);  // each byte written by the one tile that owns it
  const ThreadPool::TileTask task = [](void* p, size_t begin, size_t count) {
    uint8_t* r = static_cast<uint8_t*>(p);
    for (size_t i = begin; i < begin + count; ++i) ++r[i];
  };
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  (*pool)->ParallelTiles(kTiles, 1, task, runs.data());
  size_t wrong = 0;
  for (uint8_t r : runs) wrong += r != 1;
  EXPECT_EQ(wrong, 0u);
}

double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

constexpr std::chrono::microseconds kTileTime(200);

// After a forward pass that used the workers, a second of idling costs (almost) no CPU:
// the workers park rather than spin.
TEST(ThreadsTest, IdleWorkersDoNotSpin) {
  // Wide enough that the feed-forward and classifier rows split across the pool.
  const testing::AlignedBytes bytes([] {
    std::vector<uint8_t> b;
    Status s = SerializeModel(testing::TinyModelSpec(256, 2, 8, 8, 1024, 2000, 64), &b);
    EXPECT_TRUE(s.ok()) << s.message();
    return b;
  }());
  auto model = Model::FromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto pool = ThreadPool::Create(4);
  ASSERT_TRUE(pool.ok());
  auto session = Session::Create(**model, SessionOptions(), pool->get());
  ASSERT_TRUE(session.ok());
  const int32_t tokens[] = {1, 300, 301, 302};
  ASSERT_TRUE(session->Prefill(tokens, 4).ok());
  ASSERT_TRUE(session->Decode(303).ok());

  // Workers spin for a bounded number of iterations before they park; on a slow or busy
  // machine (or under qemu) that takes longer. Wait, up to 20 s, for a quiet 100 ms: this
  // bounds nothing about speed, only that the pool goes quiet at all.
  for (int i = 0; i < 200; ++i) {
    const double start = ProcessCpuSeconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (ProcessCpuSeconds() - start < 0.005) break;
  }
  const double before = ProcessCpuSeconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double idle_cpu = ProcessCpuSeconds() - before;
  // Spinning workers would burn ~3 CPU-seconds here (and would never have gone quiet).
  EXPECT_LT(idle_cpu, 0.05) << "CPU seconds used by an idle pool of 4 threads";
  printf("idle pool of 4 threads used %.4f CPU seconds in 1 s\n", idle_cpu);
}

// A worker descheduled in the middle of its tile (here it sleeps there) keeps the caller
// waiting far longer than a tile takes: after four such regions the pool runs its calls
// on the calling thread alone (every tile still once), and after a while on its workers
// again.
TEST(ThreadsTest, AWorkerStalledInATileMakesThePoolRunAlone) {
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  struct Region {
    std::thread::id caller = std::this_thread::get_id();
    std::chrono::milliseconds worker_sleeps{0};
    std::atomic<bool> caller_began{false}, worker_began{false};
    std::atomic<int> on_worker{0};
    std::vector<std::atomic<int>> runs = std::vector<std::atomic<int>>(64);
  };
  // Two tiles, one on each thread at the same time: each waits until the other thread
  // has begun its tile (so neither can take the other's), then the worker sleeps in its.
  const ThreadPool::TileTask both_then_sleep = [](void* p, size_t, size_t) {
    auto* r = static_cast<Region*>(p);
    const bool on_caller = std::this_thread::get_id() == r->caller;
    (on_caller ? r->caller_began : r->worker_began) = true;
    while (!(on_caller ? r->worker_began : r->caller_began).load()) {
      std::this_thread::yield();
    }
    if (!on_caller) {
      r->on_worker++;
      std::this_thread::sleep_for(r->worker_sleeps);
    }
  };
  ASSERT_FALSE((*pool)->RunsAlone());
  for (int stall = 0; stall < 4; ++stall) {
    Region r;
    r.worker_sleeps = std::chrono::milliseconds(100);
    (*pool)->ParallelTiles(2, 1, both_then_sleep, &r);
    EXPECT_EQ(r.on_worker.load(), 1);
  }
  EXPECT_TRUE((*pool)->RunsAlone());
  Region alone;
  const ThreadPool::TileTask count = [](void* p, size_t begin, size_t n) {
    auto* r = static_cast<Region*>(p);
    if (std::this_thread::get_id() != r->caller) r->on_worker++;
    for (size_t i = begin; i < begin + n; ++i) r->runs[i]++;
  };
  (*pool)->ParallelTiles(64, 1, count, &alone);
  EXPECT_EQ(alone.on_worker.load(), 0);
  for (const auto& runs : alone.runs) EXPECT_EQ(runs.load(), 1);
  // The window ends (500 ms): the worker takes its tiles again. (Whether the pool runs
  // alone after this region is not checked: on a loaded machine, or under qemu, the
  // worker may lose its core in it, and one stall right after a window starts the next.)
  while ((*pool)->RunsAlone()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Region again;
  (*pool)->ParallelTiles(2, 1, both_then_sleep, &again);
  EXPECT_EQ(again.on_worker.load(), 1);
}

// With more threads, the pool leaves out one worker at a time: after four stalled regions
// on three threads, calls run on at most two (the third worker takes no tile), and more
// stalls take it down to the caller alone.
TEST(ThreadsTest, StallsLeaveOutOneWorkerAtATime) {
  auto pool = ThreadPool::Create(3);
  ASSERT_TRUE(pool.ok());
  struct Region {
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<bool> worker_began{false};
    std::mutex mutex;
    std::vector<std::thread::id> ids;
    std::vector<std::atomic<int>> runs = std::vector<std::atomic<int>>(64);
  };
  // The caller's tile waits (up to 1 s) until a worker has begun one; the workers sleep
  // 100 ms in theirs, so the caller waits for them.
  const ThreadPool::TileTask stall = [](void* p, size_t, size_t) {
    auto* r = static_cast<Region*>(p);
    if (std::this_thread::get_id() != r->caller) {
      r->worker_began = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return;
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!r->worker_began.load() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
  };
  const ThreadPool::TileTask count = [](void* p, size_t begin, size_t n) {
    auto* r = static_cast<Region*>(p);
    {
      std::lock_guard<std::mutex> lock(r->mutex);
      if (std::find(r->ids.begin(), r->ids.end(), std::this_thread::get_id()) ==
          r->ids.end()) {
        r->ids.push_back(std::this_thread::get_id());
      }
    }
    for (size_t i = begin; i < begin + n; ++i) {
      r->runs[i]++;
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (std::chrono::steady_clock::now() < until) {
      }
    }
  };
  ASSERT_EQ((*pool)->ActiveThreads(), 3);
  for (int i = 0; i < 4; ++i) {
    Region r;
    (*pool)->ParallelTiles(3, 1, stall, &r);
  }
  EXPECT_EQ((*pool)->ActiveThreads(), 2);
  EXPECT_FALSE((*pool)->RunsAlone());
  Region r;
  (*pool)->ParallelTiles(64, 1, count, &r);
  EXPECT_LE(r.ids.size(), 2u);
  for (const auto& runs : r.runs) EXPECT_EQ(runs.load(), 1);
  // More stalls: down to the caller alone (a bound of 20 s only so that a failure ends).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(*pool)->RunsAlone() && std::chrono::steady_clock::now() < give_up) {
    Region more;
    (*pool)->ParallelTiles(3, 1, stall, &more);
  }
  EXPECT_TRUE((*pool)->RunsAlone());
}

#ifdef __linux__
// A caller that shares its CPU with a busy thread (here a spinner pinned beside it) waits
// for that CPU a large part of the time, whatever the tiles: the pool soon runs alone.
TEST(ThreadsTest, ACallerSharingItsCpuMakesThePoolRunAlone) {
  if (access("/proc/thread-self/schedstat", R_OK) != 0) {
    GTEST_SKIP() << "no /proc/thread-self/schedstat: the run-queue sign is not available";
  }
  auto pool = ThreadPool::Create(2);  // before the pinning, which new threads inherit
  ASSERT_TRUE(pool.ok());
  cpu_set_t before, one;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  // Tiles of 20 ms of wall time: a thread's wait for another's, at most one tile, is no
  // stall; what the pool notices is the caller's time waiting for its CPU.
  const ThreadPool::TileTask spin = [](void*, size_t, size_t count) {
    const auto until = std::chrono::steady_clock::now() + count * 100 * kTileTime;
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  // A bound of 20 s only so that a failure ends.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(*pool)->RunsAlone() && std::chrono::steady_clock::now() < give_up) {
    (*pool)->ParallelTiles(2, 1, spin, nullptr);
  }
  const bool alone = (*pool)->RunsAlone();
  stop = true;
  spinner.join();
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(before), &before), 0);
  EXPECT_TRUE(alone);
}
#endif

// With a profile, ParallelTiles accounts for the regions it ran on several threads: their
// wall time, times the thread count, and the tiles' time inside it. Inline runs (one
// thread, or one tile) are not regions and add nothing.
TEST(ThreadsTest, ProfileAccountsRegionsAndTiles) {
  // Each item of a tile busy-waits 200 us, so the tiles' time has a known floor.
  const ThreadPool::TileTask spin = [](void*, size_t, size_t count) {
    const auto until = std::chrono::steady_clock::now() + count * kTileTime;
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  ForwardProfile profile;
  (*pool)->ParallelTiles(1, 1, spin, nullptr, &profile);  // one tile: inline
  EXPECT_EQ(profile.region_ns, 0u);
  EXPECT_EQ(profile.tile_ns, 0u);

  (*pool)->ParallelTiles(16, 1, spin, nullptr, &profile);
  (*pool)->ParallelTiles(8, 2, spin, nullptr, &profile);
  const uint64_t floor_ns = 24 * std::chrono::nanoseconds(kTileTime).count();  // items
  EXPECT_GE(profile.tile_ns, floor_ns);
  EXPECT_EQ(profile.region_thread_ns, 2 * profile.region_ns);
  // Each thread's tiles lie inside the regions' wall time.
  EXPECT_LE(profile.tile_ns, profile.region_thread_ns);
  // Two threads share the 24 items: the regions take at least half their time.
  EXPECT_GE(profile.region_ns, floor_ns / 2);
  printf("2 threads, 24 items of 200 us: regions %.3f ms, threads busy %.1f %%\n",
         profile.region_ns / 1e6, 100.0 * profile.tile_ns / profile.region_thread_ns);

  auto single = ThreadPool::Create(1);
  ASSERT_TRUE(single.ok());
  ForwardProfile none;
  (*single)->ParallelTiles(16, 1, spin, nullptr, &none);
  EXPECT_EQ(none.region_ns, 0u);
  EXPECT_EQ(none.tile_ns, 0u);
}

}  // namespace
}  // namespace ember
