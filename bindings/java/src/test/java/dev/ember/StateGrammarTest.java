// StateGrammarTest.java: saved states continue identically; grammars hold the text.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class StateGrammarTest {
  @Test
  void aSavedStateContinuesAsTheSessionWould() {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(128));
         Session other = new Session(model, new SessionOptions().context(128));
         Session half = new Session(model, new SessionOptions().context(128).kvType(KvType.F16))) {
      Sampler sampler = new Sampler().temperature(0.8f).seed(3);
      session.setSampler(sampler);
      session.prefill(session.tokenize(Cli.PROMPT));
      byte[] state = session.saveState();
      assertTrue(state.length > 0);
      String first = session.generate(new int[0], 30, null);
      other.setSampler(sampler);
      other.restoreState(state);
      assertEquals(session.tokenize(Cli.PROMPT).length, other.position());
      assertEquals(first, other.generate(new int[0], 30, null));
      // And again in the same session, back where it was.
      session.restoreState(state);
      assertEquals(first, session.generate(new int[0], 30, null));
      byte[] damaged = state.clone();
      damaged[damaged.length / 2] ^= (byte) 0xFF;
      assertThrows(EmberException.class, () -> other.restoreState(damaged));
      // f32 rows restore into an f16 cache; f16 rows into an f32 one do not.
      half.restoreState(state);
      half.prefill(new int[] {400});
      EmberException refused =
          assertThrows(EmberException.class, () -> other.restoreState(half.saveState()));
      assertTrue(refused.getMessage().contains("f16"), refused.getMessage());
    }
  }

  @Test
  void aGrammarHoldsGeneration() {
    String gbnf = "root ::= (\"yes\" | \"no\") \" \" [a-z]{1,3} \".\"";
    try (Model model = Model.open(Cli.MODEL);
         Session none = new Session(model, new SessionOptions().context(64));
         Session session = new Session(model,
             new SessionOptions().context(64).grammarBytes(model.grammarBytes(gbnf)))) {
      EmberException room = assertThrows(EmberException.class, () -> none.setGrammar(gbnf));
      assertTrue(room.getMessage().contains("planned 0"), room.getMessage());
      assertTrue(session.arenaBytes() >= none.arenaBytes() + model.grammarBytes(gbnf));
      session.setGrammar(gbnf);
      String text = session.generate(Cli.PROMPT, 30);
      assertTrue(text.matches("(yes|no) [a-z]{1,3}\\."), text);
      assertTrue(session.grammarComplete());
      EmberException bad =
          assertThrows(EmberException.class, () -> session.setGrammar("root ::= ("));
      assertTrue(bad.getMessage().contains("line 1, column"), bad.getMessage());
      assertEquals("invalid argument", bad.status());
      session.setGrammar(null); // none: free text again
      session.reset();
      assertTrue(session.generate(Cli.PROMPT, 20).length() > 10);
    }
  }
}
