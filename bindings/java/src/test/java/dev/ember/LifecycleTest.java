// LifecycleTest.java: close semantics, one thread per session, sessions on threads, leaks.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class LifecycleTest {
  @Test
  void closedHandlesRefuseEveryCall() {
    Model model = Model.open(Cli.MODEL);
    Session session = new Session(model, new SessionOptions().context(16));
    model.close(); // the session keeps the model's memory alive
    assertThrows(IllegalStateException.class, model::vocabSize);
    assertThrows(IllegalStateException.class, () -> model.detokenize(new int[] {1}));
    assertThrows(IllegalStateException.class, () -> new Session(model));
    model.close(); // twice: nothing
    session.prefill(session.tokenize(Cli.PROMPT)); // still usable
    assertEquals(",", session.topK(1).get(0).text);
    assertEquals(Cli.PROMPT, session.detokenize(session.tokenize(Cli.PROMPT)));
    session.close();
    session.close();
    assertThrows(IllegalStateException.class, () -> session.prefill(new int[] {1}));
    assertThrows(IllegalStateException.class, session::logits);
    assertThrows(IllegalStateException.class, () -> session.tokenize("x"));
    assertThrows(IllegalStateException.class, () -> session.detokenize(new int[] {1}));
    assertThrows(IllegalStateException.class, session::saveState);
  }

  /** While one thread generates (held inside its callback), another is refused. */
  @Test
  void aSessionUsedByASecondThreadThrows() throws Exception {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(256))) {
      final CountDownLatch generating = new CountDownLatch(1);
      final CountDownLatch tried = new CountDownLatch(1);
      final AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread worker = new Thread(() -> {
        try {
          session.generate(session.tokenize(Cli.PROMPT), 20, (token, text) -> {
            generating.countDown();
            try {
              tried.await();
            } catch (InterruptedException e) {
              throw new IllegalStateException(e);
            }
            return true;
          });
        } catch (Throwable t) {
          failure.set(t);
        }
      });
      worker.start();
      generating.await();
      assertThrows(SessionBusyException.class, () -> session.tokenize(Cli.PROMPT));
      assertThrows(SessionBusyException.class, () -> session.decode(1));
      assertThrows(SessionBusyException.class, session::close);
      tried.countDown();
      worker.join();
      assertNull(failure.get());
      assertTrue(session.position() > 0); // free again, and the generation went through
    }
  }

  @Test
  void sessionsOnThreadsGiveWhatOneThreadGives() throws Exception {
    try (Model model = Model.open(Cli.MODEL)) {
      final String expected;
      try (Session one = new Session(model, new SessionOptions().context(128))) {
        expected = one.generate(Cli.PROMPT, 40);
      }
      final String[] results = new String[4];
      Thread[] threads = new Thread[results.length];
      for (int i = 0; i < threads.length; ++i) {
        final int index = i;
        threads[i] = new Thread(() -> {
          try (Session s = new Session(model, new SessionOptions().context(128))) {
            results[index] = s.generate(Cli.PROMPT, 40);
          }
        });
        threads[i].start();
      }
      for (Thread t : threads) t.join();
      assertArrayEquals(new String[] {expected, expected, expected, expected}, results);
      try (Session two = new Session(model, new SessionOptions().context(128).threads(2))) {
        assertEquals(expected, two.generate(Cli.PROMPT, 40));
      }
    }
  }

  private static long rssBytes() throws IOException {
    String statm = new String(Files.readAllBytes(Paths.get("/proc/self/statm")),
                              StandardCharsets.US_ASCII);
    return Long.parseLong(statm.trim().split("\\s+")[1]) * 4096;
  }

  private static long lifetime() {
    try (Model m = Model.open(Cli.CHAT_MODEL);
         Session s = new Session(m, new SessionOptions().context(64))) {
      s.prefill(s.tokenize(Cli.PROMPT));
      assertEquals(512, s.logits().remaining());
      new Chat(s).system("Tell a story."); // left open: closing the session frees it
      return s.arenaBytes();
    }
  }

  /** A thousand models, sessions and chats created and closed: RSS stays bounded. */
  @Test
  void aThousandLifetimesDoNotLeak() throws IOException {
    long arena = 0;
    for (int i = 0; i < 300; ++i) arena = lifetime(); // the JIT and the heap settle
    System.gc();
    long before = rssBytes();
    for (int i = 0; i < 1000; ++i) lifetime();
    System.gc();
    long grown = rssBytes() - before;
    // A leaked arena each time would be 1,000 of them (240 MB for stories260K), a leaked
    // model or chat as much; the JVM's heap is capped by java_test's -Xmx, and its
    // growth after the warm-up stays within a few MB.
    System.out.println("[ember] java: RSS grew " + grown + " bytes over 1,000 lifetimes (an arena: "
                       + arena + " bytes)");
    assertTrue(grown < 16 << 20, "RSS grew " + grown + " bytes; an arena is " + arena);
  }
}
