// Native.java: the JNI entry points (libember_jni), one static method per C call group.
package dev.ember;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.annotation.Nullable;

/**
 * The natives of libember_jni, thin over runtime/ember.h. Handles are the C pointers as
 * longs; strings cross as UTF-8 byte arrays ({@link #cstr} adds the NUL C wants), so
 * any text, paths included, arrives as written. Errors throw {@link EmberException}.
 */
final class Native {
  private Native() {}

  static {
    // -Dember.jni.library=/path/libember_jni.so loads that file (tests, a build tree);
    // otherwise the library path's libember_jni (an Android app's jniLibs/ABI/).
    String path = System.getProperty("ember.jni.library");
    if (path != null && !path.isEmpty()) {
      System.load(path);
    } else {
      System.loadLibrary("ember_jni");
    }
  }

  /** Loads the library (the static initializer) early, where that is wanted. */
  static void load() {}

  static byte[] cstr(String text) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[bytes.length + 1];
    System.arraycopy(bytes, 0, out, 0, bytes.length);
    return out;
  }

  static byte[][] utf8(List<String> texts) {
    byte[][] out = new byte[texts.size()][];
    for (int i = 0; i < out.length; ++i) out[i] = texts.get(i).getBytes(StandardCharsets.UTF_8);
    return out;
  }

  static String text(byte[] utf8) {
    return new String(utf8, StandardCharsets.UTF_8); // malformed bytes become U+FFFD
  }

  static native String version();

  static native long modelOpen(byte[] path);
  static native void modelFree(long model);
  static native long modelInfo(long model, int what);
  static native byte[] detokenize(long model, int previous, int[] tokens);
  static native byte[] renderChat(long model, byte[][] roles, byte[][] contents,
                                  boolean addGenerationPrompt, int enableThinking);

  static native long sessionCreate(long model, int context, int batch, int kvType,
      boolean allLogits, @Nullable byte[] isa, boolean contextShift, int contextKeep,
      int threads, long grammarBytes, int draftMax, long[] arenaBytes);
  static native void sessionFree(long session);
  static native void sessionReset(long session);
  static native long sessionPosition(long session);
  static native int[] tokenize(long session, byte[] text, int addBos, boolean parseSpecial);
  static native void prefill(long session, int[] tokens);
  static native void decode(long session, int token);
  @Nullable
  static native ByteBuffer logits(long session, int vocab, boolean allRows);
  static native int sample(long session);
  static native void setSampler(long session, float[] floats, int[] ints, long seed,
                                byte[][] stop);
  static native void setGrammar(long session, @Nullable byte[] gbnf, @Nullable byte[] root);
  static native boolean grammarComplete(long session);
  static native void setJsonSchema(long session, @Nullable byte[] schema);
  static native long jsonSchemaBytes(long model, byte[] schema);
  static native long grammarBytes(long model, byte[] gbnf, @Nullable byte[] root);
  static native byte[] saveState(long session);
  static native void restoreState(long session, byte[] state);
  static native long generate(long session, int[] prompt, long maxNew, Generation sink,
                              byte[] scratch);

  static native long chatCreate(long session, int maxTextBytes, int maxMessages,
                                int enableThinking, int maxToolsBytes);
  static native void chatFree(long chat);
  static native void chatReset(long chat);
  static native void chatAdd(long chat, @Nullable byte[] role, byte[] text);
  static native long chatGenerate(long chat, long maxNew, Generation sink, byte[] scratch);
  static native void chatStats(long chat, double[] out);

  static native void chatSetGrammar(long chat, @Nullable byte[] gbnf, @Nullable byte[] root);
  static native void chatSetTools(long chat, byte[] tools, boolean constrain);
  static native void chatSetToolGrammar(long chat, @Nullable byte[] gbnf);
  static native byte[][] chatToolCalls(long chat);
  static native byte[] chatToolCallsError(long chat);
  static native byte[] toolGrammar(long model, byte[] tools);

  static native void setLookup(long session, int ngram);
  static native void setDraft(long session, long draft);
  static native void setDraftMax(long session, int draftMax);
  static native void speculativeStats(long session, boolean reset, long[] out);

  static native void embed(long session, byte[][] texts, int dims, int normalize,
                           @Nullable byte[] promptName, int width, float[][] out);
  static native void rerank(long session, @Nullable byte[] instruction, byte[] query,
                            byte[][] docs, float[] scores);
}
