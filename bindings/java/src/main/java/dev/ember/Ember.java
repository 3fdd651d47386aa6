// Ember.java: the library as a whole: its version.
package dev.ember;

/**
 * ember: quantized transformer language models on the CPU, from Java and Kotlin.
 *
 * <p>Load a {@link Model}, run a {@link Session} over it (one per thread), or a
 * {@link Chat} over a session. libember_jni is loaded from the library path
 * ({@code System.loadLibrary("ember_jni")}), or from the file the system property
 * {@code ember.jni.library} names.
 */
public final class Ember {
  private Ember() {}

  /** The native library's version, "MAJOR.MINOR.PATCH". */
  public static String version() {
    return Native.version();
  }
}
