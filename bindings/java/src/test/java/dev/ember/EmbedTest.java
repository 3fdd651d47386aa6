// EmbedTest.java: embeddings and reranking equal to what `ember embed` and `ember rerank`
// print, on small encoders converted in the test (TestModels): named prompts and a
// reranker's instruction too.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbedTest {
  static final double TOLERANCE = 1e-6;
  /** Qwen3-Reranker's default instruction, which `ember convert --rerank qwen3` stores. */
  static final String DEFAULT_INSTRUCTION =
      "Given a web search query, retrieve relevant passages that answer the query";
  static final List<String> TEXTS =
      Arrays.asList("the first text", "another one, longer than the first", "x");

  /** The vectors `ember embed` prints, one JSON list a line, for TEXTS. */
  private static float[][] cliEmbed(Path model, String... flags) throws Exception {
    List<String> args = new ArrayList<>(Arrays.asList("embed", "-m", model.toString()));
    args.addAll(Arrays.asList(flags));
    for (String text : TEXTS) args.addAll(Arrays.asList("-p", text));
    String[] lines = Cli.run(args.toArray(new String[0])).trim().split("\n");
    float[][] out = new float[lines.length][];
    for (int i = 0; i < lines.length; ++i) {
      String list = lines[i].trim();
      String[] values = list.substring(1, list.length() - 1).split(",");
      out[i] = new float[values.length];
      for (int j = 0; j < values.length; ++j) out[i][j] = Float.parseFloat(values[j].trim());
    }
    return out;
  }

  /** The scores `ember rerank` prints ("score<TAB>index<TAB>document", index from 1). */
  private static Map<Integer, Double> cliRerank(Path model, String query, List<String> docs,
                                                String... flags) throws Exception {
    List<String> args = new ArrayList<>(
        Arrays.asList("rerank", "-m", model.toString(), "--query", query));
    args.addAll(Arrays.asList(flags));
    for (String doc : docs) args.addAll(Arrays.asList("-p", doc));
    Map<Integer, Double> out = new HashMap<>();
    for (String line : Cli.run(args.toArray(new String[0])).trim().split("\n")) {
      String[] fields = line.split("\t");
      out.put(Integer.parseInt(fields[1]) - 1, Double.parseDouble(fields[0]));
    }
    assertEquals(docs.size(), out.size());
    return out;
  }

  private static double norm(float[] v) {
    double sum = 0;
    for (float x : v) sum += (double) x * x;
    return Math.sqrt(sum);
  }

  private static void assertClose(float[][] expected, float[][] got) {
    assertEquals(expected.length, got.length);
    for (int i = 0; i < expected.length; ++i) {
      assertArrayEquals(expected[i], got[i], (float) TOLERANCE, "row " + i);
    }
  }

  @Test
  void embeddingsEqualTheCli(@TempDir Path dir) throws Exception {
    Path path = TestModels.encoder(dir, false);
    float[][] expected = cliEmbed(path);
    float[][] cut = cliEmbed(path, "--dims", "8", "--no-normalize");
    float[][] cutUnit = cliEmbed(path, "--dims", "8");
    float[][] pooled = cliEmbed(path, "--no-normalize");
    try (Model model = Model.open(path.toString())) {
      Session session = new Session(model, new SessionOptions().context(64));
      assertEquals(32, model.embeddingDims());
      assertEquals(0, model.labels());
      float[][] batch = session.embedBatch(TEXTS);
      assertEquals(3, batch.length);
      assertEquals(32, batch[0].length);
      assertClose(expected, batch);
      for (int i = 0; i < batch.length; ++i) {
        assertEquals(1.0, norm(batch[i]), 1e-5, "row " + i); // the model says Normalize
        // One text alone is the batch's row, bit for bit.
        assertArrayEquals(batch[i], session.embed(TEXTS.get(i)));
        assertArrayEquals(batch[i], session.embed(TEXTS.get(i), 0, null));
      }
      // dims keeps the leading values; normalize overrides the model's.
      assertClose(cut, session.embedBatch(TEXTS, 8, false));
      assertClose(cutUnit, session.embedBatch(TEXTS, 8, null));
      assertClose(pooled, session.embedBatch(TEXTS, 0, false));
      float[] unit = session.embed(TEXTS.get(0), 8, true);
      assertEquals(8, unit.length);
      assertEquals(1.0, norm(unit), 1e-5);
      assertArrayEquals(cutUnit[0], unit, (float) TOLERANCE);
      float[] raw = session.embed(TEXTS.get(0), 0, false);
      assertTrue(Math.abs(norm(raw) - 1) > 1e-3, "pooled, not scaled: " + norm(raw));
      for (int j = 0; j < 8; ++j) {
        assertEquals(raw[j] / norm(Arrays.copyOf(raw, 8)), unit[j], 1e-6);
      }
      assertEquals(0, session.embedBatch(Collections.<String>emptyList()).length);

      EmberException wide =
          assertThrows(EmberException.class, () -> session.embed("x", 33, null));
      assertEquals("invalid argument", wide.status());
      assertThrows(IllegalArgumentException.class, () -> session.embed("x", -1, null));
      StringBuilder longText = new StringBuilder();
      for (int i = 0; i < 40; ++i) longText.append("word ");
      EmberException full = assertThrows(EmberException.class,
          () -> session.embedBatch(Arrays.asList("fits", longText.toString())));
      assertEquals("out of range", full.status());
      assertTrue(full.getMessage().contains("text 1"), full.getMessage());
      // And the session goes on.
      assertArrayEquals(batch[2], session.embed(TEXTS.get(2)));
      session.close();
      assertThrows(IllegalStateException.class, () -> session.embed("x"));
    }
    try (Model plain = Model.open(Cli.MODEL);
         Session session = new Session(plain, new SessionOptions().context(64))) {
      assertEquals(0, plain.embeddingDims());
      assertEquals(0, plain.labels());
      EmberException logits = assertThrows(EmberException.class, () -> session.embed("x"));
      assertEquals("invalid argument", logits.status());
      assertTrue(logits.getMessage().contains("not embeddings"), logits.getMessage());
    }
  }

  @Test
  void rerankScoresEqualTheCli(@TempDir Path dir) throws Exception {
    Path path = TestModels.encoder(dir, true);
    String query = "where is the cat";
    List<String> docs = Arrays.asList("the cat sat", "a dog ran in the park", "nothing here",
                                      "the the the");
    Map<Integer, Double> expected = cliRerank(path, query, docs);
    try (Model model = Model.open(path.toString());
         Session session = new Session(model, new SessionOptions().context(64))) {
      assertEquals(1, model.labels());
      float[] scores = session.rerank(query, docs);
      assertEquals(docs.size(), scores.length);
      Set<Float> distinct = new HashSet<>();
      for (int i = 0; i < scores.length; ++i) {
        assertEquals(expected.get(i), scores[i], TOLERANCE, docs.get(i));
        distinct.add(scores[i]);
      }
      assertEquals(docs.size(), distinct.size()); // the documents are told apart
      // Each document scores alone as in the list.
      assertArrayEquals(new float[] {scores[1]},
                        session.rerank(query, Collections.singletonList(docs.get(1))));
      assertEquals(0, session.rerank(query, Collections.<String>emptyList()).length);
      // No instruction (null or "") is the default; a cross-encoder has no prompt for one.
      assertArrayEquals(scores, session.rerank(query, docs, null));
      assertArrayEquals(scores, session.rerank(query, docs, ""));
      EmberException task = assertThrows(EmberException.class,
          () -> session.rerank(query, docs, "find the cat"));
      assertEquals("invalid argument", task.status());
      assertTrue(task.getMessage().contains("instruction"), task.getMessage());
      assertArrayEquals(scores, session.rerank(query, docs)); // and the session goes on
    }
    Path embedder = TestModels.encoder(dir, false);
    try (Model model = Model.open(embedder.toString());
         Session session = new Session(model, new SessionOptions().context(64))) {
      EmberException head =
          assertThrows(EmberException.class, () -> session.rerank(query, docs));
      assertTrue(head.getMessage().contains("head of one output"), head.getMessage());
      assertNotEquals(0, model.embeddingDims());
    }
  }

  @Test
  void aNamedPromptGoesBeforeTheText(@TempDir Path dir) throws Exception {
    Path path = TestModels.promptedEncoder(dir);
    float[][] expected = cliEmbed(path, "--prompt-name", "query");
    float[][] cut = cliEmbed(path, "--prompt-name", "query", "--dims", "8", "--no-normalize");
    try (Model model = Model.open(path.toString());
         Session session = new Session(model, new SessionOptions().context(64))) {
      float[][] query = session.embedBatch(TEXTS, 0, null, "query");
      assertClose(expected, query);
      assertClose(cut, session.embedBatch(TEXTS, 8, false, "query"));
      float[][] byDefault = session.embedBatch(TEXTS); // the model's default: "document"
      for (int i = 0; i < TEXTS.size(); ++i) {
        String text = TEXTS.get(i);
        // The prompt is the text's start: the same as writing it out without a prompt.
        assertArrayEquals(query[i], session.embed(text, 0, null, "query"), "row " + i);
        assertArrayEquals(query[i], session.embed("query: " + text, 0, null, ""), "row " + i);
        assertArrayEquals(byDefault[i], session.embed("passage: " + text, 0, null, ""));
        assertArrayEquals(byDefault[i], session.embed(text, 0, null, null));
        assertArrayEquals(byDefault[i], session.embed(text, 0, null, "document"));
        assertFalse(Arrays.equals(query[i], byDefault[i]), "row " + i);
        assertFalse(Arrays.equals(byDefault[i], session.embed(text, 0, null, "")));
      }
      EmberException unknown = assertThrows(EmberException.class,
          () -> session.embed("cats", 0, null, "title"));
      assertTrue(unknown.getMessage().contains("'title'"), unknown.getMessage());
      assertThrows(EmberException.class,
          () -> session.embedBatch(TEXTS, 0, null, "title"));
      assertArrayEquals(query[0], session.embed(TEXTS.get(0), 0, null, "query"));
    }
    // A model without prompts: null and "" are none; a name throws.
    try (Model model = Model.open(TestModels.encoder(dir, false).toString());
         Session session = new Session(model, new SessionOptions().context(64))) {
      float[] plain = session.embed(TEXTS.get(0));
      assertArrayEquals(plain, session.embed(TEXTS.get(0), 0, null, ""));
      EmberException none = assertThrows(EmberException.class,
          () -> session.embed(TEXTS.get(0), 0, null, "query"));
      assertTrue(none.getMessage().contains("'query'"), none.getMessage());
    }
  }

  @Test
  void anInstructionGoesIntoARerankersPrompt(@TempDir Path dir) throws Exception {
    Path path = TestModels.promptedReranker(dir);
    String query = "where is the cat";
    List<String> docs = Arrays.asList("the cat sat", "a dog ran in the park", "nothing here");
    String task = "Find the passage that says where an animal is";
    Map<Integer, Double> expected = cliRerank(path, query, docs);
    Map<Integer, Double> instructed = cliRerank(path, query, docs, "--instruction", task);
    try (Model model = Model.open(path.toString());
         Session session = new Session(model, new SessionOptions().context(512))) {
      assertEquals(1, model.labels());
      float[] plain = session.rerank(query, docs);
      float[] told = session.rerank(query, docs, task);
      for (int i = 0; i < docs.size(); ++i) {
        assertEquals(expected.get(i), plain[i], TOLERANCE, docs.get(i));
        assertEquals(instructed.get(i), told[i], TOLERANCE, docs.get(i));
        assertNotEquals(plain[i], told[i], docs.get(i));
      }
      // null and "" are the model's default instruction, as if written out.
      assertArrayEquals(plain, session.rerank(query, docs, null));
      assertArrayEquals(plain, session.rerank(query, docs, ""));
      assertArrayEquals(plain, session.rerank(query, docs, DEFAULT_INSTRUCTION));
      assertArrayEquals(new float[] {told[2]},
                        session.rerank(query, Collections.singletonList(docs.get(2)), task));
    }
  }
}
