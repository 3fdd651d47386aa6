// Heap-allocation counter (see alloc_count.h): the C allocation functions and every form
// of operator new/delete, defined in the executable so they replace glibc's and
// libstdc++'s, counting while armed and forwarding to glibc's __libc_* entry points
// (glibc 2.34 removed the malloc hooks; these entry points remain). A sanitizer build
// (EMBER_ALLOC_COUNT_OFF) keeps the sanitizer's own allocator: nothing is replaced and
// AllocCounterActive() says so.
#include "testing/alloc_count.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <new>

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* ptr);
}

namespace ember::testing {
namespace {

// Constant-initialized: the loader may allocate before any constructor runs.
std::atomic<bool> g_armed{false};
std::atomic<uint64_t> g_count{0};  // allocations while armed
std::atomic<uint64_t> g_total{0};  // every allocation (AllocCounterActive's witness)

inline void Count() {
  g_total.fetch_add(1, std::memory_order_relaxed);
  if (g_armed.load(std::memory_order_relaxed))
    g_count.fetch_add(1, std::memory_order_relaxed);
}

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

size_t PageBytes() {
  const long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<size_t>(page) : 4096;
}

// operator new: retry through the new-handler, then throw, as the standard says.
void* NewOrThrow(size_t size, size_t alignment) {
  if (size == 0) size = 1;
  for (;;) {
    Count();
    void* p = alignment > alignof(std::max_align_t) ? __libc_memalign(alignment, size)
                                                    : __libc_malloc(size);
    if (p) return p;
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

void* NewOrNull(size_t size, size_t alignment) noexcept {
  try {
    return NewOrThrow(size, alignment);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

void AllocCounterArm() {
  g_count.store(0, std::memory_order_relaxed);
  g_armed.store(true, std::memory_order_seq_cst);
}

uint64_t AllocCounterDisarm() {
  g_armed.store(false, std::memory_order_seq_cst);
  return g_count.load(std::memory_order_seq_cst);
}

uint64_t AllocCounterCount() { return g_count.load(std::memory_order_seq_cst); }

bool AllocCounterActive() {
#ifdef EMBER_ALLOC_COUNT_OFF
  return false;
#endif
  const uint64_t before = g_total.load(std::memory_order_seq_cst);
  // Through a volatile pointer, so the compiler cannot drop the malloc/free pair.
  void* (*volatile allocate)(size_t) = &malloc;
  free(allocate(1));
  return g_total.load(std::memory_order_seq_cst) != before;
}

}  // namespace ember::testing

#ifndef EMBER_ALLOC_COUNT_OFF

using ember::testing::Count;
using ember::testing::IsPowerOfTwo;
using ember::testing::NewOrNull;
using ember::testing::NewOrThrow;
using ember::testing::PageBytes;

extern "C" {

void* malloc(size_t size) {
  Count();
  return __libc_malloc(size);
}

void* calloc(size_t count, size_t size) {
  Count();
  return __libc_calloc(count, size);
}

void* realloc(void* ptr, size_t size) {
  Count();
  return __libc_realloc(ptr, size);
}

// glibc's own reallocarray calls its realloc internally (not through the PLT): replace it
// too so it counts.
void* reallocarray(void* ptr, size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(ptr, bytes);
}

void free(void* ptr) { __libc_free(ptr); }

void* memalign(size_t alignment, size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}

void* aligned_alloc(size_t alignment, size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  Count();
  if (!IsPowerOfTwo(alignment) || alignment % sizeof(void*) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t size) {
  Count();
  return __libc_memalign(PageBytes(), size);
}

void* pvalloc(size_t size) {
  Count();
  const size_t page = PageBytes();
  if (size > SIZE_MAX - page) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_memalign(page, size == 0 ? page : (size + page - 1) / page * page);
}

}  // extern "C"

// Every replaceable operator new and delete ([new.delete]).
void* operator new(size_t size) { return NewOrThrow(size, 0); }
void* operator new[](size_t size) { return NewOrThrow(size, 0); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return NewOrNull(size, 0);
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return NewOrNull(size, 0);
}
void* operator new(size_t size, std::align_val_t align) {
  return NewOrThrow(size, static_cast<size_t>(align));
}
void* operator new[](size_t size, std::align_val_t align) {
  return NewOrThrow(size, static_cast<size_t>(align));
}
void* operator new(size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  return NewOrNull(size, static_cast<size_t>(align));
}
void* operator new[](size_t size, std::align_val_t align,
                     const std::nothrow_t&) noexcept {
  return NewOrNull(size, static_cast<size_t>(align));
}

void operator delete(void* ptr) noexcept { __libc_free(ptr); }
void operator delete[](void* ptr) noexcept { __libc_free(ptr); }
void operator delete(void* ptr, size_t) noexcept { __libc_free(ptr); }
void operator delete[](void* ptr, size_t) noexcept { __libc_free(ptr); }
void operator delete(void* ptr, const std::nothrow_t&) noexcept { __libc_free(ptr); }
void operator delete[](void* ptr, const std::nothrow_t&) noexcept { __libc_free(ptr); }
void operator delete(void* ptr, std::align_val_t) noexcept { __libc_free(ptr); }
void operator delete[](void* ptr, std::align_val_t) noexcept { __libc_free(ptr); }
void operator delete(void* ptr, size_t, std::align_val_t) noexcept { __libc_free(ptr); }
void operator delete[](void* ptr, size_t, std::align_val_t) noexcept { __libc_free(ptr); }
void operator delete(void* ptr, std::align_val_t, const std::nothrow_t&) noexcept {
  __libc_free(ptr);
}
void operator delete[](void* ptr, std::align_val_t, const std::nothrow_t&) noexcept {
  __libc_free(ptr);
}

#endif  // EMBER_ALLOC_COUNT_OFF
