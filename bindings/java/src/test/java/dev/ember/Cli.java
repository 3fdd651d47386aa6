// Cli.java: the tests' oracle: the `ember` command line, and the files it writes.
package dev.ember;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What java_test (tests/CMakeLists.txt) passes in the environment: EMBER_CLI (the build's
 * ember), EMBER_TEST_MODEL and EMBER_TEST_CHAT_MODEL (stories260K without and with a
 * chat template).
 */
final class Cli {
  static final String MODEL = env("EMBER_TEST_MODEL");
  static final String CHAT_MODEL = env("EMBER_TEST_CHAT_MODEL");
  static final String PROMPT = "Once upon a time";

  private Cli() {}

  private static String env(String name) {
    String value = System.getenv(name);
    if (value == null) throw new IllegalStateException(name + " is not set (run by ctest)");
    return value;
  }

  /** Runs `ember args...` and returns its standard output; fails on a nonzero exit. */
  static String run(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(env("EMBER_CLI"));
    command.addAll(Arrays.asList(args));
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.redirectError(ProcessBuilder.Redirect.INHERIT);
    Process process = builder.start();
    byte[] out = readAll(process.getInputStream());
    int status = process.waitFor();
    if (status != 0) throw new IOException(command + " exited with " + status);
    return new String(out, StandardCharsets.UTF_8);
  }

  static byte[] readAll(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    for (int n; (n = in.read(buffer)) > 0;) out.write(buffer, 0, n);
    return out.toByteArray();
  }

  /** The token ids `ember tokenize` prints. */
  static int[] tokenize(String text) throws IOException, InterruptedException {
    String out = run("tokenize", "-m", MODEL, "-p", text).trim();
    if (out.isEmpty()) return new int[0];
    String[] parts = out.split("\\s+");
    int[] ids = new int[parts.length];
    for (int i = 0; i < ids.length; ++i) ids[i] = Integer.parseInt(parts[i]);
    return ids;
  }

  /** The float32 values of a .npy file `ember logits` wrote (little-endian, C order). */
  static float[] readNpy(Path path) throws IOException {
    ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(path)).order(ByteOrder.LITTLE_ENDIAN);
    if (bytes.get(0) != (byte) 0x93 || bytes.get(1) != 'N') throw new IOException("not .npy");
    int major = bytes.get(6);
    int headerLength = major == 1 ? bytes.getShort(8) & 0xFFFF : bytes.getInt(8);
    int start = (major == 1 ? 10 : 12) + headerLength;
    String header = new String(bytes.array(), major == 1 ? 10 : 12, headerLength,
                               StandardCharsets.US_ASCII);
    if (!header.contains("'<f4'")) throw new IOException("not float32: " + header);
    bytes.position(start);
    float[] values = new float[bytes.remaining() / 4];
    bytes.asFloatBuffer().get(values);
    return values;
  }
}
