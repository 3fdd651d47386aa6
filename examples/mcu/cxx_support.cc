// cxx_support.cc: the C++ runtime support the image supplies itself so that libstdc++'s
// exception machinery stays out of it: operator new and delete over heap.c's malloc, the
// error paths of the standard containers (std::__throw_*), which would throw, and
// std::chrono::steady_clock (ember's profile reads it) from the cycle counter.
//
// ember is built without exceptions: it allocates with new (std::nothrow) and checks
// sizes before resizing a container. But libstdc++'s own operator new throws bad_alloc,
// its nothrow new catches it, and vector's size checks call __throw_length_error: linking
// them pulls in the unwinder, type_info, std::string and an emergency exception pool that
// libstdc++ mallocs at start-up (so does its chrono.o, built with unwind tables, through
// the personality routine). Defined here, none of that is linked. A throwing new or a
// container error cannot return: it reports and ends the program.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

extern "C" {
#include "examples/mcu/board.h"
}

namespace {

[[noreturn]] void Fatal(const char* what) {
  BoardPrintf("\n[mcu] %s\n", what);
  BoardExit(5);
}

}  // namespace

void* operator new(std::size_t bytes) {
  void* p = std::malloc(bytes);
  if (p == nullptr) Fatal("operator new: out of memory");
  return p;
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  return std::malloc(bytes);
}
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
  return std::malloc(bytes);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace std {
void __throw_bad_alloc() { Fatal("std::bad_alloc"); }
void __throw_bad_array_new_length() { Fatal("std::bad_array_new_length"); }
void __throw_length_error(const char* what) { Fatal(what); }
void __throw_out_of_range(const char* what) { Fatal(what); }
void __throw_out_of_range_fmt(const char* what, ...) { Fatal(what); }
void __throw_logic_error(const char* what) { Fatal(what); }
void __throw_invalid_argument(const char* what) { Fatal(what); }
}  // namespace std

namespace std::chrono {
inline namespace _V2 {
// Cycles since BoardInit as nanoseconds: x 1000 / 32 at 32 MHz.
steady_clock::time_point steady_clock::now() noexcept {
  const uint64_t cycles = BoardCycles();
  return time_point(
      duration(static_cast<rep>(cycles * 1000u / (BOARD_CPU_HZ / 1000000u))));
}
}  // namespace _V2
}  // namespace std::chrono
