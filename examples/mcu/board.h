/* board.h: what the image uses of the MPS3 board with the AN547 FPGA image (Corstone-300,
 * Cortex-M55): UART0 for text, SysTick as a cycle counter, and a way to stop. */
#ifndef EMBER_EXAMPLES_MCU_BOARD_H_
#define EMBER_EXAMPLES_MCU_BOARD_H_

#include <stddef.h>
#include <stdint.h>

/* The AN547's CPU clock (32 MHz), which SysTick counts. */
#define BOARD_CPU_HZ 32000000u

/* Turns on UART0's transmitter and starts the cycle counter (startup.c, before main). */
void BoardInit(void);
/* Writes bytes to UART0, waiting while its transmit buffer is full. */
void BoardWrite(const char* bytes, size_t length);
/* printf to UART0 through a 256-byte stack buffer (longer output is cut). No floating
 * point: newlib formats it with heap memory. */
void BoardPrintf(const char* format, ...) __attribute__((format(printf, 1, 2)));
/* CPU cycles since BoardInit (SysTick at BOARD_CPU_HZ, its wraps counted). */
uint64_t BoardCycles(void);
/* Ends the program with `status` through semihosting (qemu -semihosting-config
 * enable=on; a debugger on a board); without a host to tell, halts. */
__attribute__((noreturn)) void BoardExit(int status);

/* The stack (startup.c paints it at reset): its size, and the most of it used so far
 * (the bytes below the top that no longer hold the paint). */
size_t BoardStackBytes(void);
size_t BoardStackUsed(void);

#endif /* EMBER_EXAMPLES_MCU_BOARD_H_ */
