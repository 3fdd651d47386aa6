// RunQueueNs (run_queue.h): Linux's schedstat, read with open/read/close into a stack
// buffer (no allocation: the pool calls it after load); CurrentCpu: sched_getcpu.
#include "runtime/pool/run_queue.h"

#if EMBER_WITH_SCHEDSTAT
#include <fcntl.h>
#include <unistd.h>
#endif
#ifdef __linux__
#include <sched.h>
#endif

namespace ember {

bool RunQueueNs(uint64_t* ns) {
#if EMBER_WITH_SCHEDSTAT
  const int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[96];
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  const char* c = text;
  while (*c >= '0' && *c <= '9') ++c;  // time on a CPU
  if (*c++ != ' ') return false;
  uint64_t value = 0;
  for (; *c >= '0' && *c <= '9'; ++c)
    value = value * 10 + static_cast<uint64_t>(*c - '0');
  *ns = value;
  return true;
#else
  (void)ns;
  return false;
#endif
}

int CurrentCpu() {
#ifdef __linux__
  return sched_getcpu();  // -1 on failure
#else
  return -1;
#endif
}

}  // namespace ember
