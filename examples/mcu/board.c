/* board.c: UART0, the SysTick cycle counter, semihosting exit, and the few newlib system
 * calls the image links (text to UART0, no files, no sbrk). */
#include "examples/mcu/board.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#define REG32(address) (*(volatile uint32_t*)(address))

/* CMSDK APB UART0, secure alias of 0x49303000 (AN547 memory map). */
#define UART0_BASE 0x59303000u
#define UART_DATA REG32(UART0_BASE + 0x00)
#define UART_STATE REG32(UART0_BASE + 0x04) /* bit 0: transmit buffer full */
#define UART_CTRL REG32(UART0_BASE + 0x08)  /* bit 0: transmitter on */
#define UART_BAUDDIV REG32(UART0_BASE + 0x10)
#define UART_APB_HZ 25000000u /* AN547's peripheral clock */

/* SysTick and the interrupt control register (Armv8-M system control space). */
#define SYST_CSR REG32(0xE000E010u)
#define SYST_RVR REG32(0xE000E014u)
#define SYST_CVR REG32(0xE000E018u)
#define SCB_ICSR REG32(0xE000ED04u)
#define ICSR_PENDSTSET (1u << 26)
#define SYSTICK_PERIOD (1u << 24) /* a 24-bit down-counter */

static volatile uint32_t systick_wraps;

void SysTick_Handler(void) { ++systick_wraps; }

void BoardInit(void) {
  UART_BAUDDIV = UART_APB_HZ / 115200u;
  UART_CTRL = 1u;
  SYST_RVR = SYSTICK_PERIOD - 1u;
  SYST_CVR = 0u;
  SYST_CSR = 7u; /* on, interrupt at each wrap, processor clock */
}

void BoardWrite(const char* bytes, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    while (UART_STATE & 1u) {
    }
    UART_DATA = (uint8_t)bytes[i];
  }
}

void BoardPrintf(const char* format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  int n = vsniprintf(line, sizeof(line), format, args); /* newlib: integers only */
  va_end(args);
  if (n < 0) return;
  BoardWrite(line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

uint64_t BoardCycles(void) {
  /* The counter goes from SYSTICK_PERIOD - 1 down to 0, and reaching 0 pends the
   * interrupt that counts a wrap: so value 0 starts the next period (and before the
   * first reload, after BoardInit cleared it, it is time 0). With interrupts off, a wrap
   * not yet counted shows as a pending SysTick: count it, and read the counter again so
   * that the value is one after the wrap. */
  __asm__ volatile("cpsid i" ::: "memory");
  uint32_t wraps = systick_wraps;
  uint32_t value = SYST_CVR;
  if (SCB_ICSR & ICSR_PENDSTSET) {
    value = SYST_CVR;
    ++wraps;
  }
  __asm__ volatile("cpsie i" ::: "memory");
  return (uint64_t)wraps * SYSTICK_PERIOD + (value == 0u ? 0u : SYSTICK_PERIOD - value);
}

void BoardExit(int status) {
  /* SYS_EXIT_EXTENDED (0x20): application exit (ADP_Stopped_ApplicationExit) with a
   * status, which qemu returns as its own. */
  static volatile int exiting;
  if (!exiting) {
    exiting = 1;
    uint32_t block[2] = {0x20026u, (uint32_t)status};
    register uint32_t r0 __asm__("r0") = 0x20u;
    register uint32_t* r1 __asm__("r1") = block;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  }
  for (;;) __asm__ volatile("wfi");
}

/* newlib's system calls. Only UART0's output exists; there is no file system, and no
 * sbrk heap: heap.c serves malloc from its start-up pool. */
int _write(int fd, const char* bytes, int length) {
  if (fd != 1 && fd != 2) {
    errno = EBADF;
    return -1;
  }
  BoardWrite(bytes, (size_t)length);
  return length;
}

int _read(int fd, char* bytes, int length) {
  (void)fd, (void)bytes, (void)length;
  errno = EBADF;
  return -1;
}

int _close(int fd) {
  (void)fd;
  errno = EBADF;
  return -1;
}

int _lseek(int fd, int offset, int whence) {
  (void)fd, (void)offset, (void)whence;
  errno = ESPIPE;
  return -1;
}

int _fstat(int fd, struct stat* st) {
  (void)fd;
  st->st_mode = S_IFCHR;
  return 0;
}

int _isatty(int fd) { return fd >= 0 && fd <= 2; }

void* _sbrk(ptrdiff_t increment) {
  (void)increment;
  errno = ENOMEM;
  return (void*)-1;
}

int _getpid(void) { return 1; }

int _kill(int pid, int signal) {
  (void)pid;
  BoardPrintf("\n[mcu] signal %d\n", signal);
  BoardExit(128 + signal);
}

void _exit(int status) { BoardExit(status); }

/* assert() in newlib's own code (its number formatting): reported on UART0. Defined here
 * so that newlib's version, which prints through a stdio stream, stays out of the image.
 */
void __assert_func(const char* file, int line, const char* function,
                   const char* expression) {
  BoardPrintf("\n[mcu] assertion failed: %s (%s:%d, %s)\n", expression, file, line,
              function != NULL ? function : "");
  BoardExit(6);
}
