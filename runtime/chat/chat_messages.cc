// Chat's messages: stored in its text storage, compacted, the oldest turn dropped, the
// tools set, and a reply stored with its tool calls (see chat.h; the turns are chat.cc).
#include <cstdint>
#include <cstring>

#include "runtime/chat/chat.h"

namespace ember {

// Rewrites the contents of the messages kept to the front of the text storage.
// (The last reply's calls point into it: they are forgotten.)
void Chat::CompactText() {
  size_t at = 0;
  const auto move = [&](std::string_view* text) {
    if (text->empty()) return;
    if (text->data() != text_ + at) memmove(text_ + at, text->data(), text->size());
    *text = std::string_view(text_ + at, text->size());
    at += text->size();
  };
  for (size_t i = 0; i < num_messages_; ++i) {
    move(&messages_[i].content);
    move(&messages_[i].extra_json);
  }
  text_used_ = at;
  num_calls_ = 0;
}

Status Chat::Store(std::string_view role, std::string_view text,
                   std::string_view extra_json) {
  if (num_messages_ == options_.max_messages ||
      text.size() > text_capacity_ - text_used_ ||
      extra_json.size() > text_capacity_ - text_used_ - text.size()) {
    return ResourceExhausted(
        "the chat keeps %u messages and %zu bytes of text: this one "
        "does not fit",
        options_.max_messages, text_capacity_);
  }
  // Roles are the template's words: keep them as static strings when they are the usual.
  static const char* const kRoles[] = {"system", "user", "assistant", "tool"};
  std::string_view stored;
  for (const char* r : kRoles) {
    if (role == r) stored = r;
  }
  if (stored.empty()) {
    return InvalidArgument("unknown role '%.*s' (system, user, assistant or tool)",
                           static_cast<int>(role.size()), role.data());
  }
  // (Add may have written the text in place already.)
  memmove(text_ + text_used_, text.data(), text.size());
  ChatMessage m{stored, std::string_view(text_ + text_used_, text.size())};
  text_used_ += text.size();
  if (!extra_json.empty()) {
    memcpy(text_ + text_used_, extra_json.data(), extra_json.size());
    m.extra_json = std::string_view(text_ + text_used_, extra_json.size());
    text_used_ += extra_json.size();
  }
  message_images_[num_messages_] = 0;
  messages_[num_messages_++] = m;
  return Status::Ok();
}

Status Chat::SetTools(std::string_view tools_json) {
  if (tools_json.size() > options_.max_tools_bytes) {
    return ResourceExhausted(
        "the tools' JSON is %zu bytes: the chat keeps %u "
        "(ChatOptions::max_tools_bytes)",
        tools_json.size(), options_.max_tools_bytes);
  }
  if (!tools_json.empty()) {
    const ToolCallFormat format =
        DetectToolCallFormat(session_->model().chat_template().tables());
    if (format == ToolCallFormat::kNone) {
      return InvalidArgument(
          "the model's chat template shows no way to call tools (no <tool_call> tags, "
          "Llama 3 JSON calls, [TOOL_CALLS] or <|tool|>): it cannot take tools");
    }
    tool_format_ = format;
  } else {
    tool_format_ = ToolCallFormat::kNone;
  }
  marker_ids_[0] = marker_ids_[1] = -1;
  if (tool_format_ == ToolCallFormat::kPhi4Mini) {
    const Tokenizer& t = session_->model().tokenizer();
    const uint32_t vocab = t.vocab_size();
    for (uint32_t id = 0; id < vocab; ++id) {
      const std::string_view piece = t.piece(id);
      const int marker = piece == "<|tool_call|>"    ? 0
                         : piece == "<|/tool_call|>" ? 1
                                                     : -1;
      if (marker >= 0 &&
          t.Decode(static_cast<int32_t>(vocab), static_cast<int32_t>(id)).empty()) {
        marker_ids_[marker] = static_cast<int32_t>(id);
      }
    }
  }
  memcpy(tools_, tools_json.data(), tools_json.size());
  tools_size_ = tools_json.size();
  return Status::Ok();
}

namespace {

// Appends text to buf[*at, capacity); false when it does not fit.
bool Put(char* buf, size_t capacity, size_t* at, std::string_view text) {
  if (text.size() > capacity - *at) return false;
  memcpy(buf + *at, text.data(), text.size());
  *at += text.size();
  return true;
}

// "call" and 5 digits: 9 characters, as Mistral's template wants a call's id.
void CallId(uint32_t n, char id[10]) {
  memcpy(id, "call", 4);
  for (int i = 8; i >= 4; --i) {
    id[i] = static_cast<char>('0' + n % 10);
    n /= 10;
  }
  id[9] = 0;
}

}  // namespace

void Chat::tool_call_id(size_t i, char id[10]) const {
  CallId(static_cast<uint32_t>((calls_first_id_ + i) % 100000), id);
}

Status Chat::StoreReply(std::string_view reply) {
  num_calls_ = 0;
  calls_status_ = Status::Ok();
  std::string_view content = reply;
  if (tool_format_ != ToolCallFormat::kNone) {
    calls_status_ =
        ParseToolCalls(tool_format_, reply, calls_, kMaxToolCalls, &num_calls_, &content);
    if (!calls_status_.ok()) {
      num_calls_ = 0;
      content = reply;
    }
  }
  if (num_calls_ == 0) {
    // The reply's text is already where Store would copy it: keep it in place.
    message_images_[num_messages_] = 0;
    messages_[num_messages_++] = ChatMessage{"assistant", reply};
    text_used_ += reply.size();
    return Status::Ok();
  }
  // {"tool_calls": [{"id": ..., "type": "function", "function": {"name": ...,
  // "arguments": {...}}}, ...]} after the reply's text, which the calls and the content
  // view.
  char* extra = text_ + text_used_ + reply.size();
  const size_t capacity = text_capacity_ - text_used_ - reply.size();
  size_t at = 0;
  bool fits = Put(extra, capacity, &at, R"({"tool_calls": [)");
  for (size_t i = 0; i < num_calls_ && fits; ++i) {
    char id[10];
    CallId(next_call_id_ + static_cast<uint32_t>(i), id);
    fits =
        Put(extra, capacity, &at, i ? R"(, {"id": ")" : R"({"id": ")") &&
        Put(extra, capacity, &at, id) &&
        Put(extra, capacity, &at, R"(", "type": "function", "function": {"name": ")") &&
        Put(extra, capacity, &at, calls_[i].name) &&
        Put(extra, capacity, &at, R"(", "arguments": )") &&
        Put(extra, capacity, &at, calls_[i].arguments) && Put(extra, capacity, &at, "}}");
  }
  fits = fits && Put(extra, capacity, &at, "]}");
  if (!fits) {
    num_calls_ = 0;
    calls_status_ = ResourceExhausted(
        "the reply's tool calls do not fit the chat's text (max_text_bytes %zu): kept "
        "as text",
        text_capacity_);
    message_images_[num_messages_] = 0;
    messages_[num_messages_++] = ChatMessage{"assistant", reply};
    text_used_ += reply.size();
    return Status::Ok();
  }
  // Phi-4-mini's template renders an assistant turn's content only: it keeps the
  // calls as the model wrote them.
  if (tool_format_ == ToolCallFormat::kPhi4Mini) content = reply;
  message_images_[num_messages_] = 0;
  messages_[num_messages_++] =
      ChatMessage{"assistant", content, std::string_view(extra, at)};
  text_used_ += reply.size() + at;
  first_unanswered_id_ = calls_first_id_ = next_call_id_;
  unanswered_ = static_cast<uint32_t>(num_calls_);
  next_call_id_ = (next_call_id_ + static_cast<uint32_t>(num_calls_)) % 100000;
  return Status::Ok();
}

Status Chat::SetSystem(std::string_view text) {
  // The system text is message 0: drop the old one, insert the new one first.
  if (first_turn_ == 1) {
    memmove(messages_, messages_ + 1, (num_messages_ - 1) * sizeof(ChatMessage));
    memmove(message_images_, message_images_ + 1, (num_messages_ - 1) * sizeof(uint32_t));
    --num_messages_;
    first_turn_ = 0;
    CompactText();
  }
  if (text.empty()) return Status::Ok();
  EMBER_RETURN_IF_ERROR(Store("system", text));
  const ChatMessage system = messages_[num_messages_ - 1];
  memmove(messages_ + 1, messages_, (num_messages_ - 1) * sizeof(ChatMessage));
  memmove(message_images_ + 1, message_images_, (num_messages_ - 1) * sizeof(uint32_t));
  messages_[0] = system;
  message_images_[0] = 0;
  first_turn_ = 1;
  return Status::Ok();
}

Status Chat::Add(std::string_view role, std::string_view text,
                 std::string_view extra_json) {
  if (role == "system") return InvalidArgument("use SetSystem for the system text");
  num_calls_ = 0;
  if (!extra_json.empty()) {
    EMBER_RETURN_IF_ERROR(Store(role, text, extra_json));
    unanswered_ = 0;
    return Status::Ok();
  }
  if (role == "tool" && unanswered_ > 0) {
    // The result of the next call the last reply made.
    char extra[48] = "{\"tool_call_id\": \"";
    CallId(first_unanswered_id_, extra + strlen(extra));
    strcat(extra, "\"}");
    EMBER_RETURN_IF_ERROR(Store(role, text, extra));
    first_unanswered_id_ = (first_unanswered_id_ + 1) % 100000;
    --unanswered_;
    return Status::Ok();
  }
  if (role != "tool") unanswered_ = 0;
  // Attached images wait for a user turn.
  if (pending_images_ == 0 || role != "user") return Store(role, text);
  return StoreWithImages(text);
}

Status Chat::StoreWithImages(std::string_view text) {
  const PromptText& marker = session_->model().vision()->prompt.marker;
  const size_t markers = CountImageMarkers(session_->model().vision()->prompt, text);
  if (markers != 0 && markers != pending_images_) {
    return InvalidArgument("the turn has %zu image marker%s ('%s') for %zu image%s",
                           markers, markers == 1 ? "" : "s", marker.c_str(),
                           pending_images_, pending_images_ == 1 ? "" : "s");
  }
  // No marker: one per image before the text, written in place for Store.
  const size_t before = markers ? 0 : pending_images_ * marker.size();
  const size_t room = text_capacity_ - text_used_;
  if (num_messages_ == options_.max_messages || before > room ||
      text.size() > room - before) {
    return ResourceExhausted(
        "the chat keeps %u messages and %zu bytes of text: this one "
        "does not fit",
        options_.max_messages, text_capacity_);
  }
  char* at = text_ + text_used_;
  memmove(at + before, text.data(), text.size());
  for (size_t i = 0; i < before; i += marker.size())
    memcpy(at + i, marker.c_str(), marker.size());
  EMBER_RETURN_IF_ERROR(Store("user", std::string_view(at, before + text.size())));
  message_images_[num_messages_ - 1] = static_cast<uint32_t>(pending_images_);
  num_images_ += pending_images_;
  pending_images_ = 0;
  return Status::Ok();
}

void Chat::DropOldest() {
  if (num_messages_ <= first_turn_) return;
  DropImages(first_turn_);
  memmove(messages_ + first_turn_, messages_ + first_turn_ + 1,
          (num_messages_ - first_turn_ - 1) * sizeof(ChatMessage));
  memmove(message_images_ + first_turn_, message_images_ + first_turn_ + 1,
          (num_messages_ - first_turn_ - 1) * sizeof(uint32_t));
  --num_messages_;
  CompactText();
}

}  // namespace ember
