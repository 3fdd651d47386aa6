// Generation.java: what libember_jni calls back per token while ember generates.
package dev.ember;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import javax.annotation.Nullable;

/**
 * The sink of one generate or chat reply: collects the bytes (for the returned text, as
 * one UTF-8 decode of them all) and, with a listener, hands it whole characters as they
 * come; stops after a token once its session was cancelled. The native side copies each
 * token's bytes into {@link #scratch}, so a token costs no array of its own.
 */
final class Generation {
  final byte[] scratch = new byte[256];
  private final @Nullable TokenListener listener;
  private final Session session; // asked after each token whether it was cancelled
  private final ByteArrayOutputStream all = new ByteArrayOutputStream();
  private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
      .onMalformedInput(CodingErrorAction.REPLACE)
      .onUnmappableCharacter(CodingErrorAction.REPLACE);
  private ByteBuffer pending = ByteBuffer.allocate(64); // bytes of an unfinished character
  private CharBuffer chars = CharBuffer.allocate(256);

  Generation(@Nullable TokenListener listener, Session session) {
    this.listener = listener;
    this.session = session;
  }

  /** Called by libember_jni: data[0, length) are the bytes of `token`. */
  boolean accept(int token, byte[] data, int length) {
    all.write(data, 0, length);
    if (listener == null) return !session.cancelled();
    if (pending.remaining() < length) {
      ByteBuffer bigger = ByteBuffer.allocate(pending.position() + length + 64);
      pending.flip();
      bigger.put(pending);
      pending = bigger;
    }
    pending.put(data, 0, length);
    // Read after the listener returns: a cancel from it (or a thread it joined) ends here.
    return listener.onToken(token, decode(false)) && !session.cancelled();
  }

  private String decode(boolean end) {
    pending.flip();
    if (chars.capacity() < pending.remaining() + 8) {
      chars = CharBuffer.allocate(pending.remaining() + 8);
    }
    chars.clear();
    decoder.decode(pending, chars, end);
    if (end) decoder.flush(chars);
    pending.compact();
    chars.flip();
    return chars.toString();
  }

  /** After generation: a listener gets what an unfinished last character left (U+FFFD). */
  void finish() {
    if (listener == null) return;
    String tail = decode(true);
    if (!tail.isEmpty()) listener.onToken(-1, tail);
  }

  /** The whole text (invalid UTF-8 replaced by U+FFFD). */
  String text() {
    return new String(all.toByteArray(), StandardCharsets.UTF_8);
  }
}
