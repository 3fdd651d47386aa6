// AtomicFile: an output is replaced whole or not at all. A writer that fails midway, or
// a process killed by SIGINT/SIGTERM midway, leaves the old file intact and no temporary
// file behind; one killed by SIGKILL leaves none with an unnamed temporary file, and one
// the next writer removes with a named one; devices are written in place; outputs that
// are inputs are refused. Every test runs with unnamed (O_TMPFILE) and named temporary
// files.
#include "runtime/model/atomic_file.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/testing.h"

namespace ember {
namespace {

// The parameter: whether unnamed temporary files may be used.
class AtomicFileTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    SetUnnamedTempFilesForTesting(GetParam());
    AtomicFile probe;
    ASSERT_TRUE(probe.Open(dir_ + "/probe").ok());
    ASSERT_TRUE(GetParam() || !probe.unnamed());
#ifdef __linux__
    // Linux file systems that lack O_TMPFILE exist, but not among those tests run on.
    EXPECT_EQ(probe.unnamed(), GetParam()) << "no O_TMPFILE in " << dir_;
#else
    if (GetParam()) GTEST_SKIP() << "no unnamed temporary files here";
#endif
  }
  void TearDown() override { SetUnnamedTempFilesForTesting(true); }

  std::vector<std::string> Entries() const { return scratch_.Entries(); }

  static void Write(const std::string& path, const std::string& text) {
    FILE* f = fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path;
    fwrite(text.data(), 1, text.size(), f);
    fclose(f);
  }
  static std::string Read(const std::string& path) {
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) return "<missing>";
    std::string text;
    char buf[256];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
    fclose(f);
    return text;
  }

  testing::ScratchDir scratch_{"ember_atomic_"};
  const std::string dir_ = scratch_.path();
  const std::string out_ = dir_ + "/out.bin";
};

// A writer that gets some bytes out, then fails (a full disk, a bad value found late).
Status FailMidway(FILE* f) {
  fputs("partial output", f);
  fflush(f);
  return IoError("simulated failure after 14 bytes");
}

TEST_P(AtomicFileTest, ReplacesTheOutputOnSuccessKeepingItsPermissions) {
  Write(out_, "old contents");
  ASSERT_EQ(chmod(out_.c_str(), 0640), 0);
  const std::string text = "new contents, longer than the old";
  const Status s = WriteFileAtomic(out_, text.data(), text.size());
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Read(out_), text);
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.bin"});
  struct stat st;
  ASSERT_EQ(stat(out_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_P(AtomicFileTest, NewFileGetsTheUmasksPermissions) {
  const mode_t old_umask = umask(022);
  const Status s = WriteFileAtomic(out_, "x", 1);
  umask(old_umask);
  ASSERT_TRUE(s.ok()) << s.message();
  struct stat st;
  ASSERT_EQ(stat(out_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
}

// The bytes reach the file in whole 2 MiB pieces at 2 MiB offsets (so that the page
// cache can hold a fresh model in huge folios), however the writer cuts them.
TEST_P(AtomicFileTest, BytesReachTheFileInTwoMebibytePieces) {
  constexpr size_t kPiece = size_t{2} << 20;
  AtomicFile file;
  ASSERT_TRUE(file.Open(out_).ok());
  const std::vector<char> bytes(3 * kPiece + 12345, 'e');
  const auto written = [&] {
    struct stat st;
    return fstat(fileno(file.file()), &st) == 0 ? static_cast<size_t>(st.st_size)
                                                : ~size_t{0};
  };
  size_t sent = 0;
  const auto send = [&](size_t n) {
    ASSERT_EQ(fwrite(bytes.data() + sent, 1, n, file.file()), n);
    sent += n;
  };
  send(4096);
  send(kPiece / 2);
  EXPECT_EQ(written(), 0u);  // stdio's own buffer would have written 4 KiB pieces
  send(kPiece / 2);
  EXPECT_EQ(written(), kPiece);
  send(2 * kPiece + 12345 - 4096);  // one call: its whole pieces go out directly
  EXPECT_EQ(written(), 3 * kPiece);
  ASSERT_TRUE(file.Commit().ok());
  EXPECT_EQ(Read(out_), std::string(bytes.begin(), bytes.end()));
}

TEST_P(AtomicFileTest, AFailedWriteKeepsTheOldFileAndLeavesNoTemporaryFile) {
  Write(out_, "old contents");
  const Status s = WriteFileAtomic(out_, &FailMidway);
  EXPECT_FALSE(s.ok());
  EXPECT_STREQ(s.message(), "simulated failure after 14 bytes");
  EXPECT_EQ(Read(out_), "old contents");
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.bin"});
}

TEST_P(AtomicFileTest, AFailedWriteOfANewFileLeavesNothing) {
  EXPECT_FALSE(WriteFileAtomic(out_, &FailMidway).ok());
  EXPECT_EQ(Entries(), std::vector<std::string>{});
  {
    AtomicFile file;  // opened, written, never committed
    ASSERT_TRUE(file.Open(out_).ok());
    fputs("abandoned", file.file());
    EXPECT_EQ(Entries().size(), GetParam() ? 0u : 1u);  // the named temporary file
  }
  EXPECT_EQ(Entries(), std::vector<std::string>{});
}

TEST_P(AtomicFileTest, WriteErrorsAreReported) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  const std::string text(100, 'x');
  const Status s = WriteFileAtomic("/dev/full", text.data(), text.size());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("cannot write '/dev/full'"), std::string::npos)
      << s.message();
}

TEST_P(AtomicFileTest, DevicesAreWrittenInPlaceNotReplaced) {
  // Renaming a file over /dev/null (as root) would break the system.
  struct stat before, after;
  ASSERT_EQ(stat("/dev/null", &before), 0);
  const Status s = WriteFileAtomic("/dev/null", "x", 1);
  EXPECT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_ino, before.st_ino);
}

TEST_P(AtomicFileTest, ASymbolicLinkStaysAndItsTargetIsReplaced) {
  Write(dir_ + "/target.bin", "old");
  ASSERT_EQ(symlink("target.bin", out_.c_str()), 0);
  const Status s = WriteFileAtomic(out_, "new", 3);
  ASSERT_TRUE(s.ok()) << s.message();
  struct stat st;
  ASSERT_EQ(lstat(out_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Read(dir_ + "/target.bin"), "new");
  EXPECT_EQ(Entries(), (std::vector<std::string>{"out.bin", "target.bin"}));
}

TEST_P(AtomicFileTest, UnwritablePathsAreClearErrors) {
  Status s = WriteFileAtomic(dir_, "x", 1);
  EXPECT_EQ(std::string(s.message()), "cannot create '" + dir_ + "': Is a directory");
  s = WriteFileAtomic(dir_ + "/missing/out.bin", "x", 1);
  EXPECT_NE(std::string(s.message()).find("cannot create '" + dir_ + "/missing/out.bin'"),
            std::string::npos)
      << s.message();
  ASSERT_EQ(symlink("nowhere", out_.c_str()), 0);
  s = WriteFileAtomic(out_, "x", 1);
  EXPECT_NE(std::string(s.message()).find("symbolic link to a missing file"),
            std::string::npos)
      << s.message();
}

// The child starts writing, then is killed midway by a signal: raised by itself (Ctrl-C
// reaching the process while it writes) or sent by the parent while the child waits.
TEST_P(AtomicFileTest, AnInterruptedWriteKeepsTheOldFileAndLeavesNoTemporaryFile) {
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    for (const bool from_parent : {false, true}) {
      SCOPED_TRACE(std::string(strsignal(sig)) + (from_parent ? " from the parent" : ""));
      Write(out_, "old contents");
      int ready[2];
      ASSERT_EQ(pipe(ready), 0);
      const pid_t child = fork();
      ASSERT_GE(child, 0);
      if (child == 0) {
        close(ready[0]);
        WriteFileAtomic(out_, [&](FILE* f) {
          fputs("partial output", f);
          fflush(f);
          if (from_parent) {
            const char c = 'w';
            if (write(ready[1], &c, 1) != 1) _exit(3);
            for (;;) pause();
          }
          raise(sig);
          return Status::Ok();  // not reached: the signal ends the process
        });
        _exit(2);
      }
      close(ready[1]);
      if (from_parent) {
        char c;
        ASSERT_EQ(read(ready[0], &c, 1), 1);  // the child is midway
        kill(child, sig);
      }
      close(ready[0]);
      int status = 0;
      ASSERT_EQ(waitpid(child, &status, 0), child);
      ASSERT_TRUE(WIFSIGNALED(status)) << "child exit status " << WEXITSTATUS(status);
      EXPECT_EQ(WTERMSIG(status), sig);  // ended by the signal, as it would have been
      EXPECT_EQ(Read(out_), "old contents");
      EXPECT_EQ(Entries(), std::vector<std::string>{"out.bin"});
    }
  }
}

volatile sig_atomic_t g_custom_handler_calls = 0;
void CustomHandler(int) { g_custom_handler_calls = g_custom_handler_calls + 1; }

TEST_P(AtomicFileTest, SignalDispositionsAreRestoredAndIgnoredSignalsStayIgnored) {
  struct sigaction custom = {}, ignore = {}, old_int, old_hup, now;
  custom.sa_handler = &CustomHandler;
  sigemptyset(&custom.sa_mask);
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &custom, &old_int), 0);
  ASSERT_EQ(sigaction(SIGHUP, &ignore, &old_hup), 0);
  const Status s = WriteFileAtomic(out_, [&](FILE* f) {
    sigaction(SIGINT, nullptr, &now);
    if (GetParam()) {
      EXPECT_EQ(now.sa_handler, &CustomHandler);  // nothing to remove, nothing to guard
    } else {
      EXPECT_NE(now.sa_handler, &CustomHandler);  // the temporary file's guard
    }
    sigaction(SIGHUP, nullptr, &now);
    EXPECT_EQ(now.sa_handler, SIG_IGN);  // nohup: a hang-up cannot interrupt it
    fputs("x", f);
    return Status::Ok();
  });
  EXPECT_TRUE(s.ok()) << s.message();
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, &CustomHandler);
  sigaction(SIGHUP, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_IGN);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGHUP, &old_hup, nullptr);
}

TEST_P(AtomicFileTest, AnOutputThatIsAnInputIsRefusedThroughAnyName) {
  const std::string input = dir_ + "/input.bin";
  Write(input, "input");
  Write(dir_ + "/other.bin", "other");
  ASSERT_EQ(symlink("input.bin", (dir_ + "/symlink.bin").c_str()), 0);
  ASSERT_EQ(link(input.c_str(), (dir_ + "/hardlink.bin").c_str()), 0);
  Status s = CheckNotSameFile(input, input, "checkpoint");
  EXPECT_EQ(std::string(s.message()),
            "refusing to write '" + input + "': it is the checkpoint '" + input + "'");
  for (const char* name : {"symlink.bin", "hardlink.bin"}) {
    s = CheckNotSameFile(dir_ + "/" + name, input, "tokenizer");
    EXPECT_EQ(std::string(s.message()), "refusing to write '" + dir_ + "/" + name +
                                            "': it is the tokenizer '" + input +
                                            "' (the same file under another name)");
  }
  EXPECT_TRUE(CheckNotSameFile(dir_ + "/other.bin", input, "input").ok());
  EXPECT_TRUE(CheckNotSameFile(dir_ + "/new.bin", input, "input").ok());
  EXPECT_EQ(Read(input), "input");
}

// The child starts writing and waits; the parent kills it with SIGKILL, which no
// handler sees. An unnamed temporary file vanishes with the process; a named one stays
// until the next writer of the output finds its process gone and removes it.
TEST_P(AtomicFileTest, AWriterKilledMidwayLeavesNothingOnceTheNextWriteIsDone) {
  Write(out_, "old contents");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    WriteFileAtomic(out_, [&](FILE* f) {
      fputs("partial output", f);
      fflush(f);
      const char c = 'w';
      if (write(ready[1], &c, 1) != 1) _exit(3);
      for (;;) pause();
      return Status::Ok();
    });
    _exit(2);
  }
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);  // the child is midway
  close(ready[0]);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_EQ(Read(out_), "old contents");
  std::vector<std::string> entries = Entries();
  if (GetParam()) {
    EXPECT_EQ(entries, std::vector<std::string>{"out.bin"});
  } else {
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[1].rfind("out.bin.tmp-" + std::to_string(child) + "-", 0), 0u)
        << entries[1];
  }
  const Status s = WriteFileAtomic(out_, "new", 3);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Read(out_), "new");
  EXPECT_EQ(Entries(), std::vector<std::string>{"out.bin"});
}

// Only the output's own temporary files (the exact pattern) of processes that are gone
// are removed: not a live writer's, not another output's, not other names.
TEST_P(AtomicFileTest, OnlyTheOutputsTemporaryFilesOfDeadWritersAreRemoved) {
  const pid_t dead = fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) _exit(0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);  // reaped: its id names no process
  const pid_t alive = fork();
  ASSERT_GE(alive, 0);
  if (alive == 0) {
    for (;;) pause();
  }
  const std::string d = std::to_string(dead), a = std::to_string(alive);
  const std::vector<std::string> kept = {
      "other.bin.tmp-" + d + "-Ab3xYz",  // another output's
      "out.bin.tmp-" + a + "-Ab3xYz",    // a live writer's
      "out.bin.tmp-Ab3xYz",              // no process id (older writers)
      "out.bin.tmp-" + d + "-Ab3xY",     // not the pattern: 5 characters
      "out.bin.tmp-" + d + "-Ab3xYz0",   // 7
      "out.bin.tmp-" + d + "-Ab3x.z",    // not a letter or digit
      "out.bin.tmp--Ab3xYz",             // no process id
      "xout.bin.tmp-" + d + "-Ab3xYz",   // another output's
  };
  for (const std::string& name : kept) Write(dir_ + "/" + name, "x");
  Write(dir_ + "/out.bin.tmp-" + d + "-Ab3xYz", "left by a killed writer");
  const Status s = WriteFileAtomic(out_, "new", 3);
  kill(alive, SIGKILL);
  waitpid(alive, nullptr, 0);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<std::string> want = kept;
  want.push_back("out.bin");
  std::sort(want.begin(), want.end());
  EXPECT_EQ(Entries(), want);
}

INSTANTIATE_TEST_SUITE_P(TemporaryFiles, AtomicFileTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Unnamed" : "Named";
                         });

}  // namespace
}  // namespace ember
