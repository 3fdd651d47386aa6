/* example.c: embedding ember from C99. Loads a model, sizes the arena, hands it over,
 * and streams a greedy story: the program the README shows and the package tests build
 * against an installed ember. usage: example MODEL.ember [N_TOKENS] */
#include <ember/ember.h>
#include <stdio.h>
#include <stdlib.h>

static int print_token(void* user, int32_t token, const char* bytes, size_t length) {
  (void)user;
  (void)token;
  fwrite(bytes, 1, length, stdout);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.ember [N_TOKENS]\n", argv[0]);
    return 2;
  }
  const size_t n_tokens = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 64;
  ember_model* model = NULL;
  if (ember_model_open(argv[1], &model) != EMBER_OK) {
    fprintf(stderr, "ember: %s\n", ember_last_error());
    return 1;
  }
  /* The whole session (KV cache, activations, logits, scratch) in one caller buffer. */
  const size_t arena_bytes = ember_arena_bytes(model, NULL);
  void* arena = malloc(arena_bytes);
  ember_session* session = NULL;
  if (!arena || ember_session_create(model, NULL, NULL, arena, arena_bytes, &session) !=
                    EMBER_OK) {
    fprintf(stderr, "ember: %s\n", ember_last_error());
    return 1;
  }
  int32_t prompt[8];
  size_t n_prompt = 0;
  size_t generated = 0;
  ember_status status = ember_tokenize(session, "", 0, 1, prompt, 8, &n_prompt);
  if (status == EMBER_OK) {
    status = ember_generate(session, prompt, n_prompt, n_tokens, print_token, NULL,
                            &generated);
  }
  printf("\n");
  fprintf(stderr, "ember %s: %zu tokens, arena %zu bytes\n", ember_version(), generated,
          arena_bytes);
  if (status != EMBER_OK) fprintf(stderr, "ember: %s\n", ember_last_error());
  ember_session_free(session);
  free(arena);
  ember_model_free(model);
  return status == EMBER_OK ? 0 : 1;
}
