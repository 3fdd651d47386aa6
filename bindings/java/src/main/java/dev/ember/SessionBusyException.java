// SessionBusyException.java: a session used by a second thread during another's call.
package dev.ember;

/**
 * Thrown when a session (or its chat) is called while another thread is inside one of
 * its calls, or from inside its own generation callback. A session is used by one
 * thread at a time; ember refuses the second caller rather than corrupt the session.
 */
public class SessionBusyException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  SessionBusyException(String message) {
    super(message);
  }
}
