// JsonSchemaTest.java: a JSON Schema holds generation (Session.setJsonSchema), and what
// ember does not support is refused by name.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class JsonSchemaTest {
  static final String PERSON =
      "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", \"maxLength\": 8},"
          + " \"age\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 99}},"
          + " \"required\": [\"name\", \"age\"]}";

  @Test
  void aSchemaHoldsGeneration() {
    try (Model model = Model.open(Cli.MODEL);
         Session none = new Session(model, new SessionOptions().context(512));
         Session session = new Session(model,
             new SessionOptions().context(512).grammarBytes(model.jsonSchemaBytes(PERSON)))) {
      EmberException room =
          assertThrows(EmberException.class, () -> none.setJsonSchema(PERSON));
      assertTrue(room.getMessage().contains("planned 0"), room.getMessage());
      session.setSampler(new Sampler().temperature(0f));
      session.setJsonSchema(PERSON);
      String text = session.generate(Cli.PROMPT, 400);
      assertTrue(text.matches("\\s*\\{\\s*\"name\"\\s*:\\s*\"[^\"]{0,8}\"\\s*,\\s*\"age\"\\s*:\\s*"
          + "[1-9][0-9]?\\s*\\}\\s*"), text);
      assertTrue(session.grammarComplete());
      EmberException bad = assertThrows(EmberException.class,
          () -> session.setJsonSchema("{\"type\": \"string\", \"pattern\": \"a+\"}"));
      assertTrue(bad.getMessage().contains("keyword 'pattern' is not supported"),
          bad.getMessage());
      assertEquals("unimplemented", bad.status());
      EmberException malformed =
          assertThrows(EmberException.class, () -> session.setJsonSchema("{\"type\": }"));
      assertTrue(malformed.getMessage().contains("not valid JSON at byte 9"),
          malformed.getMessage());
      session.setJsonSchema(null); // none: free text again
      session.reset();
      assertTrue(session.generate(Cli.PROMPT, 20).length() > 10);
    }
  }
}
