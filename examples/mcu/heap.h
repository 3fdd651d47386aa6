/* heap.h: the image's malloc, which only start-up may use (see heap.c). */
#ifndef EMBER_EXAMPLES_MCU_HEAP_H_
#define EMBER_EXAMPLES_MCU_HEAP_H_

#include <stddef.h>

/* From now on any malloc, calloc or realloc reports itself and ends the program. */
void HeapSeal(void);
/* The most bytes the pool has held at once (block headers included) and the number of
 * allocations so far. */
size_t HeapPeakBytes(void);
size_t HeapAllocations(void);

#endif /* EMBER_EXAMPLES_MCU_HEAP_H_ */
