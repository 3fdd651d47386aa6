// Model::Open: a model file mapped read-only (mmap), and its unmapping. Builds without a
// file system (EMBER_WITH_FILES=OFF, bare metal) take model_file_none.cc instead.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "runtime/model/model.h"

namespace ember {

Result<std::unique_ptr<Model>> Model::Open(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return IoError("cannot stat '%s': %s", path, strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return IoError("'%s' is not a regular file", path);
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    close(fd);
    return InvalidModel("'%s' is empty", path);
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  close(fd);
  if (map == MAP_FAILED) return IoError("cannot map '%s': %s", path, strerror(map_errno));
  std::unique_ptr<Model> model(new (std::nothrow) Model());
  if (!model) {
    munmap(map, size);
    return ResourceExhausted("out of memory for the model");
  }
  model->data_ = static_cast<const uint8_t*>(map);
  model->size_ = size;
  model->mapped_ = true;
  Status s = model->Init(model->data_, size);
  if (!s.ok()) return Status(s.code(), "%s: %s", path, s.message());
  return model;
}

Model::~Model() {
  if (mapped_) munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace ember
