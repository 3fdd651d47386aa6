// NullabilityTest.java: the JSR-305 annotations Kotlin reads are in the jar, and only
// those parameters that take null are @Nullable; without jsr305.jar the classes still load.
package dev.ember;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.File;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import javax.annotation.Nullable;
import javax.annotation.ParametersAreNonnullByDefault;
import org.junit.jupiter.api.Test;

class NullabilityTest {
  private static final Class<?>[] API = {Chat.class, Chat.Stats.class, Ember.class,
      EmberException.class, KvType.class, Model.class, Sampler.class, Session.class,
      SessionBusyException.class, SessionOptions.class, SpeculativeStats.class,
      TokenListener.class, ToolCall.class, TopToken.class};

  /** "Class.method(Type, ...)#parameter" of every @Nullable parameter of the public API. */
  private static Set<String> nullableParameters(Class<?>[] classes, Class<?> nullable) {
    Set<String> out = new TreeSet<>();
    for (Class<?> c : classes) {
      for (Method m : c.getDeclaredMethods()) {
        if (!Modifier.isPublic(m.getModifiers())) continue;
        Annotation[][] annotations = m.getParameterAnnotations();
        for (int i = 0; i < annotations.length; ++i) {
          for (Annotation a : annotations[i]) {
            if (a.annotationType() == nullable) {
              out.add(c.getSimpleName() + "." + m.getName() + "("
                      + Arrays.stream(m.getParameterTypes()).map(Class::getSimpleName)
                            .reduce((x, y) -> x + ", " + y).orElse("")
                      + ")#" + i);
            }
          }
        }
      }
    }
    return out;
  }

  @Test
  void thePackageIsNonnullByDefaultAndMarksWhatTakesNull() {
    Package p = Session.class.getPackage();
    assertNotNull(p.getAnnotation(ParametersAreNonnullByDefault.class));
    assertNotNull(p.getAnnotation(ReturnValuesAreNonnullByDefault.class));
    Set<String> expected = new TreeSet<>(Arrays.asList(
        "Chat.reply(int, Consumer)#1",
        "Chat.setGrammar(String)#0",
        "Chat.setGrammar(String, String)#0",
        "Chat.setGrammar(String, String)#1",
        "Chat.setToolGrammar(String)#0",
        "Session.embed(String, int, Boolean)#2",
        "Session.embed(String, int, Boolean, String)#2",
        "Session.embed(String, int, Boolean, String)#3",
        "Session.embedBatch(List, int, Boolean)#2",
        "Session.embedBatch(List, int, Boolean, String)#2",
        "Session.embedBatch(List, int, Boolean, String)#3",
        "Session.generate(String, int, Consumer)#2",
        "Session.generate(int[], int, TokenListener)#2",
        "Session.rerank(String, List, String)#2",
        "Session.setDraft(Session)#0",
        "Session.setGrammar(String)#0",
        "Session.setGrammar(String, String)#0",
        "Session.setGrammar(String, String)#1",
        "Session.setJsonSchema(String)#0",
        "SessionOptions.isa(String)#0",
        "ToolCall.equals(Object)#0"));
    assertEquals(expected, nullableParameters(API, Nullable.class));
    // No public method returns null.
    for (Class<?> c : API) {
      for (Method m : c.getDeclaredMethods()) {
        if (Modifier.isPublic(m.getModifiers())) {
          assertNull(m.getAnnotation(Nullable.class), m.toString());
        }
      }
    }
  }

  @Test
  void whatIsMarkedNullableTakesNull() {
    try (Model model = Model.open(Cli.MODEL);
         Session session = new Session(model, new SessionOptions().context(64).isa(null))) {
      session.setGrammar(null);
      session.setGrammar(null, null);
      assertFalse(session.generate(Cli.PROMPT, 3, (java.util.function.Consumer<String>) null)
                      .isEmpty());
      session.reset();
      assertFalse(session.generate(session.tokenize(Cli.PROMPT), 3, null).isEmpty());
    }
  }

  @Test
  void theClassesLoadWithoutTheAnnotationsJar() throws Exception {
    // ember.jar alone, over the platform's classes: no jsr305.jar (nor JUnit) visible.
    URL jar = Session.class.getProtectionDomain().getCodeSource().getLocation();
    assertEquals("ember.jar", new File(jar.toURI()).getName());
    ClassLoader platform = ClassLoader.getSystemClassLoader().getParent();
    try (URLClassLoader alone =
             new URLClassLoader(new URL[] {jar}, platform)) {
      Class<?> session = Class.forName("dev.ember.Session", false, alone);
      assertFalse(session == Session.class);
      Class<?>[] classes = {session, Class.forName("dev.ember.Chat", false, alone),
                            Class.forName("dev.ember.SessionOptions", false, alone)};
      // The annotations' classes are missing: reflection drops them, nothing fails.
      assertEquals(new TreeSet<String>(), nullableParameters(classes, Nullable.class));
      Annotation[] onPackage = session.getPackage().getAnnotations(); // ember.jar's own only
      assertEquals(1, onPackage.length);
      assertEquals("dev.ember.ReturnValuesAreNonnullByDefault",
                   onPackage[0].annotationType().getName());
      assertEquals(0, session.getDeclaredMethod("setGrammar", String.class)
                          .getParameterAnnotations()[0].length);
    }
  }
}
