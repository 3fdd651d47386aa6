// AtomicFile: output files replaced whole or not at all. The bytes go to a temporary
// file beside the output, which is synced and renamed over the output only once it is
// complete; an error, an early return or SIGINT/SIGTERM/SIGHUP removes the temporary
// file and leaves the old output as it was. On Linux the temporary file has no name
// until it is complete (O_TMPFILE), so even SIGKILL leaves nothing behind; elsewhere
// (or on a file system without O_TMPFILE) it is OUT.tmp-PID-XXXXXX, and a writer removes
// those of its output whose process is gone. Every file the tools write goes through it.
#ifndef EMBER_RUNTIME_MODEL_ATOMIC_FILE_H_
#define EMBER_RUNTIME_MODEL_ATOMIC_FILE_H_

#include <cstddef>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "runtime/status.h"

namespace ember {

class AtomicFile {
 public:
  AtomicFile() = default;
  ~AtomicFile();  // an uncommitted temporary file is removed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Starts writing `path`. A symbolic link to a regular file is followed (the link
  // stays, its target is replaced) and the target keeps its permission bits. A path
  // that exists and is not a regular file (/dev/null, a pipe, /dev/stdout) is written
  // in place: it holds nothing a failed write could destroy.
  Status Open(const std::string& path);
  // Where to write; errors are collected by the stream and reported by Commit().
  FILE* file() const { return file_; }
  // Flushes and syncs the temporary file, then renames it over the output.
  Status Commit();
  // Whether the file being written has no name yet (O_TMPFILE), for tests.
  bool unnamed() const { return unnamed_; }

 private:
  void Discard();
  int NameUnnamed(int fd);

  std::string path_;      // as the caller named it, for messages
  std::string target_;    // the file replaced: path_ with symbolic links resolved
  std::string temp_;      // the named temporary file (none in place, or unnamed)
  int slot_ = -1;         // its entry in the list the signal handler removes
  bool unnamed_ = false;  // written to an unnamed file, named only by Commit()
  FILE* file_ = nullptr;
  std::unique_ptr<char[]> buffer_;  // file_'s stdio buffer: 2 MiB writes (Open says why)
};

// For tests: false makes Open() use a named temporary file even where an unnamed one
// works, as on systems without O_TMPFILE.
void SetUnnamedTempFilesForTesting(bool allowed);

// Writes `path` atomically with `write`, which may stop early with an error (then the
// old file stays and the error is returned).
Status WriteFileAtomic(const std::string& path,
                       const std::function<Status(FILE*)>& write);
Status WriteFileAtomic(const std::string& path, const void* data, size_t size);

// Fails, naming both, when the existing file `output` is the file `input` (the same
// path, or another name for it through a symbolic or hard link): writing it would
// destroy an input. A missing output is fine. `what` names the input ("checkpoint").
Status CheckNotSameFile(const std::string& output, const std::string& input,
                        const char* what);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_ATOMIC_FILE_H_
