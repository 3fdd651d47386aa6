/* startup.c: reset to main on the Cortex-M55 with no crt0: the vector table, the reset
 * handler (stack limit, FPU and Helium on, .data copied, .bss zeroed, the thread-local
 * block set up, the stack painted, the UART and the cycle counter started, constructors
 * run), the fault report, and the thread pointer for thread_local. Linker symbols are
 * mps3_an547.ld's. */
#include <stdint.h>
#include <string.h>

#include "examples/mcu/board.h"

extern uint32_t __stack_limit[], __stack_top[];
extern uint8_t __data_start[], __data_end[], __data_load[];
extern uint8_t __tls_start[], __tdata_end[], __tls_end[], __tdata_load[];
extern uint8_t __bss_start[], __bss_end[];
typedef void (*Constructor)(void);
extern Constructor __preinit_array_start[], __preinit_array_end[];
extern Constructor __init_array_start[], __init_array_end[];

int main(void);
void Reset_Handler(void);
void FaultHandler(void);
void SysTick_Handler(void); /* board.c */

/* What a stack word holds until something writes it. */
#define STACK_PAINT 0x5AC3E11Du

/* The destructor registry of C++ statics names it; there is one program, no DSOs. */
void* __dso_handle = 0;

static void Unexpected(void) {
  BoardPrintf("\n[mcu] unexpected exception\n");
  BoardExit(3);
}

/* The 16 Armv8-M system exceptions; no external interrupt is ever enabled. */
__attribute__((section(".vectors"), used)) static void (*const kVectors[16])(void) = {
    (void (*)(void))__stack_top,
    Reset_Handler,
    Unexpected,   /* NMI */
    FaultHandler, /* HardFault */
    FaultHandler, /* MemManage */
    FaultHandler, /* BusFault */
    FaultHandler, /* UsageFault */
    FaultHandler, /* SecureFault */
    0,
    0,
    0,
    Unexpected, /* SVCall */
    Unexpected, /* DebugMonitor */
    0,
    Unexpected, /* PendSV */
    SysTick_Handler,
};

/* In C from here: the FPU (and so MVE) is on, and MSPLIM turns a stack overflow into a
 * UsageFault instead of a silent write over .bss. */
__attribute__((noreturn, used)) static void ResetC(void) {
  memcpy(__data_start, __data_load, (size_t)(__data_end - __data_start));
  memcpy(__tls_start, __tdata_load, (size_t)(__tdata_end - __tls_start));
  memset(__tdata_end, 0, (size_t)(__tls_end - __tdata_end));
  memset(__bss_start, 0, (size_t)(__bss_end - __bss_start));
  /* Paint the stack below this frame, with a margin for memset's own. */
  uintptr_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (uint32_t* word = __stack_limit; (uintptr_t)word < sp - 256; ++word) {
    *(volatile uint32_t*)word = STACK_PAINT;
  }
  BoardInit();
  for (Constructor* c = __preinit_array_start; c < __preinit_array_end; ++c) (*c)();
  for (Constructor* c = __init_array_start; c < __init_array_end; ++c) (*c)();
  BoardExit(main());
}

__attribute__((naked)) void Reset_Handler(void) {
  __asm__ volatile(
      "ldr r0, =__stack_limit\n"
      "msr msplim, r0\n"
      /* CPACR: full access to coprocessors 10 and 11 (the FPU and MVE). */
      "ldr r0, =0xE000ED88\n"
      "ldr r1, [r0]\n"
      "orr r1, r1, #(0xF << 20)\n"
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
      "b ResetC\n");
}

size_t BoardStackBytes(void) {
  return (size_t)((uint8_t*)__stack_top - (uint8_t*)__stack_limit);
}

size_t BoardStackUsed(void) {
  const uint32_t* word = __stack_limit;
  while (word < __stack_top && *word == STACK_PAINT) ++word;
  return (size_t)((const uint8_t*)__stack_top - (const uint8_t*)word);
}

/* Faults: reported from a fresh stack (a stack overflow leaves none), then exit 3. */
__attribute__((noreturn, used)) static void FaultReport(const uint32_t* frame,
                                                        uint32_t exception) {
  const uint32_t cfsr = *(volatile uint32_t*)0xE000ED28u;
  const uint32_t hfsr = *(volatile uint32_t*)0xE000ED2Cu;
  const uint32_t bfar = *(volatile uint32_t*)0xE000ED38u;
  BoardPrintf("\n[mcu] fault: exception %lu, CFSR 0x%08lx, HFSR 0x%08lx, BFAR 0x%08lx",
              (unsigned long)exception, (unsigned long)cfsr, (unsigned long)hfsr,
              (unsigned long)bfar);
  if (frame >= __stack_limit && frame + 8 <= __stack_top) {
    BoardPrintf(", pc 0x%08lx, lr 0x%08lx", (unsigned long)frame[6],
                (unsigned long)frame[5]);
  }
  BoardPrintf("\n");
  BoardExit(3);
}

__attribute__((naked)) void FaultHandler(void) {
  __asm__ volatile(
      "mrs r0, msp\n"
      "mrs r1, ipsr\n"
      "ldr r2, =__stack_top\n"
      "mov sp, r2\n"
      "b FaultReport\n");
}

/* The thread pointer of the one thread (Arm EABI: preserves every register but r0).
 * Variant 1 TLS: the block starts 8 bytes (the thread control block) past it. */
__attribute__((naked)) void* __aeabi_read_tp(void) {
  __asm__ volatile(
      "ldr r0, =__tls_start - 8\n"
      "bx lr\n");
}
