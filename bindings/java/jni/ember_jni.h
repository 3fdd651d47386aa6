/* ember_jni.h: what the JNI glue's files share: the classes and methods looked up once
 * at load, errors turned into EmberException, handles as jlong. */
#ifndef EMBER_BINDINGS_JAVA_EMBER_JNI_H_
#define EMBER_BINDINGS_JAVA_EMBER_JNI_H_

#include <ember/ember.h>
#include <jni.h>
#include <stdint.h>

/* Handles travel to Java as jlong (0: none). */
#define EMBER_JNI_PTR(type, handle) ((type*)(intptr_t)(handle))
#define EMBER_JNI_HANDLE(ptr) ((jlong)(intptr_t)(ptr))

/* Looked up in JNI_OnLoad; global references, kept for the library's life. */
typedef struct EmberJniIds {
  jclass exception_class;   /* dev.ember.EmberException */
  jmethodID exception_init; /* (int code, String status, byte[] message) */
  jmethodID
      generation_accept; /* dev.ember.Generation.accept(int, byte[], int): boolean */
} EmberJniIds;
extern EmberJniIds ember_jni_ids;

/* Throws EmberException with `status`, its name and ember_last_error()'s message (read
 * first: nothing before it may call ember). */
void EmberJniThrow(JNIEnv* env, ember_status status);

/* Returns `ret` from the calling function, EmberException thrown, unless `call` is OK. */
#define EMBER_JNI_CHECK(env, call, ret)        \
  do {                                         \
    ember_status ember_jni_status_ = (call);   \
    if (ember_jni_status_ != EMBER_OK) {       \
      EmberJniThrow((env), ember_jni_status_); \
      return ret;                              \
    }                                          \
  } while (0)

/* A new byte[] holding data[0, length) (NULL with OutOfMemoryError pending). */
jbyteArray EmberJniBytes(JNIEnv* env, const char* data, size_t length);

/* A byte[] from Java as C bytes, held until EmberJniRelease (no copy back: JNI_ABORT).
 * Strings come NUL-terminated from Java (Native.cstr); NULL array: NULL. */
typedef struct EmberJniPinned {
  jbyteArray array;
  jbyte* data;
  size_t length;
} EmberJniPinned;
int EmberJniPin(JNIEnv* env, jbyteArray array, EmberJniPinned* pinned); /* 0: OOM */
void EmberJniRelease(JNIEnv* env, EmberJniPinned* pinned);

/* A grammar's text (g->text) and root rule (g->rule, NULL: "root") pinned, and options
 * naming the rule; released by EmberJniReleaseGrammar. 0: an exception is pending and
 * nothing is held. */
typedef struct EmberJniGrammar {
  EmberJniPinned text, rule;
  ember_grammar_options options;
} EmberJniGrammar;
int EmberJniPinGrammar(JNIEnv* env, jbyteArray gbnf, jbyteArray root, EmberJniGrammar* g);
void EmberJniReleaseGrammar(JNIEnv* env, EmberJniGrammar* g);

/* What a generate or chat reply calls back into: the Java Generation `sink`, handed
 * each token's bytes in `scratch` (or a new array when they do not fit). A Java
 * exception stops generation and stays pending, so Java sees it thrown. */
typedef struct EmberJniSink {
  JNIEnv* env;
  jobject sink;
  jbyteArray scratch;
  jsize scratch_length;
  int failed; /* a Java exception is pending: no more calls into Java */
} EmberJniSink;
int EmberJniOnToken(void* user, int32_t token, const char* bytes, size_t length);

#endif /* EMBER_BINDINGS_JAVA_EMBER_JNI_H_ */
