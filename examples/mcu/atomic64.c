/* atomic64.c: the 64-bit atomic operations GCC leaves to libatomic on Armv8-M, which
 * has no 64-bit exclusive access (Highway's chosen-target mask is a 64-bit atomic).
 * arm-none-eabi ships no libatomic; on one core with no interrupt handler touching these
 * values, masking interrupts around the access makes it atomic. Defined under their
 * libatomic names through asm labels (the names are GCC built-ins in C). */
#include <stdint.h>

static uint32_t Lock(void) {
  uint32_t primask;
  __asm__ volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
  return primask;
}

static void Unlock(uint32_t primask) {
  __asm__ volatile("msr primask, %0" ::"r"(primask) : "memory");
}

uint64_t AtomicLoad8(const volatile void* p, int order) __asm__("__atomic_load_8");
uint64_t AtomicLoad8(const volatile void* p, int order) {
  (void)order;
  const uint32_t primask = Lock();
  const uint64_t value = *(const volatile uint64_t*)p;
  Unlock(primask);
  return value;
}

void AtomicStore8(volatile void* p, uint64_t value,
                  int order) __asm__("__atomic_store_8");
void AtomicStore8(volatile void* p, uint64_t value, int order) {
  (void)order;
  const uint32_t primask = Lock();
  *(volatile uint64_t*)p = value;
  Unlock(primask);
}
