/* main.c: stories260K on a Cortex-M55 with no operating system. The model is read in
 * place from flash (QSPI), the session's memory is one static arena in SRAM sized by the
 * planner at build time, and load's few allocations come from a start-up pool sealed
 * before the first token (heap.c). It tells the greedy story from BOS over UART0, then
 * its token ids, and what it cost: instructions (cycles on a board) per token, the
 * stack's high-water mark and the start-up heap.
 *
 * Built with EMBER_MCU_PLAN it is the build-time planning image instead: it runs start-up
 * with a scratch arena in DDR and prints the arena and heap bytes the real image needs
 * (plan.cmake writes them into ember_mcu_plan.h). */
#include <ember/ember.h>
#include <stdint.h>
#include <string.h>

#include "examples/firmware/firmware_options.h"
#include "examples/mcu/board.h"
#include "examples/mcu/heap.h"

#ifndef EMBER_MCU_PLAN
#include "ember_mcu_plan.h" /* EMBER_MCU_ARENA_BYTES, EMBER_MCU_HEAP_BYTES: generated */
#endif

enum { kStoryTokens = 256 };

extern const uint8_t ember_model_data[]; /* model_blob.S, in QSPI flash */
extern const uint8_t ember_model_end[];

#ifdef EMBER_MCU_PLAN
/* 64 MiB of DDR: more than any session the image could have in its 4 MiB of SRAM. */
static uint8_t arena[64u << 20] __attribute__((section(".bss.ember_plan"), aligned(64)));
#else
/* The KV cache, activations, logits and scratch: ISRAM, not zeroed (mps3_an547.ld). */
static uint8_t arena[EMBER_MCU_ARENA_BYTES]
    __attribute__((section(".bss.ember_arena"), aligned(64)));
#endif

/* thread_local works (the C API keeps its last error in one): startup.c's TLS block
 * holds this initial value, read through the thread pointer (not static, and read as
 * volatile, so that the compiler cannot fold it to its initializer). */
_Thread_local uint32_t ember_mcu_tls_probe = 0x7115u;

static int Fail(const char* what) {
  BoardPrintf("\n[mcu] %s: %s\n", what, ember_last_error());
  return 1;
}

/* Loads the model and creates the session: everything that may allocate. */
static int StartUp(ember_model** model, ember_session** session) {
  if (*(volatile uint32_t*)&ember_mcu_tls_probe != 0x7115u) {
    BoardPrintf("\n[mcu] thread-local storage is not initialised\n");
    return 1;
  }
  const size_t model_bytes = (size_t)(ember_model_end - ember_model_data);
  if (ember_model_from_memory(ember_model_data, model_bytes, model) != EMBER_OK) {
    return Fail("model");
  }
  ember_session_options options;
  FirmwareSessionOptions(&options);
  const size_t needed = ember_arena_bytes(*model, &options);
  if (needed == 0) return Fail("arena");
#ifdef EMBER_MCU_PLAN
  if (needed > sizeof(arena)) {
    BoardPrintf("\n[mcu] the session needs %lu bytes\n", (unsigned long)needed);
    return 1;
  }
#else
  /* The build sized the arena with this planner; a mismatch means another model or
   * another planner, and the image must not run. */
  if (needed != sizeof(arena)) {
    BoardPrintf("\n[mcu] the static arena has %lu bytes, the planner needs %lu\n",
                (unsigned long)sizeof(arena), (unsigned long)needed);
    return 1;
  }
#endif
  if (ember_session_create(*model, &options, NULL, arena, needed, session) != EMBER_OK) {
    return Fail("session");
  }
  return 0;
}

#ifdef EMBER_MCU_PLAN

int main(void) {
  ember_model* model = NULL;
  ember_session* session = NULL;
  if (StartUp(&model, &session) != 0) return 1;
  ember_session_options options;
  FirmwareSessionOptions(&options);
  BoardPrintf("EMBER_MCU_ARENA_BYTES %lu\nEMBER_MCU_HEAP_BYTES %lu\n",
              (unsigned long)ember_arena_bytes(model, &options),
              (unsigned long)HeapPeakBytes());
  return 0;
}

#else

/* The story's token ids and when each was ready. Writing a token to the UART is left
 * out of the counts: under emulation it is a busy wait, on a board it is the UART's. */
typedef struct {
  int32_t ids[kStoryTokens];
  uint64_t ready[kStoryTokens]; /* compute cycles up to token i */
  size_t n;
  uint64_t output_cycles; /* spent writing to the UART */
} Story;

static int EmitToken(void* user, int32_t token, const char* bytes, size_t length) {
  Story* story = (Story*)user;
  const uint64_t now = BoardCycles();
  if (story->n < kStoryTokens) {
    story->ids[story->n] = token;
    story->ready[story->n] = now - story->output_cycles;
    ++story->n;
  }
  BoardWrite(bytes, length);
  story->output_cycles += BoardCycles() - now;
  return 1;
}

/* Cycles as instructions under qemu -icount shift=0 (1 ns per instruction): x 31.25. */
static unsigned long long Instructions(uint64_t cycles) {
  return (unsigned long long)(cycles * (1000000000u / (BOARD_CPU_HZ / 1000u)) / 1000u);
}

int main(void) {
  const uint64_t start = BoardCycles();
  ember_model* model = NULL;
  ember_session* session = NULL;
  if (StartUp(&model, &session) != 0) return 1;
  HeapSeal();
  const uint64_t ready = BoardCycles();

  static Story story;
  story.output_cycles = ready; /* so that ready[i] counts from here */
  const int32_t bos = ember_model_bos(model);
  size_t generated = 0;
  if (ember_generate(session, &bos, 1, kStoryTokens, EmitToken, &story, &generated) !=
      EMBER_OK) {
    return Fail("generate");
  }
  BoardPrintf("\n[mcu] %lu tokens:", (unsigned long)generated);
  for (size_t i = 0; i < story.n; ++i) BoardPrintf(" %ld", (long)story.ids[i]);
  BoardPrintf("\n");

  /* ready[0]: prefill of BOS and the first sample; then one decode step per token. */
  uint64_t min = UINT64_MAX, max = 0;
  for (size_t i = 1; i < story.n; ++i) {
    const uint64_t step = story.ready[i] - story.ready[i - 1];
    if (step < min) min = step;
    if (step > max) max = step;
  }
  const uint64_t decode = story.n > 1 ? story.ready[story.n - 1] - story.ready[0] : 0;
  const size_t steps = story.n > 1 ? story.n - 1 : 1;
  BoardPrintf(
      "[mcu] cycles: start-up %llu, first token %llu, per token %llu (%llu to %llu)\n",
      (unsigned long long)(ready - start), (unsigned long long)story.ready[0],
      (unsigned long long)(decode / steps), (unsigned long long)min,
      (unsigned long long)max);
  BoardPrintf(
      "[mcu] instructions at qemu -icount shift=0: start-up %llu, first token %llu, "
      "per token %llu (%llu to %llu)\n",
      Instructions(ready - start), Instructions(story.ready[0]),
      Instructions(decode / steps), Instructions(min), Instructions(max));
  BoardPrintf(
      "[mcu] model %lu bytes in flash, arena %lu bytes in SRAM, stack %lu of %lu "
      "bytes used, start-up heap %lu bytes in %lu allocations, none after\n",
      (unsigned long)(ember_model_end - ember_model_data), (unsigned long)sizeof(arena),
      (unsigned long)BoardStackUsed(), (unsigned long)BoardStackBytes(),
      (unsigned long)HeapPeakBytes(), (unsigned long)HeapAllocations());
  ember_session_free(session);
  ember_model_free(model);
  return 0;
}

#endif /* EMBER_MCU_PLAN */
