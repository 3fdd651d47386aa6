/* chat.c: a C program that chats with a model through ember's C API in a few calls:
 * open the model, create a session and a chat, then add each user line and generate the
 * reply. What an app (or a JNI/Swift wrapper) does.
 *
 *   usage: chat MODEL.ember [SYSTEM_TEXT] < turns.txt   (one user turn a line) */
#include <ember/ember.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int print_token(void* user, int32_t token, const char* bytes, size_t length) {
  (void)user;
  (void)token;
  fwrite(bytes, 1, length, stdout);
  fflush(stdout);
  return 1; /* 0 would stop the reply */
}

static int fail(const char* what, ember_status status) {
  fprintf(stderr, "%s: %s (%s)\n", what, ember_status_string(status), ember_last_error());
  return 1;
}

int main(int argc, char** argv) {
  ember_model* model = NULL;
  ember_session* session = NULL;
  ember_chat* chat = NULL;
  ember_session_options session_options;
  ember_sampler_options sampler;
  ember_chat_options chat_options;
  ember_status status;
  char line[4096];
  int turn = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.ember [SYSTEM_TEXT] < turns.txt\n", argv[0]);
    return 2;
  }
  if ((status = ember_model_open(argv[1], &model)) != EMBER_OK)
    return fail("open", status);
  if (!ember_model_has_chat_template(model)) {
    fprintf(stderr, "%s has no chat template\n", argv[1]);
    return 1;
  }
  ember_session_options_default(&session_options);
  session_options.max_context = 256;
  status = ember_session_create(model, &session_options, NULL, NULL, 0, &session);
  if (status != EMBER_OK) return fail("session", status);
  ember_sampler_options_default(&sampler); /* greedy unless changed */
  sampler.temperature = 0.0f;
  sampler.repeat_penalty = 1.1f;
  if ((status = ember_session_set_sampler(session, &sampler)) != EMBER_OK) {
    return fail("sampler", status);
  }
  ember_chat_options_default(&chat_options);
  if ((status = ember_chat_create(session, &chat_options, &chat)) != EMBER_OK) {
    return fail("chat", status);
  }
  if (argc > 2 &&
      (status = ember_chat_set_system(chat, argv[2], strlen(argv[2]))) != EMBER_OK) {
    return fail("system", status);
  }
  while (fgets(line, sizeof(line), stdin)) {
    size_t length = strcspn(line, "\r\n");
    size_t generated = 0;
    ember_chat_stats stats;
    if (length == 0) continue;
    if ((status = ember_chat_add(chat, "user", line, length)) != EMBER_OK) {
      return fail("add", status);
    }
    printf("[%d] ", ++turn);
    status = ember_chat_generate(chat, 24, print_token, NULL, &generated);
    if (status != EMBER_OK) return fail("generate", status);
    stats.struct_size = sizeof(stats);
    ember_chat_last_stats(chat, &stats);
    printf("\n");
    fprintf(stderr, "turn %d: %u prompt tokens, %u cached, %u generated\n", turn,
            (unsigned)stats.prompt_tokens, (unsigned)stats.cached_tokens,
            (unsigned)stats.generated_tokens);
  }
  ember_chat_free(chat);
  ember_session_free(session);
  ember_model_free(model);
  return 0;
}
