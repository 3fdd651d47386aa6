/* ember_jni_speculative.c: the natives of dev.ember.Native over speculative decoding
 * (ember_speculative.h): prompt lookup, a draft session, the draft length and the
 * counts. Java's Session holds the guard and the draft session's reference; these only
 * translate. */
#include "ember_jni.h"

JNIEXPORT void JNICALL Java_dev_ember_Native_setLookup(JNIEnv* env, jclass cls,
                                                       jlong session, jint ngram) {
  (void)cls;
  EMBER_JNI_CHECK(
      env,
      ember_session_set_lookup(EMBER_JNI_PTR(ember_session, session), (uint32_t)ngram), );
}

/* draft 0: detaches the draft session. */
JNIEXPORT void JNICALL Java_dev_ember_Native_setDraft(JNIEnv* env, jclass cls,
                                                      jlong session, jlong draft) {
  (void)cls;
  EMBER_JNI_CHECK(env,
                  ember_session_set_draft(EMBER_JNI_PTR(ember_session, session),
                                          EMBER_JNI_PTR(ember_session, draft)), );
}

JNIEXPORT void JNICALL Java_dev_ember_Native_setDraftMax(JNIEnv* env, jclass cls,
                                                         jlong session, jint draft_max) {
  (void)cls;
  EMBER_JNI_CHECK(env,
                  ember_session_set_draft_max(EMBER_JNI_PTR(ember_session, session),
                                              (uint32_t)draft_max), );
}

/* out: rounds, verified, drafted, accepted, draft passes. */
JNIEXPORT void JNICALL Java_dev_ember_Native_speculativeStats(JNIEnv* env, jclass cls,
                                                              jlong session,
                                                              jboolean reset,
                                                              jlongArray out) {
  (void)cls;
  ember_speculative_stats stats;
  EMBER_JNI_CHECK(env,
                  ember_session_speculative_stats(EMBER_JNI_PTR(ember_session, session),
                                                  &stats, reset ? 1 : 0), );
  jlong values[5] = {(jlong)stats.rounds, (jlong)stats.verified, (jlong)stats.drafted,
                     (jlong)stats.accepted, (jlong)stats.draft_passes};
  (*env)->SetLongArrayRegion(env, out, 0, 5, values);
}
