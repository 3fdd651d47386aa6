/* firmware: ember as it runs in a firmware image. The model is a constant array in
 * .rodata (embedded at build time), the session's whole working memory is one static
 * array whose size the planner computed at build time, and nothing touches a file
 * system, starts a thread or throws: the only I/O is the text going to stdout (a UART
 * on a board). It tells stories260K's greedy story from BOS and prints the token ids
 * after it, so CI can compare both with llama2.c's golden output under qemu. Built with
 * -DEMBER_FIRMWARE_BAKED=ON, the model carries a baked prompt (BOS alone by default):
 * the session starts after it, its state restored instead of prefilled, and the story
 * goes on from its logits with no prompt at all. */
#include <stdint.h>
#include <stdio.h>

#include "ember_firmware_arena.h" /* EMBER_FIRMWARE_ARENA_BYTES, generated */
#include "examples/firmware/firmware_options.h"

enum { kStoryTokens = 256 };

extern const uint8_t ember_model_data[]; /* model_blob.S */
extern const uint8_t ember_model_end[];

/* The KV cache, activations, logits and scratch: .bss, no heap. */
static _Alignas(64) uint8_t arena[EMBER_FIRMWARE_ARENA_BYTES];

typedef struct {
  int32_t ids[kStoryTokens];
  size_t n;
} Story;

static int EmitToken(void* user, int32_t token, const char* bytes, size_t length) {
  Story* story = (Story*)user;
  if (story->n < kStoryTokens) story->ids[story->n++] = token;
  fwrite(bytes, 1, length, stdout);
  return 1;
}

static int Fail(const char* what) {
  fprintf(stderr, "firmware: %s: %s\n", what, ember_last_error());
  return 1;
}

int main(void) {
  const size_t model_bytes = (size_t)(ember_model_end - ember_model_data);
  ember_model* model = NULL;
  if (ember_model_from_memory(ember_model_data, model_bytes, &model) != EMBER_OK) {
    return Fail("model");
  }
  ember_session_options options;
  FirmwareSessionOptions(&options);
  /* The build sized the arena with this same planner; a mismatch means the image was
   * built from another model or another planner and must not run. */
  const size_t needed = ember_arena_bytes(model, &options);
  if (needed != sizeof(arena)) {
    fprintf(stderr, "firmware: the static arena has %zu bytes, the planner needs %zu\n",
            sizeof(arena), needed);
    return 1;
  }
  ember_session* session = NULL;
  if (ember_session_create(model, &options, NULL, arena, sizeof(arena), &session) !=
      EMBER_OK) {
    return Fail("session");
  }
  /* Greedy is the session's default sampler. A baked prompt needs no prompt: the
   * session starts after it, with its logits. */
  const int32_t bos = ember_model_bos(model);
  const size_t baked = ember_model_baked_tokens(model);
  static Story story;
  size_t generated = 0;
  if (ember_generate(session, baked ? NULL : &bos, baked ? 0 : 1, kStoryTokens, EmitToken,
                     &story, &generated) != EMBER_OK) {
    return Fail("generate");
  }
  printf("\n[firmware] %zu tokens:", generated);
  for (size_t i = 0; i < story.n; ++i) printf(" %d", (int)story.ids[i]);
  printf("\n[firmware] model %zu bytes in .rodata, arena %zu bytes static", model_bytes,
         sizeof(arena));
  if (baked) printf(", baked prompt of %zu tokens restored, not prefilled", baked);
  printf("\n");
  ember_session_free(session);
  ember_model_free(model);
  return 0;
}
