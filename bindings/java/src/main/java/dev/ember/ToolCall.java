// ToolCall.java: one call a chat's reply made to a tool (Chat.toolCalls).
package dev.ember;

import javax.annotation.Nullable;

/**
 * A call the assistant's last reply made: its id ("call00001", ...: the {@code "tool"}
 * turn that answers it is the next one added), the function's name (the JSON string's
 * contents, escapes as written) and its arguments (the JSON object's text, as written).
 */
public final class ToolCall {
  public final String id;
  public final String name;
  public final String arguments;

  public ToolCall(String id, String name, String arguments) {
    this.id = id;
    this.name = name;
    this.arguments = arguments;
  }

  @Override
  public boolean equals(@Nullable Object other) {
    if (!(other instanceof ToolCall)) return false;
    ToolCall call = (ToolCall) other;
    return id.equals(call.id) && name.equals(call.name) && arguments.equals(call.arguments);
  }

  @Override
  public int hashCode() {
    return (id.hashCode() * 31 + name.hashCode()) * 31 + arguments.hashCode();
  }

  @Override
  public String toString() {
    return id + " " + name + "(" + arguments + ")";
  }
}
