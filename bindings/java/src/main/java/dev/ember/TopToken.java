// TopToken.java: one of the likeliest next tokens, and how Session.topK finds them.
package dev.ember;

import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;

/** A candidate next token: its id, its text and its probability (softmax of logits). */
public final class TopToken {
  public final int id;
  public final String text;
  public final double probability;

  TopToken(int id, String text, double probability) {
    this.id = id;
    this.text = text;
    this.probability = probability;
  }

  /** The k likeliest tokens of logits, likeliest first (softmax over all of them). */
  static List<TopToken> top(FloatBuffer logits, int k, long modelHandle) {
    int n = logits.limit();
    k = Math.max(0, Math.min(k, n));
    int[] best = new int[k];
    int count = 0;
    float max = Float.NEGATIVE_INFINITY;
    for (int i = 0; i < n; ++i) {
      float value = logits.get(i);
      max = Math.max(max, value);
      // Insert after every equal value: ties keep the lower id first.
      int at = count;
      while (at > 0 && logits.get(best[at - 1]) < value) --at;
      if (at >= k) continue;
      System.arraycopy(best, at, best, at + 1, Math.min(count, k - 1) - at);
      best[at] = i;
      count = Math.min(count + 1, k);
    }
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += Math.exp((double) logits.get(i) - max);
    List<TopToken> out = new ArrayList<>(k);
    for (int i = 0; i < count; ++i) {
      int id = best[i];
      out.add(new TopToken(id, Native.text(Native.detokenize(modelHandle, -1, new int[] {id})),
                           Math.exp((double) logits.get(id) - max) / sum));
    }
    return out;
  }

  @Override
  public String toString() {
    return id + " '" + text + "' " + probability;
  }
}
