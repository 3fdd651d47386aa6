/* ember_jni_session.c: the natives of dev.ember.Native over a session: create (with its
 * thread pool), tokenize, prefill, decode, logits as direct buffers over the arena,
 * sampling, grammar and saved states. Java's Session holds the one-thread guard; these
 * only translate. */
#include <string.h>

#include "ember_jni.h"

/* Options from Java's SessionOptions, in the order Session passes them. */
static void FillOptions(ember_session_options* options, jint context, jint batch,
                        jint kv_type, jboolean all_logits, const char* isa,
                        jboolean context_shift, jint context_keep, jlong grammar_bytes,
                        jint draft_max) {
  ember_session_options_default(options);
  options->max_context = (uint32_t)context;
  options->max_batch = (uint32_t)batch;
  options->kv_type = (uint32_t)kv_type;
  options->all_logits = all_logits ? 1 : 0;
  options->isa = isa;
  options->context_shift = context_shift ? 1 : 0;
  options->context_keep = (uint32_t)context_keep;
  options->grammar_bytes = (size_t)grammar_bytes;
  options->draft_max = (uint32_t)draft_max;
}

/* Creates the session, and returns its arena's bytes in arena[0]. threads > 1: a pool
 * of its own, which the session keeps alive (freed here, gone with the session). */
JNIEXPORT jlong JNICALL Java_dev_ember_Native_sessionCreate(
    JNIEnv* env, jclass cls, jlong model, jint context, jint batch, jint kv_type,
    jboolean all_logits, jbyteArray isa, jboolean context_shift, jint context_keep,
    jint threads, jlong grammar_bytes, jint draft_max, jlongArray arena) {
  (void)cls;
  EmberJniPinned isa_name;
  if (!EmberJniPin(env, isa, &isa_name)) return 0;
  ember_session_options options;
  FillOptions(&options, context, batch, kv_type, all_logits, (const char*)isa_name.data,
              context_shift, context_keep, grammar_bytes, draft_max);
  ember_threadpool* pool = NULL;
  ember_session* session = NULL;
  ember_status status = EMBER_OK;
  if (threads > 1) {
    ember_threadpool_options pool_options;
    ember_threadpool_options_default(&pool_options);
    pool_options.num_threads = threads;
    status = ember_threadpool_create_with_options(&pool_options, &pool);
  }
  if (status == EMBER_OK) {
    status = ember_session_create(EMBER_JNI_PTR(const ember_model, model), &options, pool,
                                  NULL, 0, &session);
  }
  if (pool) ember_threadpool_free(pool); /* keeps no error: free touches no message */
  jlong bytes = 0;
  if (status == EMBER_OK) {
    bytes = (jlong)ember_arena_bytes(EMBER_JNI_PTR(const ember_model, model), &options);
  }
  EmberJniRelease(env, &isa_name);
  EMBER_JNI_CHECK(env, status, 0);
  (*env)->SetLongArrayRegion(env, arena, 0, 1, &bytes);
  return EMBER_JNI_HANDLE(session);
}

JNIEXPORT void JNICALL Java_dev_ember_Native_sessionFree(JNIEnv* env, jclass cls,
                                                         jlong session) {
  (void)env, (void)cls;
  ember_session_free(EMBER_JNI_PTR(ember_session, session));
}

JNIEXPORT void JNICALL Java_dev_ember_Native_sessionReset(JNIEnv* env, jclass cls,
                                                          jlong session) {
  (void)env, (void)cls;
  ember_session_reset(EMBER_JNI_PTR(ember_session, session));
}

JNIEXPORT jlong JNICALL Java_dev_ember_Native_sessionPosition(JNIEnv* env, jclass cls,
                                                              jlong session) {
  (void)env, (void)cls;
  return (jlong)ember_session_position(EMBER_JNI_PTR(const ember_session, session));
}

/* Token ids of UTF-8 text (not NUL-terminated). The ids go straight into a Java int[];
 * one sized by the text's bytes is enough but for BOS, else ember says how many. */
JNIEXPORT jintArray JNICALL Java_dev_ember_Native_tokenize(JNIEnv* env, jclass cls,
                                                           jlong session, jbyteArray text,
                                                           jint add_bos,
                                                           jboolean parse_special) {
  (void)cls;
  ember_tokenize_options options;
  ember_tokenize_options_default(&options);
  options.add_bos = add_bos;
  options.parse_special = parse_special ? 1 : 0;
  EmberJniPinned bytes;
  if (!EmberJniPin(env, text, &bytes)) return NULL;
  size_t capacity = bytes.length + 8;
  jintArray out = NULL;
  for (;;) {
    jintArray ids = (*env)->NewIntArray(env, (jsize)capacity);
    if (!ids) break;
    jint* data = (*env)->GetIntArrayElements(env, ids, NULL);
    if (!data) break;
    size_t n = 0;
    ember_status status = ember_tokenize_with_options(
        EMBER_JNI_PTR(ember_session, session), (const char*)bytes.data, bytes.length,
        &options, (int32_t*)data, capacity, &n);
    if (status == EMBER_RESOURCE_EXHAUSTED && n > capacity) {
      (*env)->ReleaseIntArrayElements(env, ids, data, JNI_ABORT);
      (*env)->DeleteLocalRef(env, ids);
      capacity = n;
      continue;
    }
    if (status != EMBER_OK) {
      (*env)->ReleaseIntArrayElements(env, ids, data, JNI_ABORT);
      EmberJniThrow(env, status);
      break;
    }
    if (n == capacity) {
      (*env)->ReleaseIntArrayElements(env, ids, data, 0);
      out = ids;
      break;
    }
    out = (*env)->NewIntArray(env, (jsize)n);
    if (out) (*env)->SetIntArrayRegion(env, out, 0, (jsize)n, data);
    (*env)->ReleaseIntArrayElements(env, ids, data, JNI_ABORT);
    (*env)->DeleteLocalRef(env, ids);
    break;
  }
  EmberJniRelease(env, &bytes);
  return out;
}

JNIEXPORT void JNICALL Java_dev_ember_Native_prefill(JNIEnv* env, jclass cls,
                                                     jlong session, jintArray tokens) {
  (void)cls;
  jsize n = (*env)->GetArrayLength(env, tokens);
  jint* ids = (*env)->GetIntArrayElements(env, tokens, NULL);
  if (!ids) return;
  ember_status status = ember_prefill(EMBER_JNI_PTR(ember_session, session),
                                      (const int32_t*)ids, (size_t)n);
  (*env)->ReleaseIntArrayElements(env, tokens, ids, JNI_ABORT);
  EMBER_JNI_CHECK(env, status, );
}

JNIEXPORT void JNICALL Java_dev_ember_Native_decode(JNIEnv* env, jclass cls,
                                                    jlong session, jint token) {
  (void)cls;
  EMBER_JNI_CHECK(env, ember_decode(EMBER_JNI_PTR(ember_session, session), token), );
}

/* A direct ByteBuffer over the arena's logits, no copy: the last position's row, or
 * with `all` every row of the last prefill step. NULL before the first prefill. */
JNIEXPORT jobject JNICALL Java_dev_ember_Native_logits(JNIEnv* env, jclass cls,
                                                       jlong session, jint vocab,
                                                       jboolean all) {
  (void)cls;
  size_t rows = 0;
  const float* logits =
      ember_logits_rows(EMBER_JNI_PTR(const ember_session, session), &rows);
  if (!logits || !rows) return NULL;
  if (!all) {
    logits = ember_logits(EMBER_JNI_PTR(const ember_session, session));
    rows = 1;
  }
  return (*env)->NewDirectByteBuffer(env, (void*)logits,
                                     (jlong)(rows * (size_t)vocab * sizeof(float)));
}

JNIEXPORT jint JNICALL Java_dev_ember_Native_sample(JNIEnv* env, jclass cls,
                                                    jlong session) {
  (void)cls;
  int32_t token = -1;
  EMBER_JNI_CHECK(env, ember_sample(EMBER_JNI_PTR(ember_session, session), &token), -1);
  return token;
}

/* floats: temperature, top_p, min_p, repeat_penalty, frequency_penalty,
 * presence_penalty; ints: top_k, repeat_last_n; stop: NUL-terminated byte[]s (copied by
 * ember_session_set_sampler). */
JNIEXPORT void JNICALL Java_dev_ember_Native_setSampler(JNIEnv* env, jclass cls,
                                                        jlong session, jfloatArray floats,
                                                        jintArray ints, jlong seed,
                                                        jobjectArray stop) {
  (void)cls;
  jfloat f[6];
  jint i[2];
  (*env)->GetFloatArrayRegion(env, floats, 0, 6, f);
  (*env)->GetIntArrayRegion(env, ints, 0, 2, i);
  if ((*env)->ExceptionCheck(env)) return;
  enum { kMaxStop = 16 };
  jsize n_stop = (*env)->GetArrayLength(env, stop);
  if (n_stop > kMaxStop) n_stop = kMaxStop + 1; /* ember refuses more than 16 */
  EmberJniPinned pinned[kMaxStop + 1];
  const char* strings[kMaxStop + 1];
  jsize held = 0;
  for (; held < n_stop; ++held) {
    jobject array = (*env)->GetObjectArrayElement(env, stop, held);
    if (!EmberJniPin(env, (jbyteArray)array, &pinned[held])) break;
    strings[held] = (const char*)pinned[held].data;
  }
  if (held == n_stop) {
    ember_sampler_options options;
    ember_sampler_options_default(&options);
    options.temperature = f[0];
    options.top_p = f[1];
    options.min_p = f[2];
    options.repeat_penalty = f[3];
    options.frequency_penalty = f[4];
    options.presence_penalty = f[5];
    options.top_k = (uint32_t)i[0];
    options.repeat_last_n = i[1];
    options.seed = (uint64_t)seed;
    options.stop = n_stop ? strings : NULL;
    options.n_stop = (uint32_t)n_stop;
    ember_status status =
        ember_session_set_sampler(EMBER_JNI_PTR(ember_session, session), &options);
    if (status != EMBER_OK) EmberJniThrow(env, status);
  }
  for (jsize k = 0; k < held; ++k) {
    EmberJniRelease(env, &pinned[k]);
    (*env)->DeleteLocalRef(env, pinned[k].array);
  }
}

/* gbnf: the grammar's UTF-8 bytes (NULL: none); root: NUL-terminated (NULL: "root"). */
JNIEXPORT void JNICALL Java_dev_ember_Native_setGrammar(JNIEnv* env, jclass cls,
                                                        jlong session, jbyteArray gbnf,
                                                        jbyteArray root) {
  (void)cls;
  EmberJniGrammar g;
  if (!EmberJniPinGrammar(env, gbnf, root, &g)) return;
  ember_status status =
      ember_session_set_grammar(EMBER_JNI_PTR(ember_session, session),
                                (const char*)g.text.data, g.text.length, &g.options);
  EmberJniReleaseGrammar(env, &g);
  EMBER_JNI_CHECK(env, status, );
}

/* The arena bytes the grammar takes in a session of the model (ember_grammar_bytes). */
JNIEXPORT jlong JNICALL Java_dev_ember_Native_grammarBytes(JNIEnv* env, jclass cls,
                                                           jlong model, jbyteArray gbnf,
                                                           jbyteArray root) {
  (void)cls;
  EmberJniGrammar g;
  if (!EmberJniPinGrammar(env, gbnf, root, &g)) return 0;
  size_t bytes = 0;
  ember_status status =
      ember_grammar_bytes(EMBER_JNI_PTR(const ember_model, model),
                          (const char*)g.text.data, g.text.length, &g.options, &bytes);
  EmberJniReleaseGrammar(env, &g);
  EMBER_JNI_CHECK(env, status, 0);
  return (jlong)bytes;
}

/* schema: a JSON Schema's UTF-8 bytes (NULL: no grammar), set as its GBNF would be. */
JNIEXPORT void JNICALL Java_dev_ember_Native_setJsonSchema(JNIEnv* env, jclass cls,
                                                           jlong session, jbyteArray schema) {
  (void)cls;
  EmberJniPinned text;
  if (!EmberJniPin(env, schema, &text)) return;
  ember_status status = ember_session_set_json_schema(
      EMBER_JNI_PTR(ember_session, session), (const char*)text.data, text.length);
  EmberJniRelease(env, &text);
  EMBER_JNI_CHECK(env, status, );
}

/* The arena bytes a JSON Schema's grammar takes (ember_json_schema_bytes). */
JNIEXPORT jlong JNICALL Java_dev_ember_Native_jsonSchemaBytes(JNIEnv* env, jclass cls,
                                                              jlong model, jbyteArray schema) {
  (void)cls;
  EmberJniPinned text;
  if (!EmberJniPin(env, schema, &text)) return 0;
  size_t bytes = 0;
  ember_status status = ember_json_schema_bytes(EMBER_JNI_PTR(const ember_model, model),
                                                (const char*)text.data, text.length, &bytes);
  EmberJniRelease(env, &text);
  EMBER_JNI_CHECK(env, status, 0);
  return (jlong)bytes;
}

JNIEXPORT jboolean JNICALL Java_dev_ember_Native_grammarComplete(JNIEnv* env, jclass cls,
                                                                 jlong session) {
  (void)env, (void)cls;
  return ember_session_grammar_complete(EMBER_JNI_PTR(const ember_session, session)) != 0;
}

/* The state saved straight into a new byte[] (pinned: saving is a copy out of the arena
 * and calls nothing back). */
JNIEXPORT jbyteArray JNICALL Java_dev_ember_Native_saveState(JNIEnv* env, jclass cls,
                                                             jlong session) {
  (void)cls;
  const ember_session* s = EMBER_JNI_PTR(const ember_session, session);
  size_t size = ember_session_state_size(s);
  jbyteArray out = EmberJniBytes(env, NULL, size);
  if (!out) return NULL;
  void* data = (*env)->GetPrimitiveArrayCritical(env, out, NULL);
  if (!data) return NULL;
  size_t written = 0;
  ember_status status = ember_session_save_state(s, data, size, &written);
  (*env)->ReleasePrimitiveArrayCritical(env, out, data, 0);
  EMBER_JNI_CHECK(env, status, NULL);
  return out;
}

JNIEXPORT void JNICALL Java_dev_ember_Native_restoreState(JNIEnv* env, jclass cls,
                                                          jlong session,
                                                          jbyteArray state) {
  (void)cls;
  jsize size = (*env)->GetArrayLength(env, state);
  void* data = (*env)->GetPrimitiveArrayCritical(env, state, NULL);
  if (!data) return;
  ember_status status = ember_session_restore_state(EMBER_JNI_PTR(ember_session, session),
                                                    data, (size_t)size);
  (*env)->ReleasePrimitiveArrayCritical(env, state, data, JNI_ABORT);
  EMBER_JNI_CHECK(env, status, );
}
