/* ember_jni.c: the JNI library's load, errors and byte arrays, and the natives of
 * dev.ember.Native over a model (open, properties, detokenize, chat template). */
#include "ember_jni.h"

#include <stdlib.h>
#include <string.h>

EmberJniIds ember_jni_ids;

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void* reserved) {
  (void)reserved;
  JNIEnv* env = NULL;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_6) != JNI_OK) return JNI_ERR;
  jclass exception = (*env)->FindClass(env, "dev/ember/EmberException");
  if (!exception) return JNI_ERR;
  ember_jni_ids.exception_class = (jclass)(*env)->NewGlobalRef(env, exception);
  (*env)->DeleteLocalRef(env, exception);
  if (!ember_jni_ids.exception_class) return JNI_ERR;
  ember_jni_ids.exception_init = (*env)->GetMethodID(
      env, ember_jni_ids.exception_class, "<init>", "(ILjava/lang/String;[B)V");
  jclass generation = (*env)->FindClass(env, "dev/ember/Generation");
  if (!ember_jni_ids.exception_init || !generation) return JNI_ERR;
  ember_jni_ids.generation_accept =
      (*env)->GetMethodID(env, generation, "accept", "(I[BI)Z");
  (*env)->DeleteLocalRef(env, generation);
  if (!ember_jni_ids.generation_accept) return JNI_ERR;
  return JNI_VERSION_1_6;
}

JNIEXPORT void JNICALL JNI_OnUnload(JavaVM* vm, void* reserved) {
  (void)reserved;
  JNIEnv* env = NULL;
  if ((*vm)->GetEnv(vm, (void**)&env, JNI_VERSION_1_6) != JNI_OK) return;
  if (ember_jni_ids.exception_class) {
    (*env)->DeleteGlobalRef(env, ember_jni_ids.exception_class);
    ember_jni_ids.exception_class = NULL;
  }
}

jbyteArray EmberJniBytes(JNIEnv* env, const char* data, size_t length) {
  if (length > INT32_MAX) {
    (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/OutOfMemoryError"),
                     "ember: more than 2 GiB of bytes");
    return NULL;
  }
  jbyteArray array = (*env)->NewByteArray(env, (jsize)length);
  if (array && data && length) {
    (*env)->SetByteArrayRegion(env, array, 0, (jsize)length, (const jbyte*)data);
  }
  return array;
}

void EmberJniThrow(JNIEnv* env, ember_status status) {
  /* The message is bytes (a path, a grammar's text): Java decodes them as UTF-8, which
   * NewStringUTF (modified UTF-8) would not do safely. */
  const char* message = ember_last_error();
  jbyteArray bytes = EmberJniBytes(env, message, strlen(message));
  if (!bytes) return;
  jstring name = (*env)->NewStringUTF(env, ember_status_string(status)); /* ASCII */
  if (!name) return;
  jobject error =
      (*env)->NewObject(env, ember_jni_ids.exception_class, ember_jni_ids.exception_init,
                        (jint)status, name, bytes);
  if (error) (*env)->Throw(env, (jthrowable)error);
}

int EmberJniPin(JNIEnv* env, jbyteArray array, EmberJniPinned* pinned) {
  pinned->array = array;
  pinned->data = NULL;
  pinned->length = 0;
  if (!array) return 1;
  pinned->length = (size_t)(*env)->GetArrayLength(env, array);
  pinned->data = (*env)->GetByteArrayElements(env, array, NULL);
  return pinned->data != NULL;
}

void EmberJniRelease(JNIEnv* env, EmberJniPinned* pinned) {
  if (pinned->data)
    (*env)->ReleaseByteArrayElements(env, pinned->array, pinned->data, JNI_ABORT);
  pinned->data = NULL;
}

int EmberJniPinGrammar(JNIEnv* env, jbyteArray gbnf, jbyteArray root,
                       EmberJniGrammar* g) {
  if (!EmberJniPin(env, gbnf, &g->text)) return 0;
  if (!EmberJniPin(env, root, &g->rule)) {
    EmberJniRelease(env, &g->text);
    return 0;
  }
  ember_grammar_options_default(&g->options);
  g->options.root = (const char*)g->rule.data;
  return 1;
}

void EmberJniReleaseGrammar(JNIEnv* env, EmberJniGrammar* g) {
  EmberJniRelease(env, &g->rule);
  EmberJniRelease(env, &g->text);
}

JNIEXPORT jstring JNICALL Java_dev_ember_Native_version(JNIEnv* env, jclass cls) {
  (void)cls;
  return (*env)->NewStringUTF(env, ember_version());
}

JNIEXPORT jlong JNICALL Java_dev_ember_Native_modelOpen(JNIEnv* env, jclass cls,
                                                        jbyteArray path) {
  (void)cls;
  EmberJniPinned pinned;
  if (!EmberJniPin(env, path, &pinned)) return 0;
  ember_model* model = NULL;
  ember_status status = ember_model_open((const char*)pinned.data, &model);
  EmberJniRelease(env, &pinned);
  EMBER_JNI_CHECK(env, status, 0);
  return EMBER_JNI_HANDLE(model);
}

JNIEXPORT void JNICALL Java_dev_ember_Native_modelFree(JNIEnv* env, jclass cls,
                                                       jlong model) {
  (void)env, (void)cls;
  ember_model_free(EMBER_JNI_PTR(ember_model, model));
}

/* 0 vocab size, 1 max context, 2 BOS, 3 EOS, 4 has a chat template, 5 baked tokens,
 * 6 embedding dims, 7 labels (a reranker's head). */
JNIEXPORT jlong JNICALL Java_dev_ember_Native_modelInfo(JNIEnv* env, jclass cls,
                                                        jlong handle, jint what) {
  (void)env, (void)cls;
  const ember_model* model = EMBER_JNI_PTR(const ember_model, handle);
  switch (what) {
    case 0:
      return ember_model_vocab_size(model);
    case 1:
      return ember_model_max_context(model);
    case 2:
      return ember_model_bos(model);
    case 3:
      return ember_model_eos(model);
    case 4:
      return ember_model_has_chat_template(model);
    case 5:
      return (jlong)ember_model_baked_tokens(model);
    case 6:
      return (jlong)ember_model_embedding_dims(model);
    case 7:
      return (jlong)ember_model_labels(model);
    default:
      return -1;
  }
}

/* The bytes of tokens[0, n) after `previous` (-1: at the start), in one byte[]: ember's
 * pieces stay valid as long as the model, so a first pass measures, a second copies. */
JNIEXPORT jbyteArray JNICALL Java_dev_ember_Native_detokenize(JNIEnv* env, jclass cls,
                                                              jlong handle, jint previous,
                                                              jintArray tokens) {
  (void)cls;
  const ember_model* model = EMBER_JNI_PTR(const ember_model, handle);
  jsize n = (*env)->GetArrayLength(env, tokens);
  jint* ids = (*env)->GetIntArrayElements(env, tokens, NULL);
  if (!ids) return NULL;
  size_t total = 0;
  jbyteArray out = NULL;
  for (int pass = 0; pass < 2; ++pass) {
    size_t offset = 0;
    int32_t prev = previous;
    for (jsize i = 0; i < n; ++i) {
      const char* bytes = NULL;
      size_t length = 0;
      ember_status status = ember_detokenize(model, prev, ids[i], &bytes, &length);
      if (status != EMBER_OK) {
        (*env)->ReleaseIntArrayElements(env, tokens, ids, JNI_ABORT);
        EmberJniThrow(env, status);
        return NULL;
      }
      if (pass == 1 && length) {
        (*env)->SetByteArrayRegion(env, out, (jsize)offset, (jsize)length,
                                   (const jbyte*)bytes);
      }
      offset += length;
      prev = ids[i];
    }
    total = offset;
    if (pass == 0 && !(out = EmberJniBytes(env, NULL, total))) break;
  }
  (*env)->ReleaseIntArrayElements(env, tokens, ids, JNI_ABORT);
  return out;
}

/* The messages (roles: NUL-terminated byte[]s; contents: byte[]s) rendered with the
 * model's chat template. The C API renders into caller memory: a buffer grown until the
 * render fits. */
JNIEXPORT jbyteArray JNICALL Java_dev_ember_Native_renderChat(
    JNIEnv* env, jclass cls, jlong handle, jobjectArray roles, jobjectArray contents,
    jboolean add_generation_prompt, jint enable_thinking) {
  (void)cls;
  jsize n = (*env)->GetArrayLength(env, roles);
  ember_chat_message* messages = calloc((size_t)n + 1, sizeof(ember_chat_message));
  EmberJniPinned* pinned = calloc(2 * (size_t)n + 1, sizeof(EmberJniPinned));
  jbyteArray out = NULL;
  size_t text_bytes = 0;
  jsize held = 0;
  if (!messages || !pinned) goto done;
  for (; held < 2 * n; ++held) {
    jobject array =
        (*env)->GetObjectArrayElement(env, held < n ? roles : contents, held % n);
    if (!EmberJniPin(env, (jbyteArray)array, &pinned[held])) goto done;
    text_bytes += pinned[held].length;
  }
  for (jsize i = 0; i < n; ++i) {
    messages[i].role = (const char*)pinned[i].data;
    messages[i].content = (const char*)pinned[n + i].data;
    messages[i].content_length = pinned[n + i].length;
  }
  ember_chat_options options;
  ember_chat_options_default(&options);
  options.add_generation_prompt = add_generation_prompt ? 1 : 0;
  options.enable_thinking = enable_thinking;
  for (size_t capacity = 4096 + 4 * text_bytes;; capacity *= 2) {
    char* buffer = malloc(capacity);
    if (!buffer) break;
    size_t length = 0;
    ember_status status =
        ember_chat_template_render(EMBER_JNI_PTR(const ember_model, handle), messages,
                                   (size_t)n, &options, buffer, capacity, &length);
    if (status == EMBER_OK) out = EmberJniBytes(env, buffer, length);
    free(buffer);
    if (status == EMBER_RESOURCE_EXHAUSTED && capacity < ((size_t)1 << 28)) continue;
    if (status != EMBER_OK) EmberJniThrow(env, status);
    break;
  }
done:
  for (jsize i = 0; pinned && i < held; ++i) {
    EmberJniRelease(env, &pinned[i]);
    (*env)->DeleteLocalRef(env, pinned[i].array);
  }
  free(pinned);
  free(messages);
  if (!out && !(*env)->ExceptionCheck(env)) {
    (*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/OutOfMemoryError"),
                     "ember: no memory to render the chat");
  }
  return out;
}
