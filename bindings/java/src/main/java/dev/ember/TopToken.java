// TopToken.java: one of the likeliest next tokens (Session.topK).
package dev.ember;

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

  @Override
  public String toString() {
    return id + " '" + text + "' " + probability;
  }
}
