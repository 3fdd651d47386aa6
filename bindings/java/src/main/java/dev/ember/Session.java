// Session.java: a model's running state, in one arena (ember_session_*).
package dev.ember;

import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import javax.annotation.Nullable;

/**
 * A model's running state: its KV cache and buffers, in one arena sized and allocated
 * when it is created; nothing it computes afterwards allocates natively.
 *
 * <p>Threads: a session is used by one thread at a time. A call while another thread is
 * inside one of its calls throws {@link SessionBusyException} (it does not wait), as does
 * a call from inside its own generation's callback. Use one session per thread; models
 * are shared freely.
 *
 * <p>{@link #cancel()} is not held to that rule: any thread may call it at any time, and
 * it stops a running generate or chat reply after its current token.
 *
 * <p>Close it ({@code try}-with-resources): its arena is native memory the garbage
 * collector does not see. After close, every call throws IllegalStateException.
 */
public final class Session implements AutoCloseable {
  private final Model model;
  private final long modelHandle; // valid while the session is: it keeps its model alive
  private final int vocabSize;
  private final long arenaBytes;
  private final AtomicReference<Thread> user = new AtomicReference<>();
  private final List<Chat> chats = new ArrayList<>();
  private volatile boolean cancelled; // set by cancel(), cleared as a generation starts
  private long handle;
  @Nullable Session draft; // attached by setDraft (Speculation): held while attached

  public Session(Model model) {
    this(model, new SessionOptions());
  }

  public Session(Model model, SessionOptions options) {
    this.model = model;
    this.modelHandle = model.handle();
    this.vocabSize = model.vocabSize();
    long[] arena = new long[1];
    byte[] isa = options.isa == null ? null : Native.cstr(options.isa);
    this.handle = Native.sessionCreate(modelHandle, options.context, options.batch,
        options.kvType.code, options.allLogits, isa, options.contextShift,
        options.contextKeep, options.threads, options.grammarBytes, options.draftMax,
        arena);
    this.arenaBytes = arena[0];
  }

  /** Takes the session for the calling thread; throws if busy or closed. */
  void enter() {
    Thread me = Thread.currentThread();
    if (!user.compareAndSet(null, me)) {
      throw new SessionBusyException(user.get() == me
          ? "ember: the session is generating: its callback must not call it"
          : "ember: the session is in use by another thread: use one session per thread");
    }
    if (handle == 0) {
      user.set(null);
      throw new IllegalStateException("ember: the session is closed");
    }
  }

  void exit() {
    user.set(null);
  }

  /**
   * Stops the session's running {@link #generate} or {@link Chat#reply} after its current
   * token: that token still reaches the listener and the text, then the call returns what
   * was generated so far, as when a listener returns false (no exception). Any thread may
   * call it at any time, the generation's own listener included; it never throws and
   * never waits. The request holds until the next generate or reply of this session
   * starts, which clears it: a cancel made while no generation runs, or before one has
   * started, has no effect on it. A generation sees the request after each token, once
   * its listener has returned: a cancel from the listener, or one that happened before
   * the listener returned (a thread it joined), ends the generation at that token; one
   * from another thread at any other moment ends it at the token being computed. A
   * prompt's prefill runs to its end; the first token then ends it. prefill and decode
   * are not cancelled.
   */
  public void cancel() {
    cancelled = true;
  }

  /** Whether cancel() was called since the running generation started. */
  boolean cancelled() {
    return cancelled;
  }

  /** A generation's sink; clears the cancel request. With the guard held by the caller. */
  Generation startGeneration(@Nullable TokenListener listener) {
    cancelled = false;
    return new Generation(listener, this);
  }

  /** The handle, with the guard held by the caller. */
  long handle() {
    return handle;
  }

  void adopt(Chat chat) {
    chats.add(chat);
  }

  void forget(Chat chat) {
    chats.remove(chat);
  }

  /** Frees the session, its chats and its arena: its logits buffers must not be read after. */
  @Override
  public void close() {
    Thread me = Thread.currentThread();
    if (!user.compareAndSet(null, me)) {
      throw new SessionBusyException("ember: the session is in use: it cannot close now");
    }
    try {
      if (handle != 0) {
        for (Chat chat : new ArrayList<>(chats)) chat.closeHeld();
        Native.sessionFree(handle);
        handle = 0;
        draft = null;
      }
    } finally {
      user.set(null);
    }
  }

  public Model model() {
    return model;
  }

  /** The bytes of the session's arena: all the native memory it computes with. */
  public long arenaBytes() {
    return arenaBytes;
  }

  /** Positions of the context in use. */
  public long position() {
    enter();
    try {
      return Native.sessionPosition(handle);
    } finally {
      exit();
    }
  }

  /** Forgets the context: the next prefill starts at position 0. */
  public void reset() {
    enter();
    try {
      Native.sessionReset(handle);
    } finally {
      exit();
    }
  }

  /** Token ids of text, BOS first as the model's tokenizer says. */
  public int[] tokenize(String text) {
    return tokenize(text, -1, false);
  }

  /**
   * Token ids of text. addBos: -1 as the model says, 0 no, 1 yes; parseSpecial: control
   * tokens written in the text (as chat templates write them) become their ids.
   */
  public int[] tokenize(String text, int addBos, boolean parseSpecial) {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    enter();
    try {
      return Native.tokenize(handle, bytes, addBos, parseSpecial);
    } finally {
      exit();
    }
  }

  /** The text of tokens ({@link Model#detokenize}); callable from a generation callback. */
  public String detokenize(int[] tokens) {
    return Native.text(Native.detokenize(modelHandleForRead(), -1, tokens));
  }

  private long modelHandleForRead() {
    if (handle == 0) throw new IllegalStateException("ember: the session is closed");
    return modelHandle;
  }

  /** Runs the model over tokens at the current position and advances it. */
  public void prefill(int[] tokens) {
    enter();
    try {
      Native.prefill(handle, tokens);
    } finally {
      exit();
    }
  }

  /** Runs the model over one token at the current position and advances it. */
  public void decode(int token) {
    enter();
    try {
      Native.decode(handle, token);
    } finally {
      exit();
    }
  }

  /**
   * The last position's logits (vocabSize floats): a read-only direct buffer over the
   * session's arena, not a copy. The next prefill, decode or generate overwrites them
   * (copy with {@code get(float[])} to keep them), and after close the buffer must not be
   * read. Readable from a generation callback (the token's logits). IllegalStateException
   * before the first prefill.
   */
  public FloatBuffer logits() {
    return logitsBuffer(false);
  }

  /**
   * With {@link SessionOptions#allLogits}: every row of the last prefill step, one after
   * the other (rows x vocabSize floats), as {@link #logits()} a view of the arena.
   */
  public FloatBuffer logitsRows() {
    return logitsBuffer(true);
  }

  private FloatBuffer logitsBuffer(boolean all) {
    boolean held = enterForRead();
    try {
      java.nio.ByteBuffer bytes = Native.logits(handle, vocabSize, all);
      if (bytes == null) throw new IllegalStateException("ember: no logits yet: prefill first");
      return bytes.asReadOnlyBuffer().order(ByteOrder.nativeOrder()).asFloatBuffer();
    } finally {
      if (held) exit();
    }
  }

  /** Like enter(), but the generating thread (inside its callback) may read too. */
  private boolean enterForRead() {
    if (user.get() == Thread.currentThread()) {
      if (handle == 0) throw new IllegalStateException("ember: the session is closed");
      return false;
    }
    enter();
    return true;
  }

  /** The k likeliest next tokens, likeliest first (softmax over all the logits). */
  public List<TopToken> topK(int k) {
    return TopToken.top(logits(), k, modelHandle);
  }

  /** How sample and generate pick tokens; refused values keep the previous sampler. */
  public void setSampler(Sampler sampler) {
    float[] floats = {sampler.temperature, sampler.topP, sampler.minP, sampler.repeatPenalty,
                      sampler.frequencyPenalty, sampler.presencePenalty};
    int[] ints = {sampler.topK, sampler.repeatLastN};
    byte[][] stop = new byte[sampler.stop.size()][];
    for (int i = 0; i < stop.length; ++i) stop[i] = Native.cstr(sampler.stop.get(i));
    enter();
    try {
      Native.setSampler(handle, floats, ints, sampler.seed, stop);
    } finally {
      exit();
    }
  }

  /** A token drawn from the last position's logits by the session's sampler. */
  public int sample() {
    enter();
    try {
      return Native.sample(handle);
    } finally {
      exit();
    }
  }

  /** Holds every later generation to a GBNF grammar (null: none), from rule "root". */
  public void setGrammar(@Nullable String gbnf) {
    setGrammar(gbnf, null);
  }

  /** root null: "root". A malformed grammar throws EmberException naming line and column. */
  public void setGrammar(@Nullable String gbnf, @Nullable String root) {
    byte[] text = gbnf == null ? null : gbnf.getBytes(StandardCharsets.UTF_8);
    enter();
    try {
      Native.setGrammar(handle, text, root == null ? null : Native.cstr(root));
    } finally {
      exit();
    }
  }

  /**
   * Holds every later generation to JSON the schema accepts (a JSON Schema's text; null:
   * no grammar), converted to GBNF by ember. Malformed JSON throws EmberException naming
   * the byte; a keyword ember does not support, naming it. Room for it: {@link
   * Model#jsonSchemaBytes}.
   */
  public void setJsonSchema(@Nullable String schema) {
    byte[] text = schema == null ? null : schema.getBytes(StandardCharsets.UTF_8);
    enter();
    try {
      Native.setJsonSchema(handle, text);
    } finally {
      exit();
    }
  }

  /** Whether the last generation's text is a whole sentence of the grammar. */
  public boolean grammarComplete() {
    enter();
    try {
      return Native.grammarComplete(handle);
    } finally {
      exit();
    }
  }

  /**
   * Speculative decoding by prompt lookup, n-grams of up to {@code ngram} tokens (1 to 8;
   * 0: off): generate and chat replies draft what followed them in the context and verify
   * it in one pass (greedy text is plain decoding's). Needs {@link
   * SessionOptions#draftMax}.
   */
  public void setLookup(int ngram) {
    Speculation.setLookup(this, ngram);
  }

  /**
   * Drafts with a session over a smaller model with the same vocabulary (null detaches),
   * held by this one while attached: it must serve nothing else meanwhile, and close
   * after. Another vocabulary throws EmberException naming the difference (and detaches
   * the last).
   */
  public void setDraft(@Nullable Session draftOrNull) {
    Speculation.setDraft(this, draftOrNull);
  }

  /**
   * Drafted tokens per pass at most: 1 to {@link SessionOptions#draftMax} (the default).
   */
  public void setDraftMax(int draftMax) {
    Speculation.setDraftMax(this, draftMax);
  }

  /** What speculative decoding drafted and accepted; reset zeroes the counts after. */
  public SpeculativeStats speculativeStats(boolean reset) {
    return Speculation.stats(this, reset);
  }

  /** The session's state: position, KV cache rows, tokens, the sampler's generator. */
  public byte[] saveState() {
    enter();
    try {
      return Native.saveState(handle);
    } finally {
      exit();
    }
  }

  /** Restores a saved state (a damaged or foreign one throws, the session unchanged). */
  public void restoreState(byte[] state) {
    enter();
    try {
      Native.restoreState(handle, state);
    } finally {
      exit();
    }
  }

  /**
   * An embedding model's vector of the text ({@link Model#embeddingDims} floats), pooled
   * and scaled as the model says, after its default prompt if it has one. Each text runs
   * from position 0: the session's context bounds its tokens. A model that puts out
   * logits throws EmberException.
   */
  public float[] embed(String text) {
    return embed(text, 0, null, null);
  }

  /**
   * {@link #embed(String)}'s leading dims values (0: all; more than the model's throws),
   * scaled to unit length if normalize, left as pooled if not (null: as the model says).
   */
  public float[] embed(String text, int dims, @Nullable Boolean normalize) {
    return embed(text, dims, normalize, null);
  }

  /**
   * {@link #embed(String, int, Boolean)} after the named prompt (sentence-transformers'
   * prompt_name, e.g. "query"): null the model's default, "" none, unknown: EmberException.
   */
  public float[] embed(String text, int dims, @Nullable Boolean normalize,
                       @Nullable String promptName) {
    return embedBatch(Collections.singletonList(text), dims, normalize, promptName)[0];
  }

  /** The vectors of texts, a row each, as {@link #embed(String)} makes them. */
  public float[][] embedBatch(List<String> texts) {
    return embedBatch(texts, 0, null, null);
  }

  /** The vectors of texts, a row each, as {@link #embed(String, int, Boolean)} makes them. */
  public float[][] embedBatch(List<String> texts, int dims, @Nullable Boolean normalize) {
    return embedBatch(texts, dims, normalize, null);
  }

  /** The vectors of texts, a row each, as {@link #embed(String, int, Boolean, String)}. */
  public float[][] embedBatch(List<String> texts, int dims, @Nullable Boolean normalize,
                              @Nullable String promptName) {
    return Embeddings.embed(this, modelHandle, texts, dims, normalize, promptName);
  }

  /**
   * A reranker's ({@link Model#labels} 1: a cross-encoder, or Qwen3-Reranker) relevance of
   * each document to the query, in the documents' order: logits, higher is more relevant.
   */
  public float[] rerank(String query, List<String> docs) {
    return rerank(query, docs, null);
  }

  /**
   * {@link #rerank(String, List)} with the task's instruction in a reranker's prompt
   * (Qwen3-Reranker, `ember convert --rerank qwen3`; null or "": the model's default). One
   * to a reranker without such a prompt (a cross-encoder) throws EmberException.
   */
  public float[] rerank(String query, List<String> docs, @Nullable String instruction) {
    return Embeddings.rerank(this, query, docs, instruction);
  }

  /** Prefills the prompt's tokens and generates up to maxNew; returns their text. */
  public String generate(String prompt, int maxNew) {
    return generate(tokenize(prompt), maxNew, null);
  }

  /** {@link #generate(String, int)}, handing {@code onText} the text as it comes. */
  public String generate(String prompt, int maxNew, @Nullable Consumer<String> onText) {
    return generate(tokenize(prompt), maxNew, listenerOf(onText));
  }

  /**
   * Prefills {@code prompt} (empty: go on from the last logits, as after restoreState)
   * and generates up to maxNew tokens with the session's sampler, calling the listener
   * (may be null) per token. Stops at the end of text, a stop string, when the listener
   * returns false or after {@link #cancel()}; EmberException when the context fills.
   * Returns the text.
   */
  public String generate(int[] prompt, int maxNew, @Nullable TokenListener listener) {
    checkMaxNew(maxNew);
    Generation sink;
    enter();
    try {
      sink = startGeneration(listener);
      Native.generate(handle, prompt, maxNew, sink, sink.scratch);
    } finally {
      exit();
    }
    sink.finish();
    return sink.text();
  }

  static void checkMaxNew(int maxNew) {
    if (maxNew < 0) throw new IllegalArgumentException("ember: maxNew must be >= 0");
  }

  @Nullable
  static TokenListener listenerOf(final @Nullable Consumer<String> onText) {
    if (onText == null) return null;
    return new TokenListener() {
      @Override
      public boolean onToken(int token, String text) {
        if (!text.isEmpty()) onText.accept(text);
        return true;
      }
    };
  }
}
