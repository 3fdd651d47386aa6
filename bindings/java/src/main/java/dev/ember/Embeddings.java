// Embeddings.java: what Session's embed, embedBatch and rerank run (ember_embed_batch,
// ember_rerank_instructed), each under the session's guard.
package dev.ember;

import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.annotation.Nullable;

/** The native calls behind {@link Session}'s embeddings and reranking. */
final class Embeddings {
  private Embeddings() {}

  /**
   * The vectors of texts, a row each: dims leading values (0: all the model's), normalize
   * null as the model says, promptName null the model's default prompt ("": none).
   */
  static float[][] embed(Session session, long modelHandle, List<String> texts, int dims,
                         @Nullable Boolean normalize, @Nullable String promptName) {
    if (dims < 0) throw new IllegalArgumentException("ember: dims must be >= 0");
    byte[][] data = Native.utf8(texts);
    byte[] name = promptName == null ? null : Native.cstr(promptName);
    session.enter();
    try {
      int width = dims > 0 ? dims : (int) Native.modelInfo(modelHandle, 6);
      float[][] out = new float[data.length][width];
      Native.embed(session.handle(), data, dims, normalize == null ? -1 : normalize ? 1 : 0,
                   name, width, out);
      return out;
    } finally {
      session.exit();
    }
  }

  /** The relevance of each document to the query; instruction null or "": the default. */
  static float[] rerank(Session session, String query, List<String> docs,
                        @Nullable String instruction) {
    byte[] task = instruction == null ? null : instruction.getBytes(StandardCharsets.UTF_8);
    byte[] q = query.getBytes(StandardCharsets.UTF_8);
    byte[][] data = Native.utf8(docs);
    float[] scores = new float[data.length];
    session.enter();
    try {
      Native.rerank(session.handle(), task, q, data, scores);
    } finally {
      session.exit();
    }
    return scores;
  }
}
