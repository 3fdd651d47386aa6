// Speculation.java: what Session's setLookup, setDraft, setDraftMax and speculativeStats
// run (ember_speculative.h), each under the session's guard.
package dev.ember;

import javax.annotation.Nullable;

/** The native calls behind {@link Session}'s speculative decoding. */
final class Speculation {
  private Speculation() {}

  static void setLookup(Session session, int ngram) {
    if (ngram < 0)
      throw new IllegalArgumentException("ember: ngram must be >= 0");
    session.enter();
    try {
      Native.setLookup(session.handle(), ngram);
    } finally {
      session.exit();
    }
  }

  /** Attaches draft (null: detaches) and holds it while attached. */
  static void setDraft(Session session, @Nullable Session draft) {
    long draftHandle = draft == null ? 0 : draft.handle();
    if (draft != null && draftHandle == 0) {
      throw new IllegalStateException("ember: the draft session is closed");
    }
    session.enter();
    try {
      session.draft = null; // a refused draft detaches the last one too, as in C
      Native.setDraft(session.handle(), draftHandle);
      session.draft = draft;
    } finally {
      session.exit();
    }
  }

  static void setDraftMax(Session session, int draftMax) {
    if (draftMax < 0)
      throw new IllegalArgumentException("ember: draftMax must be >= 0");
    session.enter();
    try {
      Native.setDraftMax(session.handle(), draftMax);
    } finally {
      session.exit();
    }
  }

  static SpeculativeStats stats(Session session, boolean reset) {
    long[] out = new long[5];
    session.enter();
    try {
      Native.speculativeStats(session.handle(), reset, out);
    } finally {
      session.exit();
    }
    return new SpeculativeStats(out);
  }
}
