// TokenListener.java: what a streaming generation calls for each token.
package dev.ember;

/**
 * Called on the generating thread for each token with the text it completes: whole
 * characters only (possibly empty, when a token ends inside a UTF-8 character or a stop
 * string holds text back); the last call may carry token -1 and the text held back.
 * Return false to stop, or call {@link Session#cancel()} (from here or any thread). It
 * must not otherwise call the session that is generating (that throws {@link
 * SessionBusyException}), but may read its {@link Session#logits()} and use other
 * sessions. An exception thrown here stops generation and is rethrown by the generate
 * call.
 */
public interface TokenListener {
  boolean onToken(int token, String text);
}
