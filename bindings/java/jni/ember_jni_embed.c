/* ember_jni_embed.c: the natives of dev.ember.Native over an embedding model or a
 * reranker: ember_embed_batch and ember_rerank_instructed, their vectors and scores
 * written into the Java arrays that are returned. */
#include <stdint.h>
#include <stdlib.h>

#include "ember_jni.h"

/* A byte[][] of Java texts as the pointers and lengths ember takes. */
typedef struct Texts {
  jsize n;
  jsize held; /* pinned so far */
  EmberJniPinned* pinned;
  const char** data;
  size_t* lengths;
} Texts;

static void ReleaseTexts(JNIEnv* env, Texts* t) {
  for (jsize i = 0; t->pinned && i < t->held; ++i) {
    EmberJniRelease(env, &t->pinned[i]);
    (*env)->DeleteLocalRef(env, t->pinned[i].array);
  }
  free(t->pinned);
  free(t->data);
  free(t->lengths);
}

/* 0: an exception is pending (ReleaseTexts still frees what was taken). */
static int PinTexts(JNIEnv* env, jobjectArray array, Texts* t) {
  t->n = (*env)->GetArrayLength(env, array);
  t->held = 0;
  t->pinned = calloc((size_t)t->n + 1, sizeof(EmberJniPinned));
  t->data = calloc((size_t)t->n + 1, sizeof(const char*));
  t->lengths = calloc((size_t)t->n + 1, sizeof(size_t));
  if (!t->pinned || !t->data || !t->lengths) {
    (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/OutOfMemoryError"),
                     "ember: no memory for the texts");
    return 0;
  }
  if ((*env)->EnsureLocalCapacity(env, t->n + 8) != 0) return 0; /* OutOfMemoryError */
  for (; t->held < t->n; ++t->held) {
    jobject text = (*env)->GetObjectArrayElement(env, array, t->held);
    if (!EmberJniPin(env, (jbyteArray)text, &t->pinned[t->held])) return 0;
    t->data[t->held] = (const char*)t->pinned[t->held].data;
    t->lengths[t->held] = t->pinned[t->held].length;
  }
  return 1;
}

/* rows x row floats (at least one), or NULL with OutOfMemoryError pending. */
static float* NewFloats(JNIEnv* env, size_t rows, size_t row) {
  float* out = NULL;
  if (!row || rows <= SIZE_MAX / sizeof(float) / row) {
    out = malloc(rows && row ? rows * row * sizeof(float) : sizeof(float));
  }
  if (!out) {
    (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/OutOfMemoryError"),
                     "ember: no memory for the vectors");
  }
  return out;
}

/* The embeddings of texts (UTF-8 byte[]s) into out's rows, each `width` floats (dims, or
 * the model's when dims is 0): one ember_embed_batch into one buffer, then each row into
 * its float[]. normalize: -1 as the model says, 0 as pooled, 1 unit length. prompt_name:
 * the named prompt (NUL-terminated, Native.cstr; "": none), NULL the model's default. */
JNIEXPORT void JNICALL Java_dev_ember_Native_embed(JNIEnv* env, jclass cls, jlong session,
                                                   jobjectArray texts, jint dims,
                                                   jint normalize, jbyteArray prompt_name,
                                                   jint width, jobjectArray out) {
  (void)cls;
  Texts t;
  EmberJniPinned name;
  float* values = NULL;
  int have_name = 0;
  ember_embed_options options;
  ember_embed_options_default(&options);
  options.dims = (uint32_t)dims;
  options.normalize = normalize;
  if (!PinTexts(env, texts, &t)) goto done;
  if (!(have_name = EmberJniPin(env, prompt_name, &name))) goto done;
  options.prompt_name = (const char*)name.data; /* NULL for a null array */
  if (!(values = NewFloats(env, (size_t)t.n, (size_t)width))) goto done;
  ember_status status =
      ember_embed_batch(EMBER_JNI_PTR(ember_session, session), t.data, t.lengths,
                        (size_t)t.n, &options, values, (size_t)t.n * (size_t)width);
  if (status != EMBER_OK) {
    EmberJniThrow(env, status);
    goto done;
  }
  for (jsize i = 0; i < t.n; ++i) {
    jfloatArray vector = (jfloatArray)(*env)->GetObjectArrayElement(env, out, i);
    if (!vector) break;
    (*env)->SetFloatArrayRegion(env, vector, 0, width,
                                values + (size_t)i * (size_t)width);
    (*env)->DeleteLocalRef(env, vector);
  }
done:
  free(values);
  if (have_name) EmberJniRelease(env, &name);
  ReleaseTexts(env, &t);
}

/* A reranker's relevance of each document (UTF-8 byte[]s) to the query, into scores (one
 * float a document). instruction: the task in a reranker's prompt (UTF-8, its length
 * the array's); null or empty: the model's default. */
JNIEXPORT void JNICALL Java_dev_ember_Native_rerank(JNIEnv* env, jclass cls,
                                                    jlong session, jbyteArray instruction,
                                                    jbyteArray query, jobjectArray docs,
                                                    jfloatArray scores) {
  (void)cls;
  Texts t;
  EmberJniPinned q, task;
  float* values = NULL;
  int have_query = 0, have_task = 0;
  if (!PinTexts(env, docs, &t)) goto done;
  if (!(have_query = EmberJniPin(env, query, &q))) goto done;
  if (!(have_task = EmberJniPin(env, instruction, &task))) goto done;
  if (!(values = NewFloats(env, (size_t)t.n, 1))) goto done;
  ember_status status = ember_rerank_instructed(
      EMBER_JNI_PTR(ember_session, session), (const char*)task.data, task.length,
      (const char*)q.data, q.length, t.data, t.lengths, (size_t)t.n, values);
  if (status != EMBER_OK) {
    EmberJniThrow(env, status);
    goto done;
  }
  (*env)->SetFloatArrayRegion(env, scores, 0, t.n, values);
done:
  free(values);
  if (have_task) EmberJniRelease(env, &task);
  if (have_query) EmberJniRelease(env, &q);
  ReleaseTexts(env, &t);
}
