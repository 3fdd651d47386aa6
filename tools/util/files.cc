// ReadFile and CheckWritable (see files.h).
#include "tools/util/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ember::tools {

Status ReadFile(const std::string& path, std::vector<uint8_t>* bytes) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return IoError("cannot open '%s': %s", path.c_str(), strerror(errno));
  bytes->clear();
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
    bytes->insert(bytes->end(), buf, buf + n);
  const bool failed = ferror(f);
  const int read_errno = errno;  // e.g. EISDIR: fopen succeeds on a directory
  fclose(f);
  if (failed) return IoError("cannot read '%s': %s", path.c_str(), strerror(read_errno));
  return Status::Ok();
}

Status CheckWritable(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return IoError("cannot write '%s': it is a directory", path.c_str());
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return IoError("cannot write '%s': %s", path.c_str(), strerror(errno));
  }
  return Status::Ok();
}

}  // namespace ember::tools
