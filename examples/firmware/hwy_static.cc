// The libhwy symbols a single-target build still names (SupportedTargets and
// GetChosenTarget from ChooseKernels, SetSupportedTargetsForTest on armv7, Abort from
// HWY_DASSERT in a debug build), for images that cannot link libhwy: Debian ships only
// libhwy.so, and a static firmware links no shared objects.
// With HWY_COMPILE_ONLY_STATIC every HWY_DYNAMIC_DISPATCH is a direct call to the one
// compiled target, HWY_STATIC_TARGET, which the compiler flags guarantee the CPU has; so
// the "supported targets" are that target by construction and nothing is detected.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "hwy/base.h"
#include "hwy/targets.h"

#if !defined(HWY_COMPILE_ONLY_STATIC)
#error "hwy_static.cc stands in for libhwy only in HWY_COMPILE_ONLY_STATIC builds"
#endif

namespace hwy {
namespace {
int64_t supported_for_test = 0;
}  // namespace

int64_t SupportedTargets() {
  return supported_for_test != 0 ? supported_for_test : HWY_STATIC_TARGET;
}

void SetSupportedTargetsForTest(int64_t targets) { supported_for_test = targets; }

ChosenTarget& GetChosenTarget() {
  static ChosenTarget chosen;
  return chosen;
}

HWY_NORETURN void HWY_FORMAT(3, 4)
    Abort(const char* file, int line, const char* format, ...) {
  fprintf(stderr, "Abort at %s:%d: ", file, line);
  va_list args;
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  abort();
}

}  // namespace hwy
