// ModelTest.java: models, tokens and logits against the CLI; errors and their messages.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelTest {
  @Test
  void versionIsTheHeaders() throws Exception {
    Path header = Paths.get(System.getenv("EMBER_SOURCE_DIR"), "runtime", "ember.h");
    StringBuilder expected = new StringBuilder();
    try (BufferedReader in = Files.newBufferedReader(header, StandardCharsets.UTF_8)) {
      for (String line; (line = in.readLine()) != null;) {
        for (String part : new String[] {"MAJOR", "MINOR", "PATCH"}) {
          String define = "#define EMBER_VERSION_" + part + " ";
          if (line.startsWith(define)) {
            if (expected.length() > 0) expected.append('.');
            expected.append(line.substring(define.length()).trim());
          }
        }
      }
    }
    assertEquals(expected.toString(), Ember.version());
  }

  @Test
  void modelProperties() {
    try (Model model = Model.open(Cli.MODEL); Model chat = Model.open(Cli.CHAT_MODEL)) {
      assertEquals(512, model.vocabSize());
      assertEquals(512, model.maxContext());
      assertEquals(1, model.bos());
      assertEquals(2, model.eos());
      assertFalse(model.hasChatTemplate());
      assertTrue(chat.hasChatTemplate());
      assertEquals(0, model.bakedTokens());
    }
  }

  @Test
  void tokenizeEqualsTheCliAndDetokenizeRoundTrips() throws Exception {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(64))) {
      String[] texts = {Cli.PROMPT, "Lily and Ben went to the park. \u00e9t\u00e9 \u4e2d", ""};
      for (String text : texts) {
        assertArrayEquals(Cli.tokenize(text), session.tokenize(text), text);
      }
      int[] ids = session.tokenize(Cli.PROMPT);
      assertArrayEquals(Arrays.copyOfRange(ids, 1, ids.length),
                        session.tokenize(Cli.PROMPT, 0, false));
      assertEquals(Cli.PROMPT, model.detokenize(ids));
      assertEquals(Cli.PROMPT, session.detokenize(ids));
      String unicode = "Lily saw a \u00e9t\u00e9 \u4e2d bird.";
      assertEquals(unicode, model.detokenize(session.tokenize(unicode)));
    }
  }

  @Test
  void logitsAreADirectViewEqualToTheCli(@TempDir Path dir) throws Exception {
    Path all = dir.resolve("all.npy");
    Cli.run("logits", "-m", Cli.MODEL, "-p", Cli.PROMPT, "--all", "-o", all.toString());
    float[] expected = Cli.readNpy(all);
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(64));
         Session rows = new Session(model, new SessionOptions().context(64).allLogits(true))) {
      int[] ids = session.tokenize(Cli.PROMPT);
      int vocab = model.vocabSize();
      assertEquals(ids.length * vocab, expected.length);
      assertThrows(IllegalStateException.class, session::logits); // nothing prefilled yet
      session.prefill(ids);
      FloatBuffer logits = session.logits();
      assertTrue(logits.isDirect());
      assertTrue(logits.isReadOnly());
      assertEquals(vocab, logits.remaining());
      float[] last = new float[vocab];
      logits.get(last);
      assertArrayEquals(Arrays.copyOfRange(expected, expected.length - vocab, expected.length),
                        last);
      // A view, not a copy: the next decode changes what the same buffer reads.
      logits.rewind();
      float before = logits.get(0);
      List<TopToken> top = session.topK(3);
      session.decode(top.get(0).id);
      assertTrue(logits.get(0) != before);

      rows.prefill(ids);
      FloatBuffer every = rows.logitsRows();
      assertTrue(every.isDirect());
      float[] got = new float[every.remaining()];
      every.get(got);
      assertArrayEquals(expected, got);
    }
  }

  @Test
  void topKIsTheLikeliest() {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(64))) {
      session.prefill(session.tokenize(Cli.PROMPT));
      List<TopToken> top = session.topK(5);
      assertEquals(5, top.size());
      assertEquals(",", top.get(0).text);
      FloatBuffer logits = session.logits();
      int argmax = 0;
      for (int i = 1; i < logits.limit(); ++i) {
        if (logits.get(i) > logits.get(argmax)) argmax = i;
      }
      assertEquals(argmax, top.get(0).id);
      for (int i = 1; i < top.size(); ++i) {
        assertTrue(top.get(i - 1).probability >= top.get(i).probability);
      }
    }
  }

  @Test
  void errorsCarryEmbersStatusAndMessage() {
    EmberException missing =
        assertThrows(EmberException.class, () -> Model.open("/nonexistent/model.ember"));
    assertEquals("I/O error", missing.status());
    assertEquals(4, missing.code());
    assertTrue(missing.getMessage().contains("/nonexistent/model.ember"), missing.getMessage());
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(16))) {
      EmberException bad = assertThrows(EmberException.class, () -> session.decode(100000));
      assertEquals("invalid argument", bad.status());
      assertFalse(bad.detail().isEmpty());
      EmberException full =
          assertThrows(EmberException.class, () -> session.generate(Cli.PROMPT, 100));
      assertEquals("out of range", full.status());
      EmberException nan = assertThrows(EmberException.class,
          () -> session.setSampler(new Sampler().temperature(Float.NaN)));
      assertTrue(nan.getMessage().contains("temperature"), nan.getMessage());
      EmberException huge = assertThrows(EmberException.class,
          () -> new Session(model, new SessionOptions().context(1 << 30)));
      assertTrue(huge.getMessage().contains("context"), huge.getMessage());
      assertThrows(IllegalArgumentException.class, () -> new SessionOptions().threads(0));
      assertThrows(IllegalArgumentException.class, () -> session.generate(Cli.PROMPT, -1));
    }
  }
}
