// SessionOptions.java: what a session is created with (ember_session_options).
package dev.ember;

import javax.annotation.Nullable;

/**
 * A session's options, set fluently: {@code new SessionOptions().context(256).threads(2)}.
 * Unset fields keep ember's defaults (ember_session_options_default).
 */
public final class SessionOptions {
  int context;
  int batch;
  int threads = 1;
  KvType kvType = KvType.F32;
  boolean allLogits;
  @Nullable String isa;
  boolean contextShift;
  int contextKeep;
  long grammarBytes;
  int draftMax;

  /** Positions the KV cache holds (0: the model's, if that fits in 4 GiB). */
  public SessionOptions context(int positions) {
    this.context = nonNegative(positions, "context");
    return this;
  }

  /** Tokens per prefill step (0: 64). */
  public SessionOptions batch(int tokens) {
    this.batch = nonNegative(tokens, "batch");
    return this;
  }

  /** Threads of the session's own pool (1: the calling thread alone). */
  public SessionOptions threads(int threads) {
    if (threads < 1) throw new IllegalArgumentException("ember: threads must be >= 1");
    this.threads = threads;
    return this;
  }

  public SessionOptions kvType(KvType type) {
    if (type == null) throw new NullPointerException("kvType");
    this.kvType = type;
    return this;
  }

  /** Keep a row of logits for every position of a prefill step ({@link Session#logitsRows}). */
  public SessionOptions allLogits(boolean all) {
    this.allLogits = all;
    return this;
  }

  /** The kernels' ISA tier ("native", "avx2", "neon", ...; null: $EMBER_ISA or native). */
  public SessionOptions isa(@Nullable String tier) {
    this.isa = tier;
    return this;
  }

  /** A full context is shifted (keeping {@code keep} positions), not an error. */
  public SessionOptions contextShift(boolean shift, int keep) {
    this.contextShift = shift;
    this.contextKeep = nonNegative(keep, "keep");
    return this;
  }

  /**
   * Arena bytes for a grammar ({@link Model#grammarBytes} tells what one needs); 0, the
   * default: none, and {@link Session#setGrammar} throws naming the bytes it needs.
   */
  public SessionOptions grammarBytes(long bytes) {
    if (bytes < 0) throw new IllegalArgumentException("ember: grammarBytes must be >= 0");
    this.grammarBytes = bytes;
    return this;
  }

  /**
   * Drafted tokens verified per pass at most (1 to 32) for speculative decoding ({@link
   * Session#setLookup}, {@link Session#setDraft}); 0, the default: none, and those throw.
   */
  public SessionOptions draftMax(int tokens) {
    this.draftMax = nonNegative(tokens, "draftMax");
    return this;
  }

  private static int nonNegative(int value, String name) {
    if (value < 0) throw new IllegalArgumentException("ember: " + name + " must be >= 0");
    return value;
  }
}
