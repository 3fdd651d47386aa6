// AtomicFile (see atomic_file.h). Where the file system can (Linux's O_TMPFILE) the
// bytes go to an unnamed file, which nothing needs to remove: a process killed even by
// SIGKILL leaves no trace. It gets a name only to be renamed over the output. While a
// named temporary file exists its path is in a fixed table that a signal handler can read
// without allocating or locking, so an interrupt removes it (unlink is async-signal-safe)
// before the signal takes its usual course; one that SIGKILL left behind carries its
// writer's process id, and the next writer of the same output removes it.
#include "runtime/model/atomic_file.h"

#include <dirent.h>
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
#include <new>

namespace ember {
namespace {

// SIGHUP too: closing the terminal must not leave a temporary file either.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kNumSignals = sizeof(kSignals) / sizeof(kSignals[0]);
constexpr int kMaxTemps = 8;  // files being written at once; the tools write one
constexpr size_t kWriteBufferBytes = size_t{2} << 20;  // AtomicFile::Open says why

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

constexpr char kTempChars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr int kTempRandomChars = 6;

// Unnamed temporary files unless a test asks for named ones.
std::atomic<bool> g_unnamed_allowed{true};

// "OUT.tmp-PID-" and six letters or digits, different on every call. The process id
// tells a later writer whether the file's writer is still alive.
std::string TempName(const std::string& target) {
  static std::atomic<uint64_t> counter{0};
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  uint64_t x = (uint64_t{static_cast<uint32_t>(getpid())} << 32) ^
               static_cast<uint64_t>(now.tv_nsec) ^
               (counter.fetch_add(1) + 1) * 0x9E3779B97F4A7C15ull;
  std::string name = target + ".tmp-" + std::to_string(getpid()) + "-";
  for (int i = 0; i < kTempRandomChars; ++i, x /= 62) name += kTempChars[x % 62];
  return name;
}

// The process id in `name` when it is a temporary file of the output `base` (the exact
// pattern TempName makes), else -1.
long TempFileWriter(const char* name, const std::string& base) {
  const size_t prefix = base.size() + 5;  // ".tmp-"
  if (strncmp(name, base.c_str(), base.size()) != 0 ||
      strncmp(name + base.size(), ".tmp-", 5) != 0) {
    return -1;
  }
  const char* p = name + prefix;
  long pid = 0;
  int digits = 0;
  for (; *p >= '0' && *p <= '9' && digits < 10; ++p, ++digits)
    pid = pid * 10 + (*p - '0');
  if (digits == 0 || pid <= 0 || *p++ != '-') return -1;
  for (int i = 0; i < kTempRandomChars; ++i, ++p) {
    if (*p == '\0' || !strchr(kTempChars, *p)) return -1;
  }
  return *p == '\0' ? pid : -1;
}

// Removes the temporary files of `target` whose writers are gone (killed by SIGKILL,
// say, which no handler sees). A writer alive, or one whose id another process now
// has, keeps its file; so do files of other outputs and names not of our pattern. A
// process of another machine writing the same output on a shared file system would
// look dead; such file systems are where the named files are used, so two machines
// writing one output at once may see one write fail (never a damaged output).
void RemoveStaleTemps(const std::string& dir, const std::string& target) {
  const size_t slash = target.find_last_of('/');
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  DIR* d = opendir(dir.c_str());
  if (!d) return;  // then the write itself reports what is wrong with the directory
  while (const dirent* e = readdir(d)) {
    const long pid = TempFileWriter(e->d_name, base);
    if (pid <= 0 || pid == getpid()) continue;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      unlinkat(dirfd(d), e->d_name, 0);
    }
  }
  closedir(d);
}

// An unnamed file in `dir` (Linux's O_TMPFILE) that linkat can name later through
// /proc/self/fd, or -1 where either is missing (another system, a file system without
// O_TMPFILE, no /proc): then a named temporary file is used.
int OpenUnnamed(const std::string& dir, mode_t mode) {
#ifdef O_TMPFILE
  if (!g_unnamed_allowed.load()) return -1;
  const int fd = open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
  if (fd < 0) return -1;
  char proc[64];
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  struct stat st;
  if (stat(proc, &st) != 0) {
    close(fd);
    return -1;
  }
  return fd;
#else
  (void)dir;
  (void)mode;
  return -1;
#endif
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

Status TooManyFiles(const std::string& path) {
  return Internal("cannot write '%s': more than %d files are being written at once",
                  path.c_str(), kMaxTemps);
}

}  // namespace

void SetUnnamedTempFilesForTesting(bool allowed) { g_unnamed_allowed.store(allowed); }

AtomicFile::~AtomicFile() { Discard(); }

void AtomicFile::Discard() {
  if (file_) fclose(file_);
  file_ = nullptr;
  buffer_.reset();  // after fclose, which flushes from it
  unnamed_ = false;
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

  const std::string dir = Directory(target_);
  RemoveStaleTemps(dir, target_);
  int fd = OpenUnnamed(dir, mode), error = 0;
  unnamed_ = fd >= 0;
  if (!unnamed_) {
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
    if (slot_ < 0) {
      close(fd);
      Discard();
      return TooManyFiles(path);
    }
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
  // Writes of whole 2 MiB pieces at 2 MiB offsets, not stdio's 4 KiB: a file system
  // that caches large folios (ext4 on Linux 6.18, for one) then holds a fresh model in
  // 2 MiB folios, which a mapping reads through huge-page entries. With 4 KiB writes
  // it held about 70 % of a q4 model in small folios, which one core read 15 % slower
  // (docs/benchmarks.md, "The model's pages"). Without the memory, stdio's own buffer
  // serves.
  buffer_.reset(new (std::nothrow) char[kWriteBufferBytes]);
  if (buffer_) setvbuf(file_, buffer_.get(), _IOFBF, kWriteBufferBytes);
  return Status::Ok();
}

// Gives the complete unnamed file a temporary name beside the output (linkat cannot
// replace a file; the rename that follows does, atomically), registered like a named
// temporary file so that an interrupt before the rename removes it. Returns an errno.
int AtomicFile::NameUnnamed(int fd) {
  char proc[64];
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  SignalsBlocked blocked;
  std::string temp;
  int error = EEXIST;
  for (int attempt = 0; attempt < 100 && error == EEXIST; ++attempt) {
    temp = TempName(target_);
    error = linkat(AT_FDCWD, proc, AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) == 0
                ? 0
                : errno;
  }
  if (error != 0) return error;
  slot_ = Register(temp);
  if (slot_ < 0) {
    unlink(temp.c_str());
    return EMFILE;
  }
  temp_ = temp;
  return 0;
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
  const bool in_place = temp_.empty() && !unnamed_;
  if (ok && !in_place && fsync(fileno(f)) != 0) {
    ok = false;
    error = errno;
  }
  bool named = true;
  if (ok && unnamed_) {
    error = NameUnnamed(fileno(f));
    ok = named = error == 0;
  }
  if (fclose(f) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    Discard();
    if (!named && error == EMFILE) return TooManyFiles(path_);
    return IoError("cannot %s '%s': %s", named ? "write" : "replace", path_.c_str(),
                   strerror(error));
  }
  if (in_place) return Status::Ok();
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
