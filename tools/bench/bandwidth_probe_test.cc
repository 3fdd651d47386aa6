// The bandwidth probe: every read pattern's sum against a scalar loop on every Highway
// target (odd lengths, spans starting off the vector alignment), the probe's fields and
// its errors, and the last-level cache read from a sysfs-like tree written here.
#include "tools/bench/bandwidth_probe.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/tests/hwy_gtest.h"
#include "tools/bench/host_info.h"
#include "tools/bench/read_patterns.h"

namespace ember::tools {
namespace {

// Every pattern's sum against a scalar loop, on the target dispatch picks.
void ExpectEveryPatternSumsEveryWord() {
  // Words that overflow when summed (mod 2^64 on both sides).
  std::vector<uint64_t> words(40000 + 7);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (uint64_t& w : words) w = (x = x * 6364136223846793005ull + 1442695040888963407ull);
  // Lengths around the vector, 4-vector and 1 KiB block steps; starts off alignment.
  for (size_t offset : {0, 1, 3}) {
    for (size_t n : {0, 1, 7, 31, 32, 33, 127, 128, 129, 511, 4095, 4096, 4097, 40000}) {
      const uint64_t* span = words.data() + offset;
      const uint64_t want = std::accumulate(span, span + n, uint64_t{0});
      for (ReadPattern pattern : kReadPatterns) {
        EXPECT_EQ(SumWords(pattern, span, n), want)
            << ReadPatternName(pattern) << ", n " << n << ", offset " << offset;
      }
    }
  }
}

class ReadPatternsTest : public hwy::TestWithParamTarget {};
HWY_TARGET_INSTANTIATE_TEST_SUITE_P(ReadPatternsTest);
// A build whose only target is its baseline (armhf) may list none here; the plain test
// below runs the dispatched target there.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ReadPatternsTest);

TEST_P(ReadPatternsTest, EveryPatternSumsEveryWord) { ExpectEveryPatternSumsEveryWord(); }

TEST(ReadPatterns, EveryPatternSumsEveryWordOnTheDispatchedTarget) {
  ExpectEveryPatternSumsEveryWord();
}

TEST(BandwidthProbe, ReadsBufferAndMemory) {
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  std::vector<uint64_t> memory(uint64_t{1} << 17, 3);  // 1 MiB
  RooflineProbe probe;
  ASSERT_TRUE(ProbeRoofline(uint64_t{4} << 20, memory.data(), memory.size() * 8, "file",
                            pool->get(), 2, &probe)
                  .ok());
  EXPECT_GT(probe.buffer_gbps, 0);
  EXPECT_GT(probe.memory_gbps, 0);
  EXPECT_EQ(probe.buffer_bytes, uint64_t{4} << 20);
  // At least min_passes per pattern and memory.
  EXPECT_GE(probe.passes, 2 * 2 * static_cast<int>(std::size(kReadPatterns)));
  const std::string memory_won =
      probe.memory_gbps > probe.buffer_gbps ? "file, " : "buffer, ";
  EXPECT_EQ(probe.best.rfind(memory_won, 0), 0u) << probe.best;

  // Merge keeps the best of each and names the better read.
  RooflineProbe other;
  other.memory_gbps = probe.gbps() * 2;
  other.best = "file, 4 streams";
  other.passes = 1;
  RooflineProbe merged = probe;
  merged.Merge(other);
  EXPECT_EQ(merged.best, "file, 4 streams");
  EXPECT_EQ(merged.gbps(), other.memory_gbps);
  EXPECT_EQ(merged.buffer_gbps, probe.buffer_gbps);
  EXPECT_EQ(merged.passes, probe.passes + 1);
}

TEST(BandwidthProbe, NoMemoryAndOneThread) {
  RooflineProbe probe;
  ASSERT_TRUE(
      ProbeRoofline(uint64_t{1} << 20, nullptr, 0, "file", nullptr, 1, &probe).ok());
  EXPECT_GT(probe.buffer_gbps, 0);
  EXPECT_EQ(probe.memory_gbps, 0);
  EXPECT_EQ(probe.best.rfind("buffer, ", 0), 0u) << probe.best;
}

TEST(BandwidthProbe, Errors) {
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  RooflineProbe probe;
  // Under 64 words a thread.
  EXPECT_FALSE(ProbeRoofline(1000, nullptr, 0, "file", pool->get(), 1, &probe).ok());
  std::vector<uint64_t> memory(4096, 1);
  const char* misaligned = reinterpret_cast<const char*>(memory.data()) + 4;
  EXPECT_FALSE(
      ProbeRoofline(uint64_t{1} << 20, misaligned, 8192, "file", pool->get(), 1, &probe)
          .ok());
}

TEST(BandwidthProbe, DefaultBufferOutgrowsTheCache) {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  ASSERT_GT(pages, 0);
  const uint64_t quarter = static_cast<uint64_t>(pages) * page_bytes / 4;
  const uint64_t mib = uint64_t{1} << 20;
  EXPECT_EQ(DefaultProbeBytes(0), std::min(256 * mib, std::max(quarter, 16 * mib)));
  EXPECT_EQ(DefaultProbeBytes(32 * mib), DefaultProbeBytes(0));  // 4 x 32 < 256
  // A server's 105 MiB L3: four times it, unless that is more than a quarter of the RAM.
  EXPECT_EQ(DefaultProbeBytes(105 * mib),
            std::min(420 * mib, std::max(quarter, 16 * mib)));
}

TEST(BandwidthProbe, NotesABufferTooCloseToTheCache) {
  const uint64_t mib = uint64_t{1} << 20;
  EXPECT_EQ(ProbeSizeNote(256 * mib, 32 * mib), "");
  EXPECT_EQ(ProbeSizeNote(16 * mib, 0), "");  // unknown cache
  EXPECT_EQ(ProbeSizeNote(64 * mib, 32 * mib),
            "the probe's 64 MiB are under 4 times the 32 MiB last-level cache: its rate "
            "may be partly the cache's, and the roofline % too low");
}

// A sysfs cache directory: index<i>/{level,type,size}.
class CacheDir {
 public:
  CacheDir() {
    char templ[] = "/tmp/ember_cache_XXXXXX";
    root_ = mkdtemp(templ);
  }
  ~CacheDir() { system(("rm -rf " + root_).c_str()); }
  void Add(int index, const char* level, const char* type, const char* size) {
    const std::string dir = root_ + "/index" + std::to_string(index);
    mkdir(dir.c_str(), 0700);
    for (const auto& [name, value] :
         {std::pair{"level", level}, std::pair{"type", type}, std::pair{"size", size}}) {
      FILE* f = fopen((dir + "/" + name).c_str(), "w");
      fprintf(f, "%s\n", value);
      fclose(f);
    }
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

TEST(HostInfo, LastLevelCache) {
  {
    CacheDir dir;
    dir.Add(0, "1", "Data", "48K");
    dir.Add(1, "1", "Instruction", "32K");
    dir.Add(2, "2", "Unified", "2048K");
    dir.Add(3, "3", "Unified", "105M");
    EXPECT_EQ(LastLevelCacheBytes(dir.root()), uint64_t{105} << 20);
  }
  {
    // No L3 (a Cortex-A53 board): the L2; a size in bytes.
    CacheDir dir;
    dir.Add(0, "1", "Data", "32K");
    dir.Add(1, "1", "Instruction", "32K");
    dir.Add(2, "2", "Unified", "524288");
    EXPECT_EQ(LastLevelCacheBytes(dir.root()), uint64_t{512} << 10);
  }
  {
    CacheDir dir;  // empty (an emulator, a container without sysfs): unknown
    EXPECT_EQ(LastLevelCacheBytes(dir.root()), 0u);
  }
}

}  // namespace
}  // namespace ember::tools
