// EMBER_DCHECK(condition): a debug-build check of a precondition that the caller
// guarantees (sizes, alignment, ranges already validated at the API boundary). It
// aborts with the file, line and condition when false; release builds compile it out
// (the condition is not evaluated). Build with EMBER_DCHECKS=ON (CMake; the sanitizer
// builds of tools/scripts/test.sh do) to keep the checks in an optimized build. Never a
// substitute for validating input: bad input gets a Status, not a DCHECK.
#ifndef EMBER_KERNELS_DCHECK_H_
#define EMBER_KERNELS_DCHECK_H_

#if !defined(NDEBUG) || defined(EMBER_DCHECK_ON)
#include <cstdio>
#include <cstdlib>

#define EMBER_DCHECK(condition)                                                    \
  do {                                                                             \
    if (!(condition)) {                                                            \
      std::fprintf(stderr, "%s:%d: EMBER_DCHECK failed: %s\n", __FILE__, __LINE__, \
                   #condition);                                                    \
      std::abort();                                                                \
    }                                                                              \
  } while (0)
#else
#define EMBER_DCHECK(condition) \
  do {                          \
  } while (false && (condition))
#endif

#endif  // EMBER_KERNELS_DCHECK_H_
