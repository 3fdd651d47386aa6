// SpeculativeTest.java: speculative decoding (prompt lookup, a draft session) gives the
// tokens of plain greedy decoding, counts what it drafted, and what ember refuses throws.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpeculativeTest {
  // Said twice, so that prompt lookup finds n-grams from the start.
  private static final String PROMPT =
      "Once upon a time, there was a little girl named Lily. "
      + "Once upon a time, there was a little girl named Lily. ";
  private static final int MAX_NEW = 80;

  /** The ids greedy generation hands its listener. */
  private static int[] generate(Session session) {
    final List<Integer> ids = new ArrayList<>();
    session.generate(session.tokenize(PROMPT), MAX_NEW, (token, text) -> ids.add(token));
    return GenerateTest.toArray(ids);
  }

  private static int[] plain(Model model) {
    try (Session session = new Session(model, new SessionOptions().context(256))) {
      int[] ids = generate(session);
      assertEquals(MAX_NEW, ids.length);
      return ids;
    }
  }

  @Test
  void lookupGivesPlainGreedyTokens() {
    try (Model model = Model.open(Cli.MODEL);
         Session session =
             new Session(model, new SessionOptions().context(256).draftMax(6))) {
      int[] expected = plain(model);
      assertEquals(0, session.speculativeStats(false).rounds); // nothing set yet
      session.setLookup(3);
      assertArrayEquals(expected, generate(session));
      SpeculativeStats stats = session.speculativeStats(true);
      assertEquals(MAX_NEW - 1, stats.rounds + stats.accepted, stats.toString());
      assertTrue(stats.verified > 0 && stats.accepted > 0, stats.toString());
      assertTrue(stats.drafted >= stats.accepted, stats.toString());
      assertEquals(0, stats.draftPasses);
      assertEquals((double) stats.accepted / stats.drafted, stats.acceptance());
      // Read with reset: zeroed after.
      SpeculativeStats zero = session.speculativeStats(false);
      assertEquals(0, zero.rounds + zero.drafted + zero.accepted);
      assertEquals(0.0, zero.acceptance());
    }
  }

  @Test
  void aDraftSessionOfTheSameModelHasEveryDraftAccepted() {
    try (Model model = Model.open(Cli.MODEL);
         Session target =
             new Session(model, new SessionOptions().context(256).draftMax(6));
         Session draft = new Session(model, new SessionOptions().context(256))) {
      int[] expected = plain(model);
      target.setDraft(draft);
      assertSame(draft, target.draft); // held while attached
      target.setDraftMax(4);
      assertArrayEquals(expected, generate(target));
      SpeculativeStats stats = target.speculativeStats(false);
      assertTrue(stats.drafted > 0, stats.toString());
      assertEquals(stats.drafted, stats.accepted);
      assertEquals(1.0, stats.acceptance());
      assertTrue(stats.draftPasses > 0, stats.toString());
      assertEquals(MAX_NEW - 1, stats.rounds + stats.accepted);
      target.setDraft(null);
      assertNull(target.draft);
      target.reset();
      assertArrayEquals(expected, generate(target)); // plain again
      assertEquals(stats.draftPasses, target.speculativeStats(false).draftPasses);
    }
  }

  @Test
  void whatEmberRefusesThrows(@TempDir Path dir) throws Exception {
    try (
        Model model = Model.open(Cli.MODEL);
        Session plain = new Session(model, new SessionOptions().context(64));
        Session target = new Session(model, new SessionOptions().context(64).draftMax(4));
        Session good = new Session(model, new SessionOptions().context(64));
        Model otherModel = Model.open(TestModels.toolsModel(dir).toString());
        Session other = new Session(otherModel, new SessionOptions().context(64))) {
      EmberException e = assertThrows(EmberException.class, () -> plain.setLookup(3));
      assertTrue(e.getMessage().contains("draft_max"), e.getMessage());
      assertEquals("invalid argument", e.status());
      e = assertThrows(EmberException.class, () -> plain.setDraft(good));
      assertTrue(e.getMessage().contains("draft_max"), e.getMessage());
      assertNull(plain.draft);
      assertThrows(
          IllegalArgumentException.class, () -> new SessionOptions().draftMax(-1));
      assertThrows(IllegalArgumentException.class, () -> target.setLookup(-1));
      e = assertThrows(EmberException.class, () -> target.setDraftMax(5));
      assertTrue(e.getMessage().contains("1 to 4"), e.getMessage());
      assertThrows(EmberException.class, () -> target.setDraft(target));
      // Another vocabulary (a random Llama of 300 tokens against stories260K's 512).
      target.setDraft(good);
      e = assertThrows(EmberException.class, () -> target.setDraft(other));
      assertTrue(e.getMessage().contains("300"), e.getMessage());
      assertNull(target.draft); // a refusal detaches the last draft, as in C
      Session closed = new Session(model, new SessionOptions().context(64));
      closed.close();
      assertThrows(IllegalStateException.class, () -> target.setDraft(closed));
    }
  }
}
