// PoolPolicy as tables of regions on a fake clock: what a quiet machine, a worker that
// loses its core, and a caller that shares its CPU make it decide. No threads, no sleeps.
#include "runtime/pool/pool_policy.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace ember {
namespace {

using State = PoolPolicy::State;
constexpr uint64_t kMs = 1000000;

// What happened in a region, as the pool would report it.
enum class Seen {
  kQuiet,          // the caller ran its units and hardly waited
  kWorkerStall,    // the caller waited 20 ms for a unit a worker began
  kShortWait,      // waited 0.4 ms: under stall_wait_ns
  kSlowUnits,      // waited 20 ms, but its own units took 5 ms each: not a stall
  kSharesCpu,      // run-queue time grew by half the time since the last sample, and a
                   // worker ran on the caller's CPU
  kSharesLittle,   // grew by a tenth
  kSharesForeign,  // grew by half, but no worker ran on the caller's CPU
};

// One row: a region starting at at_ms, lasting 1 ms, what the caller saw in it; the
// threads it must have run on (the policy's answer at its start) and the state after.
struct Row {
  uint64_t at_ms;
  Seen seen;
  int ran_on;
  State after;
  int window_threads = 0;  // checked when after is kFewerThreads
};

class Driver {
 public:
  explicit Driver(int threads, uint64_t caller = 1) : policy_(threads), caller_(caller) {}

  // Runs the rows in order; a failing row names its index.
  void Run(const std::vector<Row>& rows) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& row = rows[i];
      SCOPED_TRACE(testing::Message() << "row " << i << " at " << row.at_ms << " ms");
      const uint64_t start = row.at_ms * kMs;
      EXPECT_EQ(policy_.ThreadsAt(start), row.ran_on);
      Region(start, row.seen);
      const uint64_t end = start + kMs;
      EXPECT_EQ(policy_.StateAt(end), row.after);
      if (row.after == State::kFewerThreads) {
        EXPECT_EQ(policy_.window_threads(), row.window_threads);
      }
    }
  }

  // One region of 1 ms from start_ns on the threads the policy gives.
  void Region(uint64_t start_ns, Seen seen) {
    RegionSeen r;
    r.threads = policy_.ThreadsAt(start_ns);
    r.start_ns = start_ns;
    r.end_ns = start_ns + kMs;
    r.caller_units = 4;
    r.caller_work_ns = r.caller_units * 10000;  // 10 us a unit
    r.caller_wait_ns = 1000;
    r.worker_on_caller_cpu = seen != Seen::kSharesForeign;
    if (seen == Seen::kWorkerStall || seen == Seen::kSlowUnits)
      r.caller_wait_ns = 20 * kMs;
    if (seen == Seen::kShortWait) r.caller_wait_ns = 400000;
    if (seen == Seen::kSlowUnits) r.caller_work_ns = r.caller_units * 5 * kMs;
    if (policy_.WantsRunQueueSample(r.end_ns)) {
      const uint64_t elapsed = r.end_ns - last_sample_ns_;
      if (seen == Seen::kSharesCpu || seen == Seen::kSharesForeign) {
        run_queue_ns_ += elapsed / 2;
      }
      if (seen == Seen::kSharesLittle) run_queue_ns_ += elapsed / 10;
      r.has_run_queue = true;
      r.run_queue_ns = run_queue_ns_;
      r.caller_id = caller_;
      last_sample_ns_ = r.end_ns;
    }
    policy_.Observe(r);
  }

  PoolPolicy& policy() { return policy_; }
  void set_caller(uint64_t caller) { caller_ = caller; }

 private:
  PoolPolicy policy_;
  uint64_t caller_;
  uint64_t run_queue_ns_ = 0;
  uint64_t last_sample_ns_ = 0;
};

TEST(PoolPolicyTest, StartsWithAllThreads) {
  PoolPolicy policy(4);
  EXPECT_EQ(policy.ThreadsAt(0), 4);
  EXPECT_EQ(policy.StateAt(0), State::kAllThreads);
  EXPECT_TRUE(policy.WantsRunQueueSample(0));
}

// A quiet machine: regions every 2 ms for 10 s, a stall now and then (a page fault, a
// daemon waking) but never four within 100 ms of each other: never a window.
TEST(PoolPolicyTest, AQuietMachineNeverLeavesOutAThread) {
  Driver d(2);
  for (uint64_t i = 0; i < 5000; ++i) {
    const uint64_t t = 100 * kMs + i * 2 * kMs;
    // Three stalls in a row every 200 ms, then 200 ms without: the count starts again.
    const bool stall = (i % 100) < 3;
    d.Region(t, stall ? Seen::kWorkerStall : Seen::kQuiet);
    ASSERT_EQ(d.policy().StateAt(t + kMs), State::kAllThreads) << "region " << i;
  }
  EXPECT_EQ(d.policy().window_end_ns(), 0u);
}

TEST(PoolPolicyTest, WaitsThatAreNotStallsCountForNothing) {
  Driver d(2);
  d.Run({
      {100, Seen::kShortWait, 2, State::kAllThreads},
      {110, Seen::kShortWait, 2, State::kAllThreads},
      {120, Seen::kSlowUnits, 2, State::kAllThreads},
      {130, Seen::kSlowUnits, 2, State::kAllThreads},
      {140, Seen::kShortWait, 2, State::kAllThreads},
      {150, Seen::kSharesLittle, 2, State::kAllThreads},
      {160, Seen::kSharesLittle, 2, State::kAllThreads},
      {170, Seen::kSharesLittle, 2, State::kAllThreads},
      {180, Seen::kSharesLittle, 2, State::kAllThreads},
  });
}

TEST(PoolPolicyTest, FourStallsInARowLeaveOutOneThread) {
  Driver d(3);
  d.Run({
      {100, Seen::kWorkerStall, 3, State::kAllThreads},
      {150, Seen::kWorkerStall, 3, State::kAllThreads},
      {200, Seen::kWorkerStall, 3, State::kAllThreads},
      {250, Seen::kWorkerStall, 3, State::kFewerThreads, 2},  // window to 351 ms
      {300, Seen::kQuiet, 2, State::kFewerThreads, 2},
      {350, Seen::kQuiet, 2, State::kRetrying},  // ends at 351: all threads again
      {360, Seen::kQuiet, 3, State::kRetrying},
      {1360, Seen::kQuiet, 3, State::kAllThreads},  // again_ns (1 s) after the window
  });
  EXPECT_EQ(d.policy().window_end_ns(), 351 * kMs);
}

// A gap over stall_gap_ns (100 ms) starts the count again.
TEST(PoolPolicyTest, StallsFarApartAreNotInARow) {
  Driver d(2);
  d.Run({
      {100, Seen::kWorkerStall, 2, State::kAllThreads},
      {150, Seen::kWorkerStall, 2, State::kAllThreads},
      {200, Seen::kWorkerStall, 2, State::kAllThreads},
      {302, Seen::kWorkerStall, 2, State::kAllThreads},  // 101 ms after the last end
      {350, Seen::kWorkerStall, 2, State::kAllThreads},
      {400, Seen::kWorkerStall, 2, State::kAllThreads},
      {450, Seen::kWorkerStall, 2, State::kFewerThreads, 1},  // 4 since 302
  });
}

// Quiet regions between stalls do not break a row; only time does.
TEST(PoolPolicyTest, QuietRegionsBetweenStallsKeepTheRow) {
  Driver d(2);
  d.Run({
      {100, Seen::kWorkerStall, 2, State::kAllThreads},
      {120, Seen::kQuiet, 2, State::kAllThreads},
      {150, Seen::kWorkerStall, 2, State::kAllThreads},
      {170, Seen::kQuiet, 2, State::kAllThreads},
      {200, Seen::kWorkerStall, 2, State::kAllThreads},
      {250, Seen::kWorkerStall, 2, State::kFewerThreads, 1},
  });
}

// A burst of stalls shorter than persist_ns (50 ms) is no window, however many: on a
// quiet VM a kernel thread or the host takes a CPU for a few ms now and then, and one
// thread fewer would cost more than the burst. The row that goes on past 50 ms is.
TEST(PoolPolicyTest, ABurstShorterThanPersistIsNoWindow) {
  Driver d(2);
  d.Run({
      {100, Seen::kWorkerStall, 2, State::kAllThreads},
      {105, Seen::kWorkerStall, 2, State::kAllThreads},
      {110, Seen::kWorkerStall, 2, State::kAllThreads},
      {115, Seen::kWorkerStall, 2, State::kAllThreads},
      {120, Seen::kWorkerStall, 2, State::kAllThreads},
      {140, Seen::kWorkerStall, 2, State::kAllThreads},  // 41 ms since 100
      {148, Seen::kWorkerStall, 2, State::kAllThreads},  // ends 49 ms after 100 began
      {149, Seen::kWorkerStall, 2, State::kFewerThreads, 1},  // 50 ms
  });
}

// The fewer threads stall too (a row again): one fewer, as long again; never below one
// thread.
TEST(PoolPolicyTest, AWindowWhoseThreadsStallShrinks) {
  Driver d(4);
  d.Run({
      {100, Seen::kWorkerStall, 4, State::kAllThreads},
      {120, Seen::kWorkerStall, 4, State::kAllThreads},
      {140, Seen::kWorkerStall, 4, State::kAllThreads},
      {160, Seen::kWorkerStall, 4, State::kFewerThreads, 3},  // to 261
      {170, Seen::kWorkerStall, 3, State::kFewerThreads, 3},
      {190, Seen::kWorkerStall, 3, State::kFewerThreads, 3},
      {210, Seen::kWorkerStall, 3, State::kFewerThreads, 3},
      {230, Seen::kWorkerStall, 3, State::kFewerThreads, 2},  // to 331
      {240, Seen::kQuiet, 2, State::kFewerThreads, 2},
      {250, Seen::kSharesCpu, 2, State::kFewerThreads, 2},
      {270, Seen::kSharesCpu, 2, State::kFewerThreads, 2},
      {290, Seen::kSharesCpu, 2, State::kFewerThreads, 2},
      {310, Seen::kSharesCpu, 2, State::kFewerThreads, 1},  // to 411
      {400, Seen::kQuiet, 1, State::kFewerThreads, 1},
      {410, Seen::kQuiet, 1, State::kRetrying},
      {1412, Seen::kQuiet, 4, State::kAllThreads},
  });
  EXPECT_EQ(d.policy().window_threads(), 1);
}

// Right after a window, a stall or two is no new window: the worker left out wakes late
// for its first tiles, the burst may be over.
TEST(PoolPolicyTest, AStallRightAfterAWindowIsNotARow) {
  Driver d(2);
  d.Run({
      {100, Seen::kWorkerStall, 2, State::kAllThreads},
      {120, Seen::kWorkerStall, 2, State::kAllThreads},
      {140, Seen::kWorkerStall, 2, State::kAllThreads},
      {160, Seen::kWorkerStall, 2, State::kFewerThreads, 1},  // to 261
      {262, Seen::kWorkerStall, 2, State::kRetrying},
      {280, Seen::kWorkerStall, 2, State::kRetrying},
      {300, Seen::kQuiet, 2, State::kRetrying},
  });
}

// Under lasting contention each window starts a row after the last ends, on as many
// threads and twice as long (within again_ns, 1 s), up to max_window_ns (4 s).
TEST(PoolPolicyTest, RetriesUnderLastingContentionGrowLonger) {
  Driver d(2);
  d.Run({
      {100, Seen::kWorkerStall, 2, State::kAllThreads},
      {120, Seen::kWorkerStall, 2, State::kAllThreads},
      {140, Seen::kWorkerStall, 2, State::kAllThreads},
      {160, Seen::kWorkerStall, 2, State::kFewerThreads, 1},  // 100 ms: to 261
  });
  const uint64_t expected_ms[] = {200, 400, 800, 1600, 3200, 4000, 4000};
  uint64_t end_ms = 261;
  for (uint64_t length_ms : expected_ms) {
    const uint64_t row_ms = end_ms + 10;
    d.Run({
        {row_ms, Seen::kWorkerStall, 2, State::kRetrying},
        {row_ms + 20, Seen::kWorkerStall, 2, State::kRetrying},
        {row_ms + 40, Seen::kWorkerStall, 2, State::kRetrying},
        {row_ms + 60, Seen::kWorkerStall, 2, State::kFewerThreads, 1},
    });
    EXPECT_EQ(d.policy().window_end_ns(), (row_ms + 61 + length_ms) * kMs);
    end_ms = row_ms + 61 + length_ms;
  }
  // Quiet for over again_ns: back to all threads, and the next window is short.
  d.Run({
      {end_ms + 10, Seen::kQuiet, 2, State::kRetrying},
      {end_ms + 1200, Seen::kQuiet, 2, State::kAllThreads},
      {end_ms + 2000, Seen::kWorkerStall, 2, State::kAllThreads},
      {end_ms + 2020, Seen::kWorkerStall, 2, State::kAllThreads},
      {end_ms + 2040, Seen::kWorkerStall, 2, State::kAllThreads},
      {end_ms + 2060, Seen::kWorkerStall, 2, State::kFewerThreads, 1},
  });
  EXPECT_EQ(d.policy().window_end_ns(), (end_ms + 2061 + 100) * kMs);
}

// A window soon after the last keeps its thread count, not one fewer than all.
TEST(PoolPolicyTest, ARetryResumesTheLastCount) {
  Driver d(4);
  d.Run({
      {100, Seen::kWorkerStall, 4, State::kAllThreads},
      {120, Seen::kWorkerStall, 4, State::kAllThreads},
      {140, Seen::kWorkerStall, 4, State::kAllThreads},
      {160, Seen::kWorkerStall, 4, State::kFewerThreads, 3},  // to 261
      {170, Seen::kWorkerStall, 3, State::kFewerThreads, 3},
      {190, Seen::kWorkerStall, 3, State::kFewerThreads, 3},
      {210, Seen::kWorkerStall, 3, State::kFewerThreads, 3},
      {230, Seen::kWorkerStall, 3, State::kFewerThreads, 2},  // to 331
      {340, Seen::kWorkerStall, 4, State::kRetrying},
      {360, Seen::kWorkerStall, 4, State::kRetrying},
      {380, Seen::kWorkerStall, 4, State::kRetrying},
      {400, Seen::kWorkerStall, 4, State::kFewerThreads, 2},  // 2 threads again
  });
  EXPECT_EQ(d.policy().window_end_ns(), (401 + 200) * kMs);  // within 1 s: twice as long
}

// The run-queue sign: the caller waited for a CPU for over a quarter of the time since
// the last sample, while a worker ran on its CPU. Samples are at least sample_ns (5 ms)
// apart; the first only records.
TEST(PoolPolicyTest, ACallerThatSharesItsCpuStalls) {
  Driver d(2);
  d.Run({
      {100, Seen::kSharesCpu, 2, State::kAllThreads},  // first sample: nothing to compare
      {120, Seen::kSharesCpu, 2, State::kAllThreads},
      {140, Seen::kSharesCpu, 2, State::kAllThreads},
      {160, Seen::kSharesCpu, 2, State::kAllThreads},
      {180, Seen::kSharesCpu, 2, State::kFewerThreads, 1},
  });
}

// The caller waited as long for its CPU, but no worker ran there: another process took
// it, and the workers on other CPUs took the caller's units. No stall.
TEST(PoolPolicyTest, AForeignThreadOnTheCallersCpuIsNoStall) {
  Driver d(2);
  for (uint64_t i = 0; i < 100; ++i) {
    d.Region((100 + 10 * i) * kMs, Seen::kSharesForeign);
    ASSERT_EQ(d.policy().StateAt((101 + 10 * i) * kMs), State::kAllThreads) << i;
  }
}

// A worker seen on the caller's CPU in any region since the last sample counts for it.
TEST(PoolPolicyTest, AWorkerOnTheCallersCpuCountsUntilTheNextSample) {
  PoolPolicyConfig config;
  config.stalls_to_act = 1;
  config.persist_ns = 0;
  PoolPolicy policy(2, config);
  RegionSeen r;
  r.threads = 2;
  r.caller_id = 7;
  r.worker_on_caller_cpu = false;
  const auto region = [&](uint64_t start_ms, bool on_cpu, bool sample) {
    r.start_ns = start_ms * kMs;
    r.end_ns = r.start_ns + kMs;
    r.worker_on_caller_cpu = on_cpu;
    r.has_run_queue = sample;
    if (sample) r.run_queue_ns += 5 * kMs;  // half of the 10 ms between samples
    policy.Observe(r);
  };
  region(100, false, true);  // the first sample
  region(105, true, false);  // a worker on the caller's CPU, no sample
  region(106, false, false);
  EXPECT_EQ(policy.StateAt(107 * kMs), State::kAllThreads);
  region(109, false, true);  // the sample: 5 ms of 10 waiting, a worker was there
  EXPECT_EQ(policy.StateAt(110 * kMs), State::kFewerThreads);
}

TEST(PoolPolicyTest, RunQueueSamplesAreSpacedAndOfOneThread) {
  PoolPolicy policy(2);
  RegionSeen r;
  r.threads = 2;
  r.start_ns = 100 * kMs;
  r.end_ns = 101 * kMs;
  r.has_run_queue = true;
  r.caller_id = 7;
  r.run_queue_ns = 0;
  policy.Observe(r);
  EXPECT_FALSE(policy.WantsRunQueueSample(105 * kMs));  // 4 ms later
  EXPECT_TRUE(policy.WantsRunQueueSample(106 * kMs));
  // Another thread's counter is not comparable: however much it says, no stall.
  for (int i = 0; i < 8; ++i) {
    r.start_ns = (110 + 10 * i) * kMs;
    r.end_ns = r.start_ns + kMs;
    r.caller_id = 8 + i;
    r.run_queue_ns += 1000 * kMs;
    policy.Observe(r);
  }
  EXPECT_EQ(policy.StateAt(r.end_ns), State::kAllThreads);
}

TEST(PoolPolicyTest, ConstantsComeFromTheConfig) {
  PoolPolicyConfig config;
  config.stalls_to_act = 1;
  config.persist_ns = 0;
  config.window_ns = 50 * kMs;
  PoolPolicy policy(2, config);
  RegionSeen r;
  r.threads = 2;
  r.start_ns = 100 * kMs;
  r.end_ns = 101 * kMs;
  r.caller_units = 1;
  r.caller_wait_ns = 20 * kMs;
  policy.Observe(r);
  EXPECT_EQ(policy.StateAt(r.end_ns), State::kFewerThreads);
  EXPECT_EQ(policy.window_end_ns(), 151 * kMs);
}

}  // namespace
}  // namespace ember
