// What the thread pool reads from the operating system for its policy (pool_policy.h):
// how long the calling thread has waited for a CPU while runnable, and which CPU it is
// on.
#ifndef EMBER_RUNTIME_POOL_RUN_QUEUE_H_
#define EMBER_RUNTIME_POOL_RUN_QUEUE_H_

#include <cstdint>

namespace ember {

// The calling thread's run-queue time since it started, in ns (the second field of
// Linux's /proc/thread-self/schedstat). False where it is not known, and always in a
// build that must not read /proc (EMBER_WITH_SCHEDSTAT off: firmware, sandboxed apps).
bool RunQueueNs(uint64_t* ns);

// The CPU the calling thread runs on now, or -1 where that is not known (not Linux).
int CurrentCpu();

}  // namespace ember

#endif  // EMBER_RUNTIME_POOL_RUN_QUEUE_H_
