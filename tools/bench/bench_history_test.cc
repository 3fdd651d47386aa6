// The history file: lines appended read back as they were written; a line cut short by a
// failed write (a file-size limit makes write() stop halfway: fault injection through the
// real code path) leaves every earlier line intact, and the next append starts a fresh
// line; writers killed with SIGKILL at random moments never damage lines already there;
// concurrent writers never interleave their lines; a history never grows past what
// readers accept (bench_records.h), and a full one fails the bench before it starts.
#include "tools/bench/bench_history.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "testing/testing.h"
#include "tools/bench/bench_records.h"
#include "tools/util/files.h"

namespace ember::tools {
namespace {

// A result line padded with a letter that depends on its id, so a line glued from two
// writes or cut in the middle is recognised:
// {"test":"pp8","samples_ts":[ID],"pad":"ccc"}.
std::string Line(int id, size_t pad_bytes) {
  const std::string pad(pad_bytes, static_cast<char>('a' + id % 26));
  return "{\"test\":\"pp8\",\"samples_ts\":[" + std::to_string(id) + "],\"pad\":\"" +
         pad + "\"}\n";
}

std::string ReadAll(const std::string& path) {
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(ReadFile(path, &bytes).ok());
  return std::string(bytes.begin(), bytes.end());
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  for (size_t nl; (nl = text.find('\n', begin)) != std::string::npos; begin = nl + 1) {
    lines.push_back(text.substr(begin, nl - begin + 1));
  }
  if (begin < text.size()) lines.push_back(text.substr(begin));  // no newline: cut
  return lines;
}

// Every line is one of Line(id, pad) whole, or (cut short) a prefix of one without its
// newline. Returns the ids of the whole lines, in order.
std::vector<int> CheckLines(const std::string& text, size_t pad, int* cut_lines) {
  std::vector<int> ids;
  *cut_lines = 0;
  for (const std::string& line : SplitLines(text)) {
    int id = -1;
    if (sscanf(line.c_str(), "{\"test\":\"pp8\",\"samples_ts\":[%d]", &id) == 1 &&
        line == Line(id, pad)) {
      ids.push_back(id);
      continue;
    }
    ++*cut_lines;
    const std::string body = line.back() == '\n' ? line.substr(0, line.size() - 1) : line;
    const bool prefix = id >= 0 && Line(id, pad).compare(0, body.size(), body) == 0 &&
                        body.size() < Line(id, pad).size() - 1;
    EXPECT_TRUE(prefix) << "a line that is no prefix of a written one: "
                        << line.substr(0, 120);
  }
  return ids;
}

TEST(BenchHistoryTest, RoundTrip) {
  testing::ScratchDir dir("ember_history_");
  const std::string path = dir.path() + "/history.jsonl";
  ASSERT_TRUE(AppendLines(path, Line(1, 10)).ok());
  ASSERT_TRUE(AppendLines(path, Line(2, 10) + Line(3, 10)).ok());
  EXPECT_EQ(ReadAll(path), Line(1, 10) + Line(2, 10) + Line(3, 10));
  std::vector<BenchRecord> records;
  ASSERT_TRUE(ReadBenchRecords(path, &records).ok());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_DOUBLE_EQ(records[2].speed.mean, 3);
  EXPECT_EQ(records[2].where, path + ":3");
  // A line must come whole; nothing is written otherwise.
  EXPECT_FALSE(AppendLines(path, "{\"test\":1}").ok());
  EXPECT_TRUE(AppendLines(path, "").ok());
  EXPECT_EQ(ReadAll(path), Line(1, 10) + Line(2, 10) + Line(3, 10));
  const Status bad = AppendLines(dir.path() + "/missing/history.jsonl", Line(4, 1));
  EXPECT_EQ(bad.code(), StatusCode::kIoError);
  EXPECT_NE(std::string(bad.message()).find("cannot open"), std::string::npos);
}

TEST(BenchHistoryTest, NeverGrowsPastWhatReadersAccept) {
  testing::ScratchDir dir("ember_history_");
  const std::string path = dir.path() + "/history.jsonl";
  // A line longer than a reader takes: refused, nothing written.
  const Status long_line = AppendLines(path, Line(1, kMaxBenchLineBytes));
  EXPECT_EQ(long_line.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(long_line.message()).find("more than 1048576"), std::string::npos)
      << long_line.message();
  EXPECT_NE(access(path.c_str(), F_OK), 0);  // not even created
  ASSERT_TRUE(AppendLines(path, "").ok());
  // 60 bytes short of the limit (a sparse file: its content does not matter here).
  ASSERT_EQ(truncate(path.c_str(), kMaxBenchFileBytes - 60), 0);
  const Status full = AppendLines(path, Line(2, 100));
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(full.message())
                .find("would take it past 67108864 (64 MiB), the most a bench file may "
                      "hold; start a new history file"),
            std::string::npos)
      << full.message();
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), kMaxBenchFileBytes - 60);
  // 60 bytes would fit but for the newline that first ends the last line (here a zero
  // byte); 59 fit, up to the limit.
  EXPECT_EQ(AppendLines(path, Line(3, 60 - Line(3, 0).size())).code(),
            StatusCode::kResourceExhausted);
  const std::string fits = Line(3, 60 - 1 - Line(3, 0).size());
  ASSERT_TRUE(AppendLines(path, fits).ok());
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), kMaxBenchFileBytes);
  // Full: a bench checking its history before it starts is told so.
  const Status probe = AppendLines(path, "");
  EXPECT_EQ(probe.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(probe.message()).find("start a new history file"),
            std::string::npos)
      << probe.message();
}

// A child process appends `line` with the file size limited to `limit` bytes: write()
// stops at the limit (SIGXFSZ ignored), as a full disk or a crash mid-write would leave
// it. Returns the child's exit status (1: AppendLines failed, as it must).
int AppendWithSizeLimit(const std::string& path, const std::string& line, rlim_t limit) {
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit r = {limit, limit};
    setrlimit(RLIMIT_FSIZE, &r);
    _exit(AppendLines(path, line).ok() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(BenchHistoryTest, AWriteCutShortKeepsEarlierLines) {
  testing::ScratchDir dir("ember_history_");
  const std::string path = dir.path() + "/history.jsonl";
  const std::string before = Line(1, 100) + Line(2, 100);
  ASSERT_TRUE(AppendLines(path, before).ok());
  // Half of line 3 fits under the limit.
  const size_t limit = before.size() + Line(3, 100).size() / 2;
  EXPECT_EQ(AppendWithSizeLimit(path, Line(3, 100), limit), 1);
  const std::string cut = ReadAll(path);
  ASSERT_EQ(cut.size(), limit);
  EXPECT_EQ(cut.substr(0, before.size()), before);  // earlier lines untouched
  // A reader names the cut line.
  std::vector<BenchRecord> records;
  const Status s = ReadBenchRecords(path, &records);
  EXPECT_NE(std::string(s.message()).find(":3: not valid JSON: it ends early"),
            std::string::npos)
      << s.message();
  // The next append starts on a line of its own: line 3 stays broken, 4 is whole.
  ASSERT_TRUE(AppendLines(path, Line(4, 100)).ok());
  int cut_lines = 0;
  EXPECT_EQ(CheckLines(ReadAll(path), 100, &cut_lines), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(cut_lines, 1);
  EXPECT_EQ(ReadAll(path), cut + "\n" + Line(4, 100));
}

TEST(BenchHistoryTest, KilledWritersNeverDamageEarlierLines) {
  testing::ScratchDir dir("ember_history_");
  const std::string path = dir.path() + "/history.jsonl";
  // 256 KiB lines. (On Linux a SIGKILL seems not to cut a write() to a regular file
  // short; the fault injection above makes the cut this cannot.)
  constexpr size_t kPad = 1 << 18;
  std::mt19937 rng(5);
  std::string kept;  // the file's whole lines after the previous round
  int next_id = 0;
  for (int round = 0; round < 12; ++round) {
    const int first = next_id;
    next_id += 1000;
    const pid_t pid = fork();
    if (pid == 0) {
      for (int id = first;; ++id) {
        if (!AppendLines(path, Line(id, kPad)).ok()) _exit(1);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(2000 + rng() % 20000));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (access(path.c_str(), F_OK) != 0) continue;  // killed before its first line
    const std::string text = ReadAll(path);
    // Everything there before this writer started is there still, byte for byte.
    ASSERT_EQ(text.compare(0, kept.size(), kept), 0) << "round " << round;
    int cut_lines = 0;
    const std::vector<int> ids = CheckLines(text, kPad, &cut_lines);
    // Whole lines in increasing order per writer; at most one cut line per killed writer.
    for (size_t i = 1; i < ids.size(); ++i) ASSERT_LT(ids[i - 1], ids[i]);
    ASSERT_LE(cut_lines, round + 1);
    kept = text.substr(0, text.rfind('\n') + 1);
  }
  // A final append after all that is whole and readable.
  ASSERT_TRUE(AppendLines(path, Line(next_id, 10)).ok());
  const std::vector<std::string> lines = SplitLines(ReadAll(path));
  EXPECT_EQ(lines.back(), Line(next_id, 10));
}

TEST(BenchHistoryTest, ConcurrentWritersDoNotInterleave) {
  testing::ScratchDir dir("ember_history_");
  const std::string path = dir.path() + "/history.jsonl";
  constexpr size_t kPad = 1 << 16;
  std::vector<pid_t> children;
  for (int w = 0; w < 3; ++w) {
    const pid_t pid = fork();
    if (pid == 0) {
      for (int i = 0; i < 40; ++i) {
        if (!AppendLines(path, Line(w * 1000 + i, kPad)).ok()) _exit(1);
      }
      _exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  int cut_lines = 0;
  const std::vector<int> ids = CheckLines(ReadAll(path), kPad, &cut_lines);
  EXPECT_EQ(cut_lines, 0);
  EXPECT_EQ(ids.size(), 120u);
}

}  // namespace
}  // namespace ember::tools
