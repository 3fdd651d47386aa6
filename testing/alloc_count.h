// Heap-allocation counter: an executable that links ember_alloc_count has malloc, calloc,
// realloc, the aligned allocators and every operator new replaced by versions that count
// their calls (from any thread) while the counter is armed, then forward to glibc.
#ifndef EMBER_TESTING_ALLOC_COUNT_H_
#define EMBER_TESTING_ALLOC_COUNT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ember::testing {

// Starts counting from zero. Allocations on every thread count until the next Disarm.
void AllocCounterArm();
// Stops counting and returns the allocations seen since Arm.
uint64_t AllocCounterDisarm();
// The count so far (while armed, or the last armed period's when disarmed).
uint64_t AllocCounterCount();
// Whether this executable's allocation functions are the counting ones: false if another
// interposer (a sanitizer, an LD_PRELOADed allocator) came first, so counts would be 0
// whatever happened.
bool AllocCounterActive();

// Text a generation callback (Append) streams into a fixed buffer: a callback that
// allocates nothing either, for the no-allocation tests.
struct FixedText {
  char bytes[8192];
  size_t size = 0;
  size_t tokens = 0;
};

inline bool Append(void* user, int32_t, std::string_view text) {
  auto* out = static_cast<FixedText*>(user);
  const size_t n = std::min(text.size(), sizeof(out->bytes) - out->size);
  std::memcpy(out->bytes + out->size, text.data(), n);
  out->size += n;
  ++out->tokens;
  return true;
}

}  // namespace ember::testing

#endif  // EMBER_TESTING_ALLOC_COUNT_H_
