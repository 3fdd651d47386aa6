// Chat.java: a conversation over a session, with the model's chat template.
package dev.ember;

import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import javax.annotation.Nullable;

/**
 * A conversation over a session (ember_chat_*): {@code send(text)} adds a user turn and
 * returns the assistant's reply. The KV cache keeps what it already holds, so each turn
 * prefills only what is new. A chat uses its session (the same one-thread rule, the same
 * sampler); closing the session closes its chats.
 */
public final class Chat implements AutoCloseable {
  private final Session session;
  private long handle;

  /** A chat over {@code session}, whose model must have a chat template. */
  public Chat(Session session) {
    this(session, 0, 0);
  }

  /** maxTextBytes: conversation text kept (0: 8 bytes a position); maxMessages: 0: 256. */
  public Chat(Session session, int maxTextBytes, int maxMessages) {
    this.session = session;
    session.enter();
    try {
      handle = Native.chatCreate(session.handle(), maxTextBytes, maxMessages, -1);
      session.adopt(this);
    } finally {
      session.exit();
    }
  }

  private long handle() {
    if (handle == 0) throw new IllegalStateException("ember: the chat is closed");
    return handle;
  }

  /** The system text, from the next reply on ("": none). */
  public Chat system(String text) {
    session.enter();
    try {
      Native.chatAdd(handle(), null, text.getBytes(StandardCharsets.UTF_8));
    } finally {
      session.exit();
    }
    return this;
  }

  /** Appends a turn: "user", "assistant" (a reply given elsewhere) or "tool". */
  public Chat add(String role, String text) {
    session.enter();
    try {
      Native.chatAdd(handle(), Native.cstr(role), text.getBytes(StandardCharsets.UTF_8));
    } finally {
      session.exit();
    }
    return this;
  }

  /**
   * Generates the assistant's reply to the conversation and appends it; {@link
   * Session#cancel()} on its session stops it after the current token, as for generate.
   */
  public String reply(int maxNew) {
    return reply(maxNew, null);
  }

  /** {@link #reply(int)}, handing {@code onText} the text as it comes. */
  public String reply(int maxNew, @Nullable Consumer<String> onText) {
    Session.checkMaxNew(maxNew);
    Generation sink;
    session.enter();
    try {
      sink = session.startGeneration(Session.listenerOf(onText));
      Native.chatGenerate(handle(), maxNew, sink, sink.scratch);
    } finally {
      session.exit();
    }
    sink.finish();
    return sink.text();
  }

  /** Adds a user turn and returns the reply. */
  public String send(String text, int maxNew) {
    add("user", text);
    return reply(maxNew);
  }

  /** Forgets the turns (the system text stays). */
  public void reset() {
    session.enter();
    try {
      Native.chatReset(handle());
    } finally {
      session.exit();
    }
  }

  /** What the last reply cost (ember_chat_stats). */
  public static final class Stats {
    public final int promptTokens;     // the rendered conversation
    public final int cachedTokens;     // of them, reused from the cache
    public final int generatedTokens;
    public final int droppedMessages;  // the oldest, to make room
    public final int contextShifts;
    public final double prefillSeconds;  // to the first sampled token
    public final double generateSeconds; // after it

    Stats(double[] v) {
      promptTokens = (int) v[0];
      cachedTokens = (int) v[1];
      generatedTokens = (int) v[2];
      droppedMessages = (int) v[3];
      contextShifts = (int) v[4];
      prefillSeconds = v[5];
      generateSeconds = v[6];
    }
  }

  public Stats stats() {
    double[] out = new double[7];
    session.enter();
    try {
      Native.chatStats(handle(), out);
    } finally {
      session.exit();
    }
    return new Stats(out);
  }

  /** Frees the conversation (its session stays open). */
  @Override
  public void close() {
    if (handle == 0) return; // closed, or its session closed it
    session.enter();
    try {
      closeHeld();
    } finally {
      session.exit();
    }
  }

  /** With the session's guard held (Session.close too). */
  void closeHeld() {
    if (handle != 0) {
      Native.chatFree(handle);
      handle = 0;
      session.forget(this);
    }
  }
}
