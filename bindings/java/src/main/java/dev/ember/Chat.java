// Chat.java: a conversation over a session, with the model's chat template.
package dev.ember;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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
    this(session, maxTextBytes, maxMessages, 0);
  }

  /** maxToolsBytes: room for the tools' JSON {@link #setTools} keeps (0: no tools). */
  public Chat(Session session, int maxTextBytes, int maxMessages, int maxToolsBytes) {
    this.session = session;
    session.enter();
    try {
      handle = Native.chatCreate(session.handle(), maxTextBytes, maxMessages, -1,
                                 maxToolsBytes);
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

  /**
   * Every reply from now on is a sentence of the GBNF grammar (from rule "root"), ending
   * at the template's end of turn; a reply that maxNew or the context cuts short throws
   * EmberException ("out of range"). Replaces a tool grammar and is replaced by one;
   * null: none. Room for it: {@link SessionOptions#grammarBytes}.
   */
  public void setGrammar(@Nullable String gbnf) {
    setGrammar(gbnf, null);
  }

  /** root null: "root". A malformed grammar throws EmberException naming line and column. */
  public void setGrammar(@Nullable String gbnf, @Nullable String root) {
    byte[] text = gbnf == null ? null : gbnf.getBytes(StandardCharsets.UTF_8);
    session.enter();
    try {
      Native.chatSetGrammar(handle(), text, root == null ? null : Native.cstr(root));
    } finally {
      session.exit();
    }
  }

  /**
   * The functions the model may call: a JSON array of OpenAI-style definitions
   * ({@code [{"type": "function", "function": {"name", "description", "parameters"}}]};
   * "" or "[]": none), rendered into the template from the next reply on. The chat must
   * have room for the JSON ({@link #Chat(Session, int, int, int)}'s maxToolsBytes).
   * Replies are then parsed for calls ({@link #toolCalls()}). EmberException when the
   * model's template shows no tool-call syntax, or the tools are malformed.
   */
  public void setTools(String toolsJson) {
    setTools(toolsJson, false);
  }

  /**
   * {@link #setTools(String)}; grammar true also holds each call to its function's
   * parameter schema (the grammar {@link Model#toolGrammar} gives, whose {@link
   * Model#grammarBytes} the session needs), the text around calls free.
   */
  public void setTools(String toolsJson, boolean grammar) {
    byte[] json = toolsJson.getBytes(StandardCharsets.UTF_8);
    session.enter();
    try {
      Native.chatSetTools(handle(), json, grammar);
    } finally {
      session.exit();
    }
  }

  /**
   * Holds each call (from where the model opens one to where it ends) to a GBNF grammar
   * of its own (e.g. `ember grammar --tools`'s, or {@link Model#toolGrammar}'s), the text
   * around calls free; set the tools first. null: none.
   */
  public void setToolGrammar(@Nullable String gbnf) {
    byte[] text = gbnf == null ? null : gbnf.getBytes(StandardCharsets.UTF_8);
    session.enter();
    try {
      Native.chatSetToolGrammar(handle(), text);
    } finally {
      session.exit();
    }
  }

  /**
   * The calls the last reply made, in order (empty when it made none, or when a call did
   * not parse: then {@link #toolCallsError()} says why). Answer each with {@code
   * add("tool", result)}.
   */
  public List<ToolCall> toolCalls() {
    byte[][] fields;
    session.enter();
    try {
      fields = Native.chatToolCalls(handle());
    } finally {
      session.exit();
    }
    List<ToolCall> calls = new ArrayList<>(fields.length / 3);
    for (int i = 0; i + 2 < fields.length; i += 3) {
      calls.add(new ToolCall(Native.text(fields[i]), Native.text(fields[i + 1]),
                             Native.text(fields[i + 2])));
    }
    return calls;
  }

  /** Why the last reply's calls did not parse ("" when they did, or it made none). */
  public String toolCallsError() {
    session.enter();
    try {
      return Native.text(Native.chatToolCallsError(handle()));
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
