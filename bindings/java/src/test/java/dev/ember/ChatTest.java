// ChatTest.java: the chat template renders as `ember template` does; a chat replies.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChatTest {
  private static Map<String, String> message(String role, String content) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("role", role);
    m.put("content", content);
    return m;
  }

  @Test
  void theTemplateRendersAsTheCli(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("messages.json");
    Files.write(json, ("[{\"role\": \"system\", \"content\": \"You tell stories.\"}, "
                       + "{\"role\": \"user\", \"content\": \"Tell me about Lily.\"}]")
                          .getBytes(StandardCharsets.UTF_8));
    String rendered = Cli.run("template", "-m", Cli.CHAT_MODEL, "--messages", json.toString());
    List<Map<String, String>> messages = new ArrayList<>();
    messages.add(message("system", "You tell stories."));
    messages.add(message("user", "Tell me about Lily."));
    try (Model model = Model.open(Cli.CHAT_MODEL)) {
      assertEquals(rendered, model.renderChat(messages));
    }
    try (Model plain = Model.open(Cli.MODEL)) {
      EmberException none = assertThrows(EmberException.class, () -> plain.renderChat(messages));
      assertEquals("not found", none.status());
    }
  }

  @Test
  void aChatRepliesAndKeepsItsCache() {
    try (Model model = Model.open(Cli.CHAT_MODEL)) {
      Session session = new Session(model, new SessionOptions().context(512));
      Chat chat = new Chat(session).system("You tell stories.");
      final StringBuilder streamed = new StringBuilder();
      chat.add("user", "Tell me about Lily.");
      String reply = chat.reply(30, streamed::append);
      assertFalse(reply.isEmpty());
      assertEquals(reply, streamed.toString());
      Chat.Stats stats = chat.stats();
      assertTrue(stats.generatedTokens <= 30 && stats.generatedTokens > 0,
                 "generated " + stats.generatedTokens);
      assertEquals(0, stats.cachedTokens);
      String second = chat.send("And then?", 20);
      assertFalse(second.isEmpty());
      assertTrue(chat.stats().cachedTokens > 0); // the first turn stayed in the cache
      // A chat's calls hold its session as the session's own do.
      assertThrows(SessionBusyException.class,
          () -> chat.reply(5, piece -> session.tokenize("x")));
      session.close(); // closes the chat first
      assertThrows(IllegalStateException.class, () -> chat.send("Hello", 5));
      chat.close(); // already closed: nothing to do
    }
  }
}
