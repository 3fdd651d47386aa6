// Model.java: a .ember model file, mapped read-only (ember_model_*).
package dev.ember;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * A model file, mapped read-only: its weights are used in place. Models may be shared by
 * any number of threads and sessions; a session keeps its model's memory alive, so a
 * model may be closed before its sessions. Close it once no thread uses it.
 */
public final class Model implements AutoCloseable {
  private volatile long handle;
  private final int vocabSize;

  private Model(long handle) {
    this.handle = handle;
    this.vocabSize = (int) Native.modelInfo(handle, 0);
  }

  /** Opens and verifies a model file; EmberException ("I/O error", ...) when it cannot. */
  public static Model open(String path) {
    return new Model(Native.modelOpen(Native.cstr(path)));
  }

  /**
   * The arena bytes a GBNF grammar (from rule "root") takes in a session of this model:
   * what {@link SessionOptions#grammarBytes} must be at least. Builds its tables; a
   * malformed grammar throws EmberException naming line and column.
   */
  public long grammarBytes(String gbnf) {
    return Native.grammarBytes(handle(), gbnf.getBytes(StandardCharsets.UTF_8), null);
  }

  /** The same for a JSON Schema's grammar (its text): {@link Session#setJsonSchema}. */
  public long jsonSchemaBytes(String schema) {
    return Native.jsonSchemaBytes(handle(), schema.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * The GBNF of one call to any of the tools (the JSON array {@link Chat#setTools} takes)
   * in the syntax of this model's chat template, each call's arguments held to its
   * function's parameter schema: what {@code setTools(tools, true)} sets; {@link
   * #grammarBytes} of it is the room a session needs. EmberException for malformed tools
   * or a template without tool-call syntax.
   */
  public String toolGrammar(String toolsJson) {
    return Native.text(Native.toolGrammar(handle(), toolsJson.getBytes(StandardCharsets.UTF_8)));
  }

  long handle() {
    long h = handle;
    if (h == 0) throw new IllegalStateException("ember: the model is closed");
    return h;
  }

  /** Releases this handle (sessions over the model keep it until they close). */
  @Override
  public synchronized void close() {
    long h = handle;
    handle = 0;
    if (h != 0) Native.modelFree(h);
  }

  /** Tokens in the vocabulary: the length of a row of logits. */
  public int vocabSize() {
    handle();
    return vocabSize;
  }

  /** The longest context the model was trained for. */
  public int maxContext() {
    return (int) Native.modelInfo(handle(), 1);
  }

  /** The beginning-of-text token, or -1. */
  public int bos() {
    return (int) Native.modelInfo(handle(), 2);
  }

  /** The end-of-text token, or -1. */
  public int eos() {
    return (int) Native.modelInfo(handle(), 3);
  }

  /** Whether the model holds a compiled chat template ({@link Chat} needs one). */
  public boolean hasChatTemplate() {
    return Native.modelInfo(handle(), 4) != 0;
  }

  /** Tokens of the model's baked prompt (0 if none): where its sessions start. */
  public long bakedTokens() {
    return Native.modelInfo(handle(), 5);
  }

  /** The values of an embedding model's vectors ({@link Session#embed}); 0: it has none. */
  public int embeddingDims() {
    return (int) Native.modelInfo(handle(), 6);
  }

  /** The outputs of the model's classification head (a reranker's: 1); 0 without one. */
  public int labels() {
    return (int) Native.modelInfo(handle(), 7);
  }

  /** The bytes {@code token} adds to the text after {@code previous} (-1: at the start). */
  public byte[] tokenBytes(int token, int previous) {
    return Native.detokenize(handle(), previous, new int[] {token});
  }

  /** The text of tokens (invalid UTF-8 replaced by U+FFFD). */
  public String detokenize(int[] tokens) {
    return Native.text(Native.detokenize(handle(), -1, tokens));
  }

  /**
   * Messages ({"role": ..., "content": ...} maps) as the model's chat template writes
   * them, with the assistant's prompt after them.
   */
  public String renderChat(List<Map<String, String>> messages) {
    byte[][] roles = new byte[messages.size()][];
    byte[][] contents = new byte[messages.size()][];
    for (int i = 0; i < roles.length; ++i) {
      roles[i] = Native.cstr(messages.get(i).get("role"));
      contents[i] = messages.get(i).get("content").getBytes(StandardCharsets.UTF_8);
    }
    return Native.text(Native.renderChat(handle(), roles, contents, true, -1));
  }
}
