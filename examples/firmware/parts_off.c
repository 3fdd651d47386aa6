/* parts_off: what a firmware build leaves out is refused, and said so. A build without
 * the tools defaults EMBER_WITH_CHAT, EMBER_WITH_GRAMMAR and EMBER_WITH_KQUANTS to OFF
 * (CMakeLists.txt); each part left out is replaced by its refusal, and this program
 * checks each refusal through the C API: EMBER_UNIMPLEMENTED, and a message naming the
 * option that puts the part back. The embedded stories260K still tells its story in
 * the same session afterwards. Argument: a model with q4_k weights (made at build time
 * by the host's ember convert). Prints one line per check; exits 1 if any fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/ember.h"

extern const uint8_t ember_model_data[]; /* model_blob.S */
extern const uint8_t ember_model_end[];

static int failures = 0;

/* The call's status must be EMBER_UNIMPLEMENTED and ember_last_error() must name
 * `option`. */
static void ExpectLeftOut(const char* what, ember_status status, const char* option) {
  const char* message = ember_last_error();
  const int ok = status == EMBER_UNIMPLEMENTED && strstr(message, option) != NULL;
  printf("%s %s: status %d, \"%s\"\n", ok ? "ok  " : "FAIL", what, (int)status, message);
  if (!ok) ++failures;
}

static int CountToken(void* user, int32_t token, const char* bytes, size_t length) {
  (void)token;
  (void)bytes;
  (void)length;
  ++*(size_t*)user;
  return 1;
}

static void Expect(const char* what, int ok) {
  printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, ok ? "" : ": ",
         ok ? "" : ember_last_error());
  if (!ok) ++failures;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: parts_off MODEL_WITH_Q4_K_WEIGHTS.ember\n");
    return 2;
  }
  ember_model* model = NULL;
  if (ember_model_from_memory(ember_model_data,
                              (size_t)(ember_model_end - ember_model_data),
                              &model) != EMBER_OK) {
    fprintf(stderr, "parts_off: model: %s\n", ember_last_error());
    return 1;
  }
  ember_session_options options;
  ember_session_options_default(&options);
  options.max_context = 64;
  const size_t bytes = ember_arena_bytes(model, &options);
  void* arena = bytes ? aligned_alloc(64, (bytes + 63) / 64 * 64) : NULL;
  ember_session* session = NULL;
  if (arena == NULL ||
      ember_session_create(model, &options, NULL, arena, bytes, &session) != EMBER_OK) {
    fprintf(stderr, "parts_off: session: %s\n", ember_last_error());
    return 1;
  }

#if !EMBER_PARTS_CHAT
  Expect("no chat template reported", ember_model_has_chat_template(model) == 0);
  {
    ember_chat_message message = {"user", "Hello", 5};
    char text[256];
    size_t length = 1;
    ExpectLeftOut(
        "ember_chat_template_render",
        ember_chat_template_render(model, &message, 1, NULL, text, sizeof(text), &length),
        "EMBER_WITH_CHAT=OFF");
    ember_chat* chat = NULL;
    ExpectLeftOut("ember_chat_create", ember_chat_create(session, NULL, &chat),
                  "EMBER_WITH_CHAT=OFF");
    Expect("no chat made", chat == NULL);
  }
#endif
#if !EMBER_PARTS_GRAMMAR
  {
    static const char kGrammar[] = "root ::= \"a\"";
    ExpectLeftOut(
        "ember_session_set_grammar",
        ember_session_set_grammar(session, kGrammar, sizeof(kGrammar) - 1, NULL),
        "EMBER_WITH_GRAMMAR=OFF");
  }
#endif
#if !EMBER_PARTS_KQUANTS
  {
    ember_model* kquants = NULL;
    ExpectLeftOut("ember_model_open (q4_k weights)", ember_model_open(argv[1], &kquants),
                  "EMBER_WITH_KQUANTS=OFF");
    Expect("no q4_k model made", kquants == NULL);
  }
#endif

  /* The rest of the runtime is untouched: the story's first tokens come out as usual. */
  const int32_t bos = ember_model_bos(model);
  size_t generated = 0, called = 0;
  Expect("generate after the refusals", ember_generate(session, &bos, 1, 8, CountToken,
                                                       &called, &generated) == EMBER_OK &&
                                            generated == 8 && called == 8);

  ember_session_free(session);
  free(arena);
  ember_model_free(model);
  printf("parts_off: %d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
