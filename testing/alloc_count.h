// Heap-allocation counter: an executable that links ember_alloc_count has malloc, calloc,
// realloc, the aligned allocators and every operator new replaced by versions that count
// their calls (from any thread) while the counter is armed, then forward to glibc.
#ifndef EMBER_TESTING_ALLOC_COUNT_H_
#define EMBER_TESTING_ALLOC_COUNT_H_

#include <cstdint>

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

}  // namespace ember::testing

#endif  // EMBER_TESTING_ALLOC_COUNT_H_
