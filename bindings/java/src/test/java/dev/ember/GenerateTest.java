// GenerateTest.java: generation against `ember run`, streaming, stopping, callbacks that throw.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class GenerateTest {
  @ParameterizedTest
  @EnumSource(KvType.class)
  void greedyGenerateEqualsTheCli(KvType kvType) throws Exception {
    String expected = Cli.run("run", "-m", Cli.MODEL, "-p", Cli.PROMPT, "-n", "60", "--temp",
                              "0", "--kv-type", kvType.name().toLowerCase());
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(128).kvType(kvType))) {
      String text = session.generate(Cli.PROMPT, 60);
      assertEquals(expected, Cli.PROMPT + text + "\n");
      // The prompt and the tokens fed back: all but the last one sampled.
      assertEquals(session.tokenize(Cli.PROMPT).length + 59, session.position());
    }
  }

  @Test
  void streamedPiecesMakeTheGeneratedText() {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(256))) {
      Sampler sampler = new Sampler().temperature(0.9f).topK(40).seed(7);
      session.setSampler(sampler);
      String whole = session.generate(Cli.PROMPT, 100);
      session.reset();
      session.setSampler(sampler);
      final StringBuilder joined = new StringBuilder();
      final List<String> pieces = new ArrayList<>();
      String returned = session.generate(Cli.PROMPT, 100, piece -> {
        pieces.add(piece);
        joined.append(piece);
      });
      assertTrue(pieces.size() > 10, "pieces: " + pieces.size());
      assertEquals(whole, joined.toString());
      assertEquals(whole, returned);
    }
  }

  @Test
  void aListenerStopsGenerationAndSeesEachToken() {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(256))) {
      final List<Integer> tokens = new ArrayList<>();
      int[] prompt = session.tokenize(Cli.PROMPT);
      String text = session.generate(prompt, 200, (token, piece) -> {
        tokens.add(token);
        // The token's logits are readable from the callback (a view, no copy).
        assertEquals(model.vocabSize(), session.logits().remaining());
        return tokens.size() < 5;
      });
      assertEquals(5, tokens.size());
      assertEquals(session.detokenize(toArray(tokens)), text);
      assertTrue(session.position() < prompt.length + 200);
    }
  }

  @Test
  void anExceptionInTheCallbackStopsGenerationAndIsRethrown() {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(256))) {
      final IllegalArgumentException thrown = new IllegalArgumentException("from the callback");
      final int[] calls = {0};
      IllegalArgumentException caught = assertThrows(IllegalArgumentException.class,
          () -> session.generate(session.tokenize(Cli.PROMPT), 100, (token, piece) -> {
            if (++calls[0] == 3) throw thrown;
            return true;
          }));
      assertSame(thrown, caught);
      assertEquals(3, calls[0]); // no call after the exception
      // Calling the generating session from its callback is refused, and rethrown too.
      session.reset();
      assertThrows(SessionBusyException.class,
          () -> session.generate(Cli.PROMPT, 10, piece -> session.reset()));
      session.reset(); // usable again
      assertTrue(!session.generate(Cli.PROMPT, 5).isEmpty());
    }
  }

  @Test
  void stopStringsEndTheTextAndSampleIsTheSamplers() {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(128))) {
      String whole = session.generate(Cli.PROMPT, 60);
      int at = whole.indexOf("Lily");
      assertTrue(at > 0, whole);
      session.reset();
      session.setSampler(new Sampler().stop("Lily", "\u00e9t\u00e9"));
      assertEquals(whole.substring(0, at), session.generate(Cli.PROMPT, 60));
      // Greedy sample: the first of topK.
      session.reset();
      session.prefill(session.tokenize(Cli.PROMPT));
      assertEquals(session.topK(1).get(0).id, session.sample());
      // More than 16 stop strings: refused, and the old sampler stays.
      String[] many = new String[17];
      for (int i = 0; i < many.length; ++i) many[i] = "s" + i;
      assertThrows(EmberException.class, () -> session.setSampler(new Sampler().stop(many)));
    }
  }

  static int[] toArray(List<Integer> values) {
    int[] out = new int[values.size()];
    for (int i = 0; i < out.length; ++i) out[i] = values.get(i);
    return out;
  }
}
