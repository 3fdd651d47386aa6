// ReadFile (see files.h).
#include "tools/util/files.h"

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

}  // namespace ember::tools
