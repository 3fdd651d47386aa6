// ToolCallTest.java: a chat's tools, their calls' grammar (the one `ember grammar --tools`
// prints) and the calls of a reply read back, on a random model with a Hermes template
// (TestModels.toolsModel), as python/tests/test_ember.py tests them.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ToolCallTest {
  static final String TOOLS = "[{\"type\": \"function\", \"function\": {"
      + "\"name\": \"get_weather\", \"description\": \"The weather in a city\", "
      + "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": "
      + "\"string\"}}, \"required\": [\"city\"]}}}]";
  static final String CALL =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>";

  /** A GBNF grammar whose one sentence is text (quotes and newlines escaped). */
  static String literal(String text) {
    return "root ::= \"" + text.replace("\"", "\\\"").replace("\n", "\\n") + "\"";
  }

  @Test
  void theToolGrammarIsTheClis(@TempDir Path dir) throws Exception {
    Path path = TestModels.toolsModel(dir);
    Path tools = dir.resolve("tools.json");
    Files.write(tools, TOOLS.getBytes(StandardCharsets.UTF_8));
    String expected = Cli.run("grammar", "--tools", tools.toString());
    try (Model model = Model.open(path.toString())) {
      String gbnf = model.toolGrammar(TOOLS);
      assertEquals(expected, gbnf);
      assertTrue(gbnf.startsWith("root ::= [ \\t\\n]{0,4} call"), gbnf);
      assertTrue(model.grammarBytes(gbnf) > 0);
      EmberException bad = assertThrows(EmberException.class, () -> model.toolGrammar("[1]"));
      assertTrue(bad.getMessage().contains("not an object"), bad.getMessage());
      assertEquals("invalid argument", bad.status());
    }
    try (Model plain = Model.open(Cli.CHAT_MODEL)) { // its template has no tool-call syntax
      EmberException none = assertThrows(EmberException.class, () -> plain.toolGrammar(TOOLS));
      assertEquals("invalid argument", none.status());
    }
  }

  @Test
  void aReplysCallComesBackParsed(@TempDir Path dir) throws Exception {
    Path path = TestModels.toolsModel(dir);
    // The random model would not call by itself: a grammar makes its reply the call.
    String gbnf = literal(CALL);
    String cut = literal(CALL.substring(0, CALL.indexOf("\"arguments\"")));
    try (Model model = Model.open(path.toString())) {
      Session session = new Session(model, new SessionOptions().context(512).grammarBytes(
          Math.max(model.grammarBytes(gbnf), model.grammarBytes(cut))));
      Chat chat = new Chat(session, 0, 0, 4096);
      assertEquals(Collections.emptyList(), chat.toolCalls()); // no reply yet
      assertEquals("", chat.toolCallsError());
      chat.setTools(TOOLS);
      chat.add("user", "Weather in Oslo?");
      chat.setGrammar(gbnf);
      assertEquals(CALL, chat.reply(200));
      assertEquals(Collections.singletonList(
                       new ToolCall("call00001", "get_weather", "{\"city\": \"Oslo\"}")),
                   chat.toolCalls());
      assertEquals("", chat.toolCallsError());
      chat.add("tool", "{\"temperature\": -3}"); // answers call00001
      EmberException short_ = assertThrows(EmberException.class, () -> chat.reply(3));
      assertTrue(short_.getMessage().contains("grammar"), short_.getMessage());
      assertEquals("out of range", short_.status());
      // A call cut off stays text, and the chat says why.
      chat.setGrammar(cut);
      chat.add("user", "Again?");
      assertEquals(CALL.substring(0, CALL.indexOf("\"arguments\"")), chat.reply(200));
      assertEquals(Collections.emptyList(), chat.toolCalls());
      assertTrue(chat.toolCallsError().contains("not JSON"), chat.toolCallsError());
      // Free text: no calls, no error.
      chat.setGrammar(null);
      chat.add("user", "Thanks");
      chat.reply(4);
      assertEquals(Collections.emptyList(), chat.toolCalls());
      assertEquals("", chat.toolCallsError());
      EmberException bad =
          assertThrows(EmberException.class, () -> chat.setToolGrammar("root ::= ("));
      assertTrue(bad.getMessage().contains("line 1, column"), bad.getMessage());
      session.close(); // closes the chat
      assertThrows(IllegalStateException.class, chat::toolCalls);
    }
  }

  @Test
  void toolsWithTheirGrammarReplyFreely(@TempDir Path dir) throws Exception {
    Path path = TestModels.toolsModel(dir);
    try (Model model = Model.open(path.toString())) {
      String calls = model.toolGrammar(TOOLS);
      try (Session none = new Session(model, new SessionOptions().context(512));
           Session session = new Session(model,
               new SessionOptions().context(512).grammarBytes(model.grammarBytes(calls)))) {
        Chat noRoom = new Chat(none, 0, 0, 4096);
        EmberException room =
            assertThrows(EmberException.class, () -> noRoom.setTools(TOOLS, true));
        assertTrue(room.getMessage().contains("planned 0"), room.getMessage());
        Chat noTools = new Chat(session); // maxToolsBytes 0: no room for tools
        EmberException small = assertThrows(EmberException.class, () -> noTools.setTools(TOOLS));
        assertTrue(small.getMessage().contains("max_tools_bytes"), small.getMessage());
        Chat chat = new Chat(session, 0, 0, 4096);
        EmberException first =
            assertThrows(EmberException.class, () -> chat.setToolGrammar(calls));
        assertTrue(first.getMessage().contains("ember_chat_set_tools"), first.getMessage());
        chat.setTools(TOOLS, true);
        chat.add("user", "Weather in Oslo?");
        String reply = chat.reply(8); // the random model opens no call: free text
        assertFalse(reply.isEmpty());
        assertEquals(Collections.emptyList(), chat.toolCalls());
        assertEquals("", chat.toolCallsError());
        // The same grammar given as text, then none; no tools: setTools("").
        chat.setToolGrammar(calls);
        chat.setToolGrammar(null);
        chat.setTools("");
        chat.add("user", "And in Bergen?");
        assertFalse(chat.reply(8).isEmpty());
        assertEquals(Collections.emptyList(), chat.toolCalls());
      }
    }
    try (Model plain = Model.open(Cli.CHAT_MODEL);
         Session session = new Session(plain, new SessionOptions().context(256))) {
      Chat chat = new Chat(session, 0, 0, 4096);
      EmberException none = assertThrows(EmberException.class, () -> chat.setTools(TOOLS));
      assertEquals("invalid argument", none.status()); // no tool-call syntax in its template
    }
  }
}
