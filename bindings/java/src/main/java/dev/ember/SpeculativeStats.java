// SpeculativeStats.java: what a session's speculative decoding did
// (ember_speculative_stats).
package dev.ember;

/**
 * What speculative decoding drafted and accepted, counted since the first {@link
 * Session#setLookup} or {@link Session#setDraft} (or the last reset): {@link
 * Session#speculativeStats}.
 */
public final class SpeculativeStats {
  public final long rounds; // the target's passes after a sampled token
  public final long verified; // of them, passes that verified drafted tokens
  public final long drafted; // tokens drafted
  public final long accepted; // drafted tokens accepted
  public final long draftPasses; // the draft model's forward passes

  SpeculativeStats(long[] v) {
    rounds = v[0];
    verified = v[1];
    drafted = v[2];
    accepted = v[3];
    draftPasses = v[4];
  }

  /** Accepted drafted tokens per drafted token (0 when none was drafted). */
  public double acceptance() {
    return drafted == 0 ? 0.0 : (double) accepted / drafted;
  }

  @Override
  public String toString() {
    return "rounds " + rounds + ", verified " + verified + ", drafted " + drafted
        + ", accepted " + accepted + ", draft passes " + draftPasses;
  }
}
