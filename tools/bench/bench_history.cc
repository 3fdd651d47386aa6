// Appending results to a history file (see bench_history.h).
#include "tools/bench/bench_history.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "tools/bench/bench_records.h"

namespace ember::tools {
namespace {

std::string Directory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Closes the descriptor (which also releases the lock) on every path out.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Status AppendLines(const std::string& path, const std::string& lines) {
  if (!lines.empty() && lines.back() != '\n')
    return InvalidArgument("history: a line without its newline");
  for (size_t begin = 0, end; begin < lines.size(); begin = end + 1) {
    end = lines.find('\n', begin);
    if (end - begin > kMaxBenchLineBytes) {
      return ResourceExhausted(
          "history: a line of %zu bytes, more than %zu, the most a line of a bench file "
          "may hold",
          end - begin, kMaxBenchLineBytes);
    }
  }
  const bool existed = access(path.c_str(), F_OK) == 0;
  // Read access too: the last byte tells whether the file ends in a whole line.
  Fd fd(open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (fd.get() < 0) {
    return IoError("cannot open '%s' to append: %s", path.c_str(), strerror(errno));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    return IoError("cannot stat '%s': %s", path.c_str(), strerror(errno));
  }
  const bool regular = S_ISREG(st.st_mode);
  // A history stays readable: never past what readers accept (checked again under the
  // lock), and a bench whose history is already full fails before it starts.
  const auto too_large = [&](size_t adding) {
    return ResourceExhausted(
        "'%s' holds %lld bytes: %zu more would take it past %zu (%zu MiB), the most a "
        "bench file may hold; start a new history file",
        path.c_str(), static_cast<long long>(st.st_size), adding, kMaxBenchFileBytes,
        kMaxBenchFileBytes >> 20);
  };
  if (regular && static_cast<uint64_t>(st.st_size) + std::max<size_t>(lines.size(), 1) >
                     kMaxBenchFileBytes) {
    return too_large(lines.size());
  }
  if (lines.empty()) return Status::Ok();
  // One writer at a time: the check of the last byte and the write belong together.
  while (regular && flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) {
      return IoError("cannot lock '%s': %s", path.c_str(), strerror(errno));
    }
  }
  std::string text = lines;
  if (regular && fstat(fd.get(), &st) == 0 && st.st_size > 0) {
    // A last line cut short (by a crash) gets a newline of its own first, so the new
    // lines stay whole: the broken one stays where it is, for the reader to report.
    char last = '\n';
    if (pread(fd.get(), &last, 1, st.st_size - 1) == 1 && last != '\n')
      text.insert(0, "\n");
    if (static_cast<uint64_t>(st.st_size) + text.size() > kMaxBenchFileBytes) {
      return too_large(text.size());
    }
  }
  // Regular files take the whole buffer in one write(); the loop covers short writes
  // (a full disk, a signal) by appending the rest right after, still under the lock.
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return IoError("cannot append to '%s': %s", path.c_str(),
                     n < 0 ? strerror(errno) : "nothing written");
    }
    done += static_cast<size_t>(n);
  }
  if (regular && fsync(fd.get()) != 0) {
    return IoError("cannot sync '%s': %s", path.c_str(), strerror(errno));
  }
  if (!existed) {
    // The new file's name is durable only once its directory is synced.
    Fd dir(open(Directory(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() >= 0) fsync(dir.get());
  }
  return Status::Ok();
}

}  // namespace ember::tools
