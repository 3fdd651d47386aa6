// EmberException.java: a failed ember call, with ember's status and message.
package dev.ember;

import java.nio.charset.StandardCharsets;

/**
 * A failed ember call: {@link #status()} is ember's status name ("invalid argument",
 * "I/O error", "out of range", ...; ember_status_string), {@link #code()} its
 * ember_status value, and the message ember's own (ember_last_error).
 */
public class EmberException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int code;
  private final String status;
  private final String detail;

  /** Called by libember_jni: the message as ember's UTF-8 bytes. */
  EmberException(int code, String status, byte[] message) {
    this(code, status, new String(message, StandardCharsets.UTF_8));
  }

  EmberException(int code, String status, String message) {
    super(message.isEmpty() ? status : message + " (" + status + ")");
    this.code = code;
    this.status = status;
    this.detail = message;
  }

  /** The ember_status value (1 invalid argument, 2 invalid model, ... 8 internal). */
  public int code() {
    return code;
  }

  /** ember's short name for the status, as ember_status_string gives it. */
  public String status() {
    return status;
  }

  /** ember's message alone (ember_last_error), without the status. */
  public String detail() {
    return detail;
  }
}
