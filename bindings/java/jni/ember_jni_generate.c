/* ember_jni_generate.c: the natives of dev.ember.Native that call back into Java while
 * ember generates (ember_generate, ember_chat_generate), and the rest of a chat (its
 * tools and grammar: ember_jni_tools.c). */
#include "ember_jni.h"

/* Each token's bytes go to Generation.accept(token, bytes, length) in the sink's
 * reusable scratch array (a token's bytes fit; the text a stop string held back may
 * not, and gets an array of its own). */
int EmberJniOnToken(void* user, int32_t token, const char* bytes, size_t length) {
  EmberJniSink* sink = (EmberJniSink*)user;
  JNIEnv* env = sink->env;
  if (sink->failed) return 0; /* an exception is pending: no JNI calls but a few */
  jbyteArray array = sink->scratch;
  if (length > (size_t)sink->scratch_length) {
    array = EmberJniBytes(env, bytes, length);
  } else if (length) {
    (*env)->SetByteArrayRegion(env, array, 0, (jsize)length, (const jbyte*)bytes);
  }
  jboolean go = JNI_FALSE;
  if (array) {
    go = (*env)->CallBooleanMethod(env, sink->sink, ember_jni_ids.generation_accept,
                                   (jint)token, array, (jint)length);
    if (array != sink->scratch) (*env)->DeleteLocalRef(env, array);
  }
  if ((*env)->ExceptionCheck(env)) {
    sink->failed = 1; /* stop, and let Java rethrow what the callback threw */
    return 0;
  }
  return go ? 1 : 0;
}

static void InitSink(JNIEnv* env, EmberJniSink* sink, jobject generation,
                     jbyteArray scratch) {
  sink->env = env;
  sink->sink = generation;
  sink->scratch = scratch;
  sink->scratch_length = (*env)->GetArrayLength(env, scratch);
  sink->failed = 0;
}

/* Returns the tokens generated; a Java exception from the callback stays pending (and
 * wins over ember's status, which is then EMBER_OK: the callback stopped it). */
JNIEXPORT jlong JNICALL Java_dev_ember_Native_generate(JNIEnv* env, jclass cls,
                                                       jlong session, jintArray prompt,
                                                       jlong max_new, jobject generation,
                                                       jbyteArray scratch) {
  (void)cls;
  jsize n = (*env)->GetArrayLength(env, prompt);
  jint* ids = (*env)->GetIntArrayElements(env, prompt, NULL);
  if (!ids) return 0;
  EmberJniSink sink;
  InitSink(env, &sink, generation, scratch);
  size_t generated = 0;
  ember_status status =
      ember_generate(EMBER_JNI_PTR(ember_session, session), (const int32_t*)ids,
                     (size_t)n, (size_t)max_new, EmberJniOnToken, &sink, &generated);
  (*env)->ReleaseIntArrayElements(env, prompt, ids, JNI_ABORT);
  if (sink.failed) return (jlong)generated;
  EMBER_JNI_CHECK(env, status, (jlong)generated);
  return (jlong)generated;
}

JNIEXPORT jlong JNICALL Java_dev_ember_Native_chatCreate(
    JNIEnv* env, jclass cls, jlong session, jint max_text_bytes, jint max_messages,
    jint enable_thinking, jint max_tools_bytes) {
  (void)cls;
  ember_chat_options options;
  ember_chat_options_default(&options);
  options.max_text_bytes = (uint32_t)max_text_bytes;
  if (max_messages > 0) options.max_messages = (uint32_t)max_messages;
  options.enable_thinking = enable_thinking;
  options.max_tools_bytes = (uint32_t)max_tools_bytes;
  ember_chat* chat = NULL;
  EMBER_JNI_CHECK(
      env, ember_chat_create(EMBER_JNI_PTR(ember_session, session), &options, &chat), 0);
  return EMBER_JNI_HANDLE(chat);
}

JNIEXPORT void JNICALL Java_dev_ember_Native_chatFree(JNIEnv* env, jclass cls,
                                                      jlong chat) {
  (void)env, (void)cls;
  ember_chat_free(EMBER_JNI_PTR(ember_chat, chat));
}

JNIEXPORT void JNICALL Java_dev_ember_Native_chatReset(JNIEnv* env, jclass cls,
                                                       jlong chat) {
  (void)env, (void)cls;
  ember_chat_reset(EMBER_JNI_PTR(ember_chat, chat));
}

/* role NULL: the system text; else a turn of that role (NUL-terminated). */
JNIEXPORT void JNICALL Java_dev_ember_Native_chatAdd(JNIEnv* env, jclass cls, jlong chat,
                                                     jbyteArray role, jbyteArray text) {
  (void)cls;
  EmberJniPinned who, what;
  if (!EmberJniPin(env, role, &who)) return;
  if (!EmberJniPin(env, text, &what)) {
    EmberJniRelease(env, &who);
    return;
  }
  ember_chat* c = EMBER_JNI_PTR(ember_chat, chat);
  ember_status status =
      role ? ember_chat_add(c, (const char*)who.data, (const char*)what.data, what.length)
           : ember_chat_set_system(c, (const char*)what.data, what.length);
  EmberJniRelease(env, &what);
  EmberJniRelease(env, &who);
  EMBER_JNI_CHECK(env, status, );
}

JNIEXPORT jlong JNICALL Java_dev_ember_Native_chatGenerate(JNIEnv* env, jclass cls,
                                                           jlong chat, jlong max_new,
                                                           jobject generation,
                                                           jbyteArray scratch) {
  (void)cls;
  EmberJniSink sink;
  InitSink(env, &sink, generation, scratch);
  size_t generated = 0;
  ember_status status =
      ember_chat_generate(EMBER_JNI_PTR(ember_chat, chat), (size_t)max_new,
                          EmberJniOnToken, &sink, &generated);
  if (sink.failed) return (jlong)generated;
  EMBER_JNI_CHECK(env, status, (jlong)generated);
  return (jlong)generated;
}

/* prompt, cached, generated tokens, dropped messages, context shifts, prefill and
 * generate seconds. */
JNIEXPORT void JNICALL Java_dev_ember_Native_chatStats(JNIEnv* env, jclass cls,
                                                       jlong chat, jdoubleArray out) {
  (void)cls;
  ember_chat_stats stats;
  stats.struct_size = sizeof(stats);
  EMBER_JNI_CHECK(env,
                  ember_chat_last_stats(EMBER_JNI_PTR(const ember_chat, chat), &stats), );
  jdouble values[7] = {stats.prompt_tokens,    stats.cached_tokens,
                       stats.generated_tokens, stats.dropped_messages,
                       stats.context_shifts,   stats.prefill_seconds,
                       stats.generate_seconds};
  (*env)->SetDoubleArrayRegion(env, out, 0, 7, values);
}
