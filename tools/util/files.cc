// ReadFile, MappedFile and CheckWritable (see files.h).
#include "tools/util/files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
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

MappedFile::~MappedFile() {
  if (data_) munmap(data_, size_);
}

Status MappedFile::Map(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open '%s': %s", path.c_str(), strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return IoError("'%s' is not a readable regular file", path.c_str());
  }
  if (static_cast<uint64_t>(st.st_size) > SIZE_MAX) {
    close(fd);
    return ResourceExhausted("'%s' (%llu bytes) is too large to map on this host",
                             path.c_str(), static_cast<unsigned long long>(st.st_size));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    close(fd);
    return Status::Ok();
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  close(fd);
  if (map == MAP_FAILED) {
    return IoError("cannot map '%s': %s", path.c_str(), strerror(map_errno));
  }
  data_ = map;
  size_ = size;
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
