// AtomicFile (see atomic_file.h). While a temporary file exists its path is in a fixed
// table that a signal handler can read without allocating or locking, so an interrupt
// removes it (unlink is async-signal-safe) before the signal takes its usual course.
#include "runtime/model/atomic_file.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace ember {
namespace {

// SIGHUP too: closing the terminal must not leave a temporary file either.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kNumSignals = sizeof(kSignals) / sizeof(kSignals[0]);
constexpr int kMaxTemps = 8;  // files being written at once; the tools write one

// The table the handler reads. A slot's path is written before `used` is set and only
// rewritten after it is cleared, so the handler never sees half a path.
char g_temp_paths[kMaxTemps][PATH_MAX];
std::atomic<bool> g_temp_used[kMaxTemps];
struct sigaction g_previous[kNumSignals];
bool g_installed[kNumSignals];
int g_num_temps = 0;  // the handler is installed while this is above zero
std::mutex g_mutex;   // guards the table's writers (not the handler)

void RemoveTempsAndReraise(int sig) {
  const int saved_errno = errno;
  for (int i = 0; i < kMaxTemps; ++i) {
    if (g_temp_used[i].load()) unlink(g_temp_paths[i]);
  }
  // The previous disposition (usually the default: terminate) handles the signal once
  // this handler returns and unblocks it. A previous handler that lets the program
  // go on finds the temporary file gone, and the write fails.
  for (int i = 0; i < kNumSignals; ++i) {
    if (kSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
  }
  raise(sig);
  errno = saved_errno;
}

// Blocks the signals above in this thread while the table and the handler change.
class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kSignals) sigaddset(&set, sig);
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  ~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

// Returns the slot holding `temp`, or -1 when the table is full.
int Register(const std::string& temp) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (temp.size() >= PATH_MAX) return -1;
  for (int slot = 0; slot < kMaxTemps; ++slot) {
    if (g_temp_used[slot].load()) continue;
    memcpy(g_temp_paths[slot], temp.c_str(), temp.size() + 1);
    g_temp_used[slot].store(true);
    if (g_num_temps++ == 0) {
      struct sigaction ours = {};
      ours.sa_handler = &RemoveTempsAndReraise;
      ours.sa_flags = SA_RESTART;
      sigemptyset(&ours.sa_mask);
      for (int sig : kSignals) sigaddset(&ours.sa_mask, sig);
      for (int i = 0; i < kNumSignals; ++i) {
        sigaction(kSignals[i], nullptr, &g_previous[i]);
        // An ignored signal (nohup) stays ignored: it cannot interrupt the write.
        g_installed[i] = g_previous[i].sa_handler != SIG_IGN;
        if (g_installed[i]) sigaction(kSignals[i], &ours, nullptr);
      }
    }
    return slot;
  }
  return -1;
}

void Unregister(int slot) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_temp_used[slot].store(false);
  if (--g_num_temps == 0) {
    for (int i = 0; i < kNumSignals; ++i) {
      if (g_installed[i]) sigaction(kSignals[i], &g_previous[i], nullptr);
    }
  }
}

// "OUT.tmp-" and six letters or digits, different on every call.
std::string TempName(const std::string& target) {
  static const char kChars[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static std::atomic<uint64_t> counter{0};
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t x = (uint64_t{static_cast<uint32_t>(getpid())} << 32) ^
               static_cast<uint64_t>(now.tv_nsec) ^
               (counter.fetch_add(1) + 1) * 0x9E3779B97F4A7C15ull;
  std::string name = target + ".tmp-";
  for (int i = 0; i < 6; ++i, x /= 62) name += kChars[x % 62];
  return name;
}

// Names of an already open file (a shell redirection): written in place, as asked,
// even when they lead to a regular file.
bool NamesOpenFile(const std::string& path) {
  return path.rfind("/proc/", 0) == 0 || path.rfind("/dev/fd/", 0) == 0 ||
         path == "/dev/stdout" || path == "/dev/stderr";
}

std::string Directory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

AtomicFile::~AtomicFile() { Discard(); }

void AtomicFile::Discard() {
  if (file_) fclose(file_);
  file_ = nullptr;
  // Removed before its slot is freed: a signal in between finds nothing to remove.
  if (!temp_.empty()) unlink(temp_.c_str());
  temp_.clear();
  if (slot_ >= 0) {
    SignalsBlocked blocked;
    Unregister(slot_);
  }
  slot_ = -1;
}

Status AtomicFile::Open(const std::string& path) {
  Discard();
  path_ = target_ = path;
  mode_t mode = 0666;  // a new file gets what fopen would give it (less the umask)
  bool keep_mode = false;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return IoError("cannot create '%s': %s", path.c_str(), strerror(EISDIR));
    }
    if (!S_ISREG(st.st_mode) || NamesOpenFile(path)) {
      file_ = fopen(path.c_str(), "wb");
      if (!file_) return IoError("cannot create '%s': %s", path.c_str(), strerror(errno));
      return Status::Ok();
    }
    char* real = realpath(path.c_str(), nullptr);
    if (!real) return IoError("cannot resolve '%s': %s", path.c_str(), strerror(errno));
    target_ = real;
    free(real);
    mode = st.st_mode & 07777;
    keep_mode = true;
  } else if (errno != ENOENT) {
    return IoError("cannot create '%s': %s", path.c_str(), strerror(errno));
  } else if (lstat(path.c_str(), &st) == 0) {
    return IoError("cannot create '%s': it is a symbolic link to a missing file",
                   path.c_str());
  }

  int fd = -1, error = 0;
  {
    // The file and its table entry appear together: no signal sees one without the
    // other.
    SignalsBlocked blocked;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      temp_ = TempName(target_);
      fd = open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
      error = errno;
      if (fd < 0 && error != EEXIST) break;
    }
    if (fd < 0) {
      temp_.clear();
      return IoError("cannot create '%s': %s", path.c_str(), strerror(error));
    }
    slot_ = Register(temp_);
  }
  if (slot_ < 0) {
    close(fd);
    Discard();
    return Internal("cannot write '%s': more than %d files are being written at once",
                    path.c_str(), kMaxTemps);
  }
  if (keep_mode && fchmod(fd, mode) != 0) {
    error = errno;
    close(fd);
    Discard();
    return IoError("cannot set the permissions of '%s': %s", path.c_str(),
                   strerror(error));
  }
  file_ = fdopen(fd, "wb");
  if (!file_) {
    error = errno;
    close(fd);
    Discard();
    return IoError("cannot create '%s': %s", path.c_str(), strerror(error));
  }
  return Status::Ok();
}

Status AtomicFile::Commit() {
  if (!file_) return Internal("'%s' is not open for writing", path_.c_str());
  FILE* f = file_;
  file_ = nullptr;
  errno = 0;
  bool ok = fflush(f) == 0 && !ferror(f);
  // A write that failed earlier left ferror set but maybe not errno.
  int error = errno ? errno : EIO;
  // The data must be on disk before the rename makes it the output; a pipe or device
  // written in place cannot be synced and needs not be.
  if (ok && !temp_.empty() && fsync(fileno(f)) != 0) {
    ok = false;
    error = errno;
  }
  if (fclose(f) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    Discard();
    return IoError("cannot write '%s': %s", path_.c_str(), strerror(error));
  }
  if (temp_.empty()) return Status::Ok();
  if (rename(temp_.c_str(), target_.c_str()) != 0) {
    error = errno;
    Discard();
    return IoError("cannot replace '%s': %s", path_.c_str(), strerror(error));
  }
  temp_.clear();
  Discard();  // frees the table entry
  // Make the rename itself durable. Best effort: the output is complete either way.
  const int dir = open(Directory(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    fsync(dir);
    close(dir);
  }
  return Status::Ok();
}

Status WriteFileAtomic(const std::string& path,
                       const std::function<Status(FILE*)>& write) {
  AtomicFile file;
  EMBER_RETURN_IF_ERROR(file.Open(path));
  EMBER_RETURN_IF_ERROR(write(file.file()));
  return file.Commit();
}

Status WriteFileAtomic(const std::string& path, const void* data, size_t size) {
  return WriteFileAtomic(path, [&](FILE* f) {
    if (fwrite(data, 1, size, f) != size) {
      return IoError("cannot write '%s': %s", path.c_str(), strerror(errno));
    }
    return Status::Ok();
  });
}

Status CheckNotSameFile(const std::string& output, const std::string& input,
                        const char* what) {
  struct stat out, in;
  if (stat(output.c_str(), &out) != 0 || stat(input.c_str(), &in) != 0) {
    return Status::Ok();  // a missing output is new; a missing input is its reader's
                          // error
  }
  if (out.st_dev != in.st_dev || out.st_ino != in.st_ino) return Status::Ok();
  return InvalidArgument("refusing to write '%s': it is the %s '%s'%s", output.c_str(),
                         what, input.c_str(),
                         output == input ? "" : " (the same file under another name)");
}

}  // namespace ember
