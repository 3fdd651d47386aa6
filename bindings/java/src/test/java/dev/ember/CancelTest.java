// CancelTest.java: Session.cancel() from the listener, from another thread, and before a
// generation; a chat reply too. Threads are joined, never slept on: nothing depends on timing.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class CancelTest {
  /** Greedy tokens and text of an uncancelled generation, for comparison. */
  private static List<Integer> greedyTokens(Session session, int[] prompt, int maxNew) {
    final List<Integer> tokens = new ArrayList<>();
    session.reset();
    session.generate(prompt, maxNew, (token, piece) -> tokens.add(token));
    session.reset();
    return tokens;
  }

  @Test
  void aCancelFromTheListenerStopsAtThatToken() {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(256))) {
      int[] prompt = session.tokenize(Cli.PROMPT);
      List<Integer> all = greedyTokens(session, prompt, 40);
      assertEquals(40, all.size());
      final List<Integer> tokens = new ArrayList<>();
      String text = session.generate(prompt, 40, (token, piece) -> {
        tokens.add(token);
        if (tokens.size() == 3) session.cancel(); // not refused: any thread, any time
        return true;
      });
      assertEquals(all.subList(0, 3), tokens);   // that token was the last
      assertEquals(session.detokenize(GenerateTest.toArray(tokens)), text); // what came so far
      // As a listener returning false: the tokens fed back are all but the last one.
      assertEquals(prompt.length + 2, session.position());
    }
  }

  @Test
  void aCancelFromAnotherThreadStopsAfterTheCurrentToken() throws Exception {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(256))) {
      int[] prompt = session.tokenize(Cli.PROMPT);
      List<Integer> all = greedyTokens(session, prompt, 40);
      final List<Integer> tokens = new ArrayList<>();
      final AtomicReference<Throwable> failed = new AtomicReference<>();
      String text = session.generate(prompt, 40, (token, piece) -> {
        tokens.add(token);
        if (tokens.size() == 3) {
          // Another thread cancels while this one is inside the generation (the owner
          // check does not apply to cancel); joined, so the cancel happens before the
          // listener returns, and the generation sees it at this token.
          Thread other = new Thread(() -> {
            try {
              session.cancel();
            } catch (Throwable t) {
              failed.set(t);
            }
          });
          other.start();
          try {
            other.join();
          } catch (InterruptedException e) {
            throw new AssertionError(e);
          }
        }
        return true;
      });
      assertNull(failed.get());
      assertEquals(all.subList(0, 3), tokens);
      assertEquals(session.detokenize(GenerateTest.toArray(tokens)), text);
      // The next generation starts uncancelled (the request was cleared) and goes on.
      String more = session.generate(new int[0], 10, null);
      assertFalse(more.isEmpty());
      assertEquals(prompt.length + 2 + 9, session.position()); // all but the last fed back
    }
  }

  @Test
  void aCancelBeforeAGenerationDoesNotAffectIt() {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(256))) {
      String whole = session.generate(Cli.PROMPT, 30);
      session.reset();
      session.cancel(); // no generation runs: cleared when the next one starts
      session.cancel();
      assertEquals(whole, session.generate(Cli.PROMPT, 30));
    }
  }

  @Test
  void aCancelStopsAChatReply() {
    try (Model model = Model.open(Cli.CHAT_MODEL)) {
      String whole;
      try (Session session = new Session(model, new SessionOptions().context(512));
           Chat chat = new Chat(session).system("You tell stories.")) {
        whole = chat.send("Tell me about Lily.", 30);
      }
      try (Session session = new Session(model, new SessionOptions().context(512));
           Chat chat = new Chat(session).system("You tell stories.")) {
        chat.add("user", "Tell me about Lily.");
        final StringBuilder streamed = new StringBuilder();
        String reply = chat.reply(30, piece -> {
          streamed.append(piece);
          session.cancel(); // at the first piece
        });
        assertFalse(reply.isEmpty());
        assertEquals(reply, streamed.toString());
        assertTrue(whole.startsWith(reply) && whole.length() > reply.length(), reply);
        int cancelledAt = chat.stats().generatedTokens;
        assertTrue(cancelledAt < 30, "generated " + cancelledAt);
        // Cleared when the next reply starts: it runs to its maxNew or the end of text.
        String second = chat.send("And then?", 10);
        assertFalse(second.isEmpty());
      }
    }
  }
}
