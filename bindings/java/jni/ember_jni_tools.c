/* ember_jni_tools.c: the natives of dev.ember.Native over a chat's tools (set, their
 * calls' grammar, the last reply's calls read back), a chat's whole-reply grammar, and
 * a model's tool-call grammar (ember_tool_grammar). */
#include <stdlib.h>
#include <string.h>

#include "ember_jni.h"

/* tools: the JSON array's UTF-8 bytes (empty: none); constrain: then hold each call to
 * the grammar ember_tool_grammar gives for them (ember_chat_constrain_tools). */
JNIEXPORT void JNICALL Java_dev_ember_Native_chatSetTools(JNIEnv* env, jclass cls,
                                                          jlong handle, jbyteArray tools,
                                                          jboolean constrain) {
  (void)cls;
  ember_chat* chat = EMBER_JNI_PTR(ember_chat, handle);
  EmberJniPinned json;
  if (!EmberJniPin(env, tools, &json)) return;
  ember_status status = ember_chat_set_tools(chat, (const char*)json.data, json.length);
  EmberJniRelease(env, &json);
  EMBER_JNI_CHECK(env, status, );
  if (constrain) EMBER_JNI_CHECK(env, ember_chat_constrain_tools(chat), );
}

/* gbnf: the calls' grammar's UTF-8 bytes (NULL: none). */
JNIEXPORT void JNICALL Java_dev_ember_Native_chatSetToolGrammar(JNIEnv* env, jclass cls,
                                                                jlong chat,
                                                                jbyteArray gbnf) {
  (void)cls;
  EmberJniPinned text;
  if (!EmberJniPin(env, gbnf, &text)) return;
  ember_status status = ember_chat_set_tool_grammar(EMBER_JNI_PTR(ember_chat, chat),
                                                    (const char*)text.data, text.length);
  EmberJniRelease(env, &text);
  EMBER_JNI_CHECK(env, status, );
}

/* gbnf: the replies' grammar's UTF-8 bytes (NULL: none); root: NUL-terminated (NULL:
 * "root"). */
JNIEXPORT void JNICALL Java_dev_ember_Native_chatSetGrammar(JNIEnv* env, jclass cls,
                                                            jlong chat, jbyteArray gbnf,
                                                            jbyteArray root) {
  (void)cls;
  EmberJniGrammar g;
  if (!EmberJniPinGrammar(env, gbnf, root, &g)) return;
  ember_status status =
      ember_chat_set_grammar(EMBER_JNI_PTR(ember_chat, chat), (const char*)g.text.data,
                             g.text.length, &g.options);
  EmberJniReleaseGrammar(env, &g);
  EMBER_JNI_CHECK(env, status, );
}

/* The last reply's calls as byte[]s, three a call: its id, name and arguments (views of
 * the chat's text, copied here into the arrays Java decodes). */
JNIEXPORT jobjectArray JNICALL Java_dev_ember_Native_chatToolCalls(JNIEnv* env,
                                                                   jclass cls,
                                                                   jlong handle) {
  (void)cls;
  const ember_chat* chat = EMBER_JNI_PTR(const ember_chat, handle);
  size_t n = 0;
  EMBER_JNI_CHECK(env, ember_chat_tool_call_count(chat, &n, NULL), NULL);
  if (n > INT32_MAX / 3) n = INT32_MAX / 3; /* never: a chat holds far fewer */
  jclass bytes_class = (*env)->FindClass(env, "[B");
  if (!bytes_class) return NULL;
  jobjectArray out = (*env)->NewObjectArray(env, (jsize)(3 * n), bytes_class, NULL);
  (*env)->DeleteLocalRef(env, bytes_class);
  for (size_t i = 0; out && i < n; ++i) {
    ember_tool_call call;
    memset(&call, 0, sizeof(call));
    call.struct_size = sizeof(call);
    ember_status status = ember_chat_tool_call(chat, i, &call);
    if (status != EMBER_OK) {
      EmberJniThrow(env, status);
      return NULL;
    }
    const char* data[3] = {call.id, call.name, call.arguments};
    size_t lengths[3] = {strlen(call.id), call.name_length, call.arguments_length};
    for (int k = 0; k < 3; ++k) {
      jbyteArray bytes = EmberJniBytes(env, data[k], lengths[k]);
      if (!bytes) return NULL;
      (*env)->SetObjectArrayElement(env, out, (jsize)(3 * i + (size_t)k), bytes);
      (*env)->DeleteLocalRef(env, bytes);
    }
  }
  return out;
}

/* Why the last reply's calls did not parse (empty when they did, or it made none). */
JNIEXPORT jbyteArray JNICALL Java_dev_ember_Native_chatToolCallsError(JNIEnv* env,
                                                                      jclass cls,
                                                                      jlong chat) {
  (void)cls;
  size_t n = 0;
  const char* message = NULL;
  EMBER_JNI_CHECK(
      env,
      ember_chat_tool_call_count(EMBER_JNI_PTR(const ember_chat, chat), &n, &message),
      NULL);
  return EmberJniBytes(env, message, message ? strlen(message) : 0);
}

/* The GBNF of one call to the tools (their JSON's UTF-8 bytes) in the model's template
 * syntax: its size asked first, then written into a buffer of that size. */
JNIEXPORT jbyteArray JNICALL Java_dev_ember_Native_toolGrammar(JNIEnv* env, jclass cls,
                                                               jlong model,
                                                               jbyteArray tools) {
  (void)cls;
  const ember_model* m = EMBER_JNI_PTR(const ember_model, model);
  EmberJniPinned json;
  if (!EmberJniPin(env, tools, &json)) return NULL;
  size_t need = 0; /* capacity 0, no buffer: only ask */
  ember_status status =
      ember_tool_grammar(m, (const char*)json.data, json.length, NULL, &need);
  jbyteArray out = NULL;
  if (status == EMBER_OK) out = EmberJniBytes(env, NULL, 0); /* never: it needs the NUL */
  if (status == EMBER_RESOURCE_EXHAUSTED) {
    char* gbnf = malloc(need);
    if (gbnf) {
      size_t length = need;
      status = ember_tool_grammar(m, (const char*)json.data, json.length, gbnf, &length);
      if (status == EMBER_OK) out = EmberJniBytes(env, gbnf, length);
      free(gbnf);
    } else {
      status = EMBER_OK; /* no memory: OutOfMemoryError below */
    }
  }
  EmberJniRelease(env, &json);
  EMBER_JNI_CHECK(env, status, NULL);
  if (!out && !(*env)->ExceptionCheck(env)) {
    (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/OutOfMemoryError"),
                     "ember: no memory for the tools' grammar");
  }
  return out;
}
