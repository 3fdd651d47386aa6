// The libhwy symbols a single-target build still names (SupportedTargets and
// GetChosenTarget from ChooseKernels, SetSupportedTargetsForTest on armv7, Abort from
// Highway's assertions), for images that cannot link libhwy: Debian ships only
// libhwy.so, a static firmware links no shared objects, and there is no libhwy for
// arm-none-eabi at all (examples/mcu uses this file too).
// With HWY_COMPILE_ONLY_STATIC every HWY_DYNAMIC_DISPATCH is a direct call to the one
// compiled target, HWY_STATIC_TARGET, which the compiler flags guarantee the CPU has; so
// the "supported targets" are that target by construction and nothing is detected.
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "hwy/base.h"
#include "hwy/targets.h"
#include "runtime/status.h"  // ember::Format: no C library printf in the image

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

// Formatted into a buffer and written with write(2): no stdio stream, so an image whose
// C library keeps FILE support out (examples/mcu) does not link it for this.
HWY_NORETURN void HWY_FORMAT(3, 4)
    Abort(const char* file, int line, const char* format, ...) {
  char message[512];
  int n = ember::Format(message, sizeof(message), "Abort at %s:%d: ", file, line);
  if (n < 0 || n >= static_cast<int>(sizeof(message))) n = 0;
  va_list args;
  va_start(args, format);
  const int more = ember::FormatV(message + n, sizeof(message) - n, format, args);
  va_end(args);
  if (more > 0) n += more;
  if (n > static_cast<int>(sizeof(message)) - 2)
    n = static_cast<int>(sizeof(message)) - 2;
  message[n++] = '\n';
  if (write(STDERR_FILENO, message, static_cast<size_t>(n)) < 0) {
    // Nothing else to tell it to.
  }
  abort();
}

}  // namespace hwy
