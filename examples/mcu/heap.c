/* heap.c: malloc for the image: a static pool that only start-up allocates from, sealed
 * before the first token.
 *
 * ember allocates nothing after its session is created; before that, loading makes a few
 * small allocations (the model and session handles, the tensor and layer tables, and
 * temporaries of the load-time checks). They come from this pool, a stack of blocks
 * (freeing the newest block returns its bytes, so the load-time temporaries cost nothing
 * once freed), sized exactly by the build-time planning run (EMBER_MCU_HEAP_BYTES). Once
 * sealed, an allocation is a failure, not a fallback: it prints what asked and how much,
 * and ends the program. newlib's own malloc and its sbrk heap are never linked. */
#include "examples/mcu/heap.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "examples/mcu/board.h"

#ifndef EMBER_MCU_HEAP_BYTES /* set by the planning and test images: room to measure */
#include "ember_mcu_plan.h"  /* EMBER_MCU_HEAP_BYTES: generated */
#endif

typedef struct {
  size_t bytes; /* the whole block, this header included */
  size_t unused;
} Header; /* 8 bytes: blocks stay 8-byte aligned, as malloc promises on Arm */

static _Alignas(8) uint8_t pool[EMBER_MCU_HEAP_BYTES];
static size_t used, peak, allocations;
static int sealed;

void HeapSeal(void) { sealed = 1; }
size_t HeapPeakBytes(void) { return peak; }
size_t HeapAllocations(void) { return allocations; }

static void RefuseAfterStartUp(const char* call, size_t bytes) {
  if (!sealed) return;
  BoardPrintf("\n[mcu] %s(%lu) after start-up: the heap is sealed\n", call,
              (unsigned long)bytes);
  BoardExit(4);
}

static void* Allocate(size_t bytes) {
  const size_t block = sizeof(Header) + ((bytes + 7u) & ~(size_t)7u);
  if (bytes > sizeof(pool) || block > sizeof(pool) - used) {
    errno = ENOMEM;
    return NULL;
  }
  Header* header = (Header*)(pool + used);
  header->bytes = block;
  used += block;
  if (used > peak) peak = used;
  ++allocations;
  return header + 1;
}

static Header* HeaderOf(void* p) { return (Header*)p - 1; }
static int IsNewest(const Header* header) {
  return (const uint8_t*)header + header->bytes == pool + used;
}

void* malloc(size_t bytes) {
  RefuseAfterStartUp("malloc", bytes);
  return Allocate(bytes);
}

void free(void* p) {
  if (p != NULL && IsNewest(HeaderOf(p))) used -= HeaderOf(p)->bytes;
}

void* calloc(size_t count, size_t size) {
  const size_t bytes = count * size;
  RefuseAfterStartUp("calloc", bytes);
  if (size != 0 && bytes / size != count) {
    errno = ENOMEM;
    return NULL;
  }
  void* p = Allocate(bytes);
  if (p != NULL) memset(p, 0, bytes);
  return p;
}

void* realloc(void* p, size_t bytes) {
  RefuseAfterStartUp("realloc", bytes);
  if (p == NULL) return Allocate(bytes);
  Header* header = HeaderOf(p);
  const size_t old_bytes = header->bytes - sizeof(Header);
  if (bytes <= old_bytes) return p;
  void* q = Allocate(bytes);
  if (q != NULL) {
    memcpy(q, p, old_bytes);
    free(p);
  }
  return q;
}

/* newlib's reentrant entry points, which its own code calls. */
struct _reent;
void* _malloc_r(struct _reent* r, size_t bytes) { return (void)r, malloc(bytes); }
void _free_r(struct _reent* r, void* p) { (void)r, free(p); }
void* _calloc_r(struct _reent* r, size_t count, size_t size) {
  return (void)r, calloc(count, size);
}
void* _realloc_r(struct _reent* r, void* p, size_t bytes) {
  return (void)r, realloc(p, bytes);
}
