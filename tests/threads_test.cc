// Threads: sessions over one model run concurrently from several threads and agree with
// the golden run; every tile of a region runs exactly once however the threads take
// them; the pool runs regions on the threads its policy gives (on a fake clock), or on
// all of them with the policy off; a pool whose work is done sleeps instead of spinning;
// a profile accounts for the pool's regions.
#include <time.h>

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
#include "runtime/pool/thread_pool.h"
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

// The pool tells its policy what it saw and runs each region on the threads the policy
// gives. Driven here on a fake clock that only the workers' tiles advance, so that every
// region below is a stall to the policy (the caller waits 20 ms of fake time for a
// worker's tile) however the machine schedules the threads: nothing depends on timing.
struct FakeClock {
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<uint64_t> ns{uint64_t{1} << 40};
  std::atomic<int> caller_reads{0};
  static uint64_t Now(void* p) {
    auto* c = static_cast<FakeClock*>(p);
    if (std::this_thread::get_id() == c->caller) c->caller_reads++;
    return c->ns.load();
  }
};

struct StallRegion {
  FakeClock* clock;
  int base_reads;
  std::atomic<bool> worker_began{false};
};

// One tile per thread. The caller's tile waits until a worker has begun one (so that a
// worker runs a tile while the caller waits); a worker's tile waits until the caller has
// read the clock at the end of its own tiles (its third read in the region: the threads
// count, the start, the end of its own work), then moves the clock on 20 ms.
void RunStalledRegion(const ThreadPool& pool, FakeClock* clock) {
  StallRegion r{clock, clock->caller_reads.load()};
  const ThreadPool::TileTask stall = [](void* p, size_t, size_t) {
    auto* r = static_cast<StallRegion*>(p);
    // A bound only so that a failure ends; never reached when the pool works.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    if (std::this_thread::get_id() == r->clock->caller) {
      while (!r->worker_began.load() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::yield();
      }
      return;
    }
    r->worker_began = true;
    while (r->clock->caller_reads.load() < r->base_reads + 3 &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
    r->clock->ns += 20000000;
  };
  pool.ParallelTiles(static_cast<size_t>(pool.num_threads()), 1, stall, &r);
}

// Each item once, and how many threads took part.
struct CountRegion {
  std::mutex mutex;
  std::vector<std::thread::id> ids;
  std::vector<std::atomic<int>> runs = std::vector<std::atomic<int>>(64);
};
void RunCountRegion(const ThreadPool& pool, CountRegion* r) {
  const ThreadPool::TileTask count = [](void* p, size_t begin, size_t n) {
    auto* r = static_cast<CountRegion*>(p);
    {
      std::lock_guard<std::mutex> lock(r->mutex);
      if (std::find(r->ids.begin(), r->ids.end(), std::this_thread::get_id()) ==
          r->ids.end()) {
        r->ids.push_back(std::this_thread::get_id());
      }
    }
    for (size_t i = begin; i < begin + n; ++i) r->runs[i]++;
  };
  pool.ParallelTiles(r->runs.size(), 1, count, r);
}

ThreadPoolOptions FakeClockOptions(FakeClock* clock) {
  ThreadPoolOptions options;
  options.clock_ns = &FakeClock::Now;
  options.clock_context = clock;
  return options;
}

// Four stalled regions on three threads: the next ones run on two (the third worker takes
// no tile, every item still runs once); four more: two threads' regions stall too, one
// fewer again; when the window ends on the fake clock, all three again.
TEST(ThreadsTest, StalledRegionsLeaveOutOneWorkerAtATime) {
  FakeClock clock;
  auto pool = ThreadPool::Create(3, FakeClockOptions(&clock));
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ((*pool)->ActiveThreads(), 3);
  for (int i = 0; i < 3; ++i) RunStalledRegion(**pool, &clock);
  EXPECT_EQ((*pool)->ActiveThreads(), 3);
  RunStalledRegion(**pool, &clock);
  EXPECT_EQ((*pool)->ActiveThreads(), 2);

  CountRegion two;
  RunCountRegion(**pool, &two);
  EXPECT_LE(two.ids.size(), 2u);
  for (const auto& runs : two.runs) EXPECT_EQ(runs.load(), 1);

  for (int i = 0; i < 4; ++i) RunStalledRegion(**pool, &clock);
  EXPECT_EQ((*pool)->ActiveThreads(), 1);
  CountRegion alone;
  RunCountRegion(**pool, &alone);
  ASSERT_EQ(alone.ids.size(), 1u);
  EXPECT_EQ(alone.ids[0], clock.caller);
  for (const auto& runs : alone.runs) EXPECT_EQ(runs.load(), 1);

  clock.ns += uint64_t{10} * 1000000000;  // far past the window and its retry period
  EXPECT_EQ((*pool)->ActiveThreads(), 3);
  CountRegion all;
  RunCountRegion(**pool, &all);
  for (const auto& runs : all.runs) EXPECT_EQ(runs.load(), 1);
}

// Switched off, the policy is never asked: the same stalls leave every region on all
// threads, and the pool does not even read its clock.
TEST(ThreadsTest, APoolWithoutThePolicyKeepsAllItsThreads) {
  FakeClock clock;
  ThreadPoolOptions options = FakeClockOptions(&clock);
  options.adapt_to_contention = false;
  auto pool = ThreadPool::Create(2, options);
  ASSERT_TRUE(pool.ok());
  for (int i = 0; i < 12; ++i) {
    // Without the clock reads a worker's tile would wait for, run the stall by hand: the
    // caller's tile waits for the worker, the worker's tile for nothing.
    StallRegion r{&clock, -3};
    const ThreadPool::TileTask stall = [](void* p, size_t, size_t) {
      auto* r = static_cast<StallRegion*>(p);
      if (std::this_thread::get_id() != r->clock->caller) {
        r->worker_began = true;
        return;
      }
      while (!r->worker_began.load()) std::this_thread::yield();
    };
    (*pool)->ParallelTiles(2, 1, stall, &r);
  }
  EXPECT_EQ(clock.caller_reads.load(), 0);
  EXPECT_EQ((*pool)->ActiveThreads(), 2);
}

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
