// The C API's chat calls (ember.h): rendering a model's chat template into a caller
// buffer, and conversations in turns over a session (runtime/chat/chat.h).
#include <cstring>
#include <memory>
#include <new>

#include "runtime/api/c_api_internal.h"
#include "runtime/chat/chat.h"
#include "runtime/checked_math.h"

using ember::c_api::CheckStructSize;
using ember::c_api::NullArgument;
using ember::c_api::Report;

namespace {

ember::Status ToChatOptions(const ember_chat_options* o, ember::ChatOptions* options) {
  *options = ember::ChatOptions();
  if (o == nullptr) return ember::Status::Ok();
  EMBER_RETURN_IF_ERROR(CheckStructSize<ember_chat_options>(
      "ember_chat_options", o->struct_size,
      offsetof(ember_chat_options, add_generation_prompt) + sizeof(int)));
  options->max_text_bytes = o->max_text_bytes;
  if (o->max_messages) options->max_messages = o->max_messages;
  if (o->enable_thinking < -1 || o->enable_thinking > 1) {
    return ember::InvalidArgument(
        "ember_chat_options: enable_thinking %d is not -1, 0 or 1", o->enable_thinking);
  }
  options->render.enable_thinking = o->enable_thinking;
  options->render.now_seconds = o->now_seconds;
  options->render.add_generation_prompt = o->add_generation_prompt != 0;
  // Appended in 0.3: read when the caller's struct has it.
  if (EMBER_HAS_FIELD(o, ember_chat_options, max_tools_bytes)) {
    options->max_tools_bytes = o->max_tools_bytes;
  }
  if (EMBER_HAS_FIELD(o, ember_chat_options, max_images)) {
    options->max_images = o->max_images;
  }
  return ember::Status::Ok();
}

struct Trampoline {
  ember_token_callback callback;
  void* user;
};

bool CallBack(void* user, int32_t id, std::string_view text) {
  auto* t = static_cast<Trampoline*>(user);
  return t->callback(t->user, id, text.data(), text.size()) != 0;
}

}  // namespace

extern "C" {

void ember_chat_options_default(ember_chat_options* options) {
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(*options);
  options->max_messages = ember::ChatOptions().max_messages;
  options->enable_thinking = -1;
  options->now_seconds = -1;
  options->add_generation_prompt = 1;
}

int ember_model_has_chat_template(const ember_model* model) {
  return model && !model->model->chat_template().empty();
}

ember_status ember_chat_template_render(const ember_model* model,
                                        const ember_chat_message* messages, size_t n,
                                        const ember_chat_options* options, char* buffer,
                                        size_t capacity, size_t* length) {
  if (!model) return NullArgument("model");
  if (!length) return NullArgument("length");
  *length = 0;
  if (n && !messages) return NullArgument("messages");
  if (!buffer && capacity) return NullArgument("buffer");
  ember::ChatOptions chat_options;
  const ember::Status status = ToChatOptions(options, &chat_options);
  if (!status.ok()) return Report(status);
  // The messages as the renderer reads them, at the buffer's end (no heap). Both sizes
  // are the caller's: a sum or product that wraps would pass for a small one.
  const uintptr_t begin = reinterpret_cast<uintptr_t>(buffer);
  uintptr_t end;
  if (!ember::CheckedAdd(begin, uintptr_t{capacity}, &end)) {
    return Report(ember::InvalidArgument(
        "a buffer of %zu bytes at %p runs past the end of the address space", capacity,
        static_cast<void*>(buffer)));
  }
  size_t bytes = 0;
  const bool fits =
      ember::CheckedMul(n, sizeof(ember::ChatMessage), &bytes) && bytes <= capacity;
  const uintptr_t at = (end - (fits ? bytes : 0)) & ~uintptr_t{15};
  if (!fits || at < begin) {
    return Report(
        ember::ResourceExhausted("a buffer of %zu bytes is too small for %zu "
                                 "messages",
                                 capacity, n));
  }
  auto* converted = reinterpret_cast<ember::ChatMessage*>(at);
  for (size_t i = 0; i < n; ++i) {
    if (!messages[i].role || (!messages[i].content && messages[i].content_length)) {
      return NullArgument("a message's role or content");
    }
    // Constructed whole in the caller's buffer (extra_json empty: C messages have none).
    new (&converted[i]) ember::ChatMessage{
        messages[i].role, std::string_view(messages[i].content ? messages[i].content : "",
                                           messages[i].content_length)};
  }
  return Report(model->model->chat_template().Render(converted, n, chat_options.render,
                                                     buffer, at - begin, length));
}

ember_status ember_chat_create(ember_session* session, const ember_chat_options* options,
                               ember_chat** chat) {
  if (!session) return NullArgument("session");
  if (!chat) return NullArgument("chat");
  *chat = nullptr;
  ember::ChatOptions chat_options;
  ember::Status status = ToChatOptions(options, &chat_options);
  if (!status.ok()) return Report(status);
  std::unique_ptr<ember_chat> c(new (std::nothrow) ember_chat{
      session, {}, nullptr, {}, {nullptr, nullptr}, ember::TokenConstraint()});
  if (!c) return Report(ember::ResourceExhausted("out of memory for the chat"));
  const size_t bytes = ember::Chat::RequiredBytes(session->session, chat_options);
  if (bytes == 0) {  // sizes past the address space: Init says which
    return Report(
        c->chat.Init(&session->session, &*session->sampler, chat_options, nullptr, 0));
  }
  c->memory.reset(new (std::nothrow) uint64_t[(bytes + 7) / 8]);
  if (!c->memory) {
    return Report(
        ember::ResourceExhausted("cannot allocate the chat's %zu bytes", bytes));
  }
  status = c->chat.Init(&session->session, &*session->sampler, chat_options,
                        c->memory.get(), bytes);
  if (!status.ok()) return Report(status);
  *chat = c.release();
  return EMBER_OK;
}

void ember_chat_free(ember_chat* chat) {
  if (chat && chat->session->grammar_chat == chat) chat->session->grammar_chat = nullptr;
  delete chat;
}

ember_status ember_chat_set_system(ember_chat* chat, const char* text, size_t length) {
  if (!chat) return NullArgument("chat");
  if (!text && length) return NullArgument("text");
  return Report(chat->chat.SetSystem(std::string_view(text ? text : "", length)));
}

ember_status ember_chat_add(ember_chat* chat, const char* role, const char* text,
                            size_t length) {
  if (!chat) return NullArgument("chat");
  if (!role) return NullArgument("role");
  if (!text && length) return NullArgument("text");
  return Report(chat->chat.Add(role, std::string_view(text ? text : "", length)));
}

ember_status ember_chat_generate(ember_chat* chat, size_t max_new,
                                 ember_token_callback callback, void* user,
                                 size_t* n_generated) {
  if (n_generated) *n_generated = 0;
  if (!chat) return NullArgument("chat");
  if (!callback) return NullArgument("callback");
  Trampoline trampoline{callback, user};
  ember_session* session = chat->session;
  chat->chat.set_speculator(session->speculator ? &*session->speculator : nullptr);
  const ember::Status status = chat->chat.Reply(max_new, &chat->session->stop, &CallBack,
                                                &trampoline, &chat->last);
  if (n_generated) *n_generated = chat->last.generated;
  if (status.ok() && chat->whole_reply && !chat->last.complete) {
    return Report(ember::OutOfRange(
        "the reply stopped after %zu tokens, before the grammar's text was whole",
        chat->last.generated));
  }
  return Report(status);
}

void ember_chat_reset(ember_chat* chat) {
  if (chat) chat->chat.Reset();
}

ember_status ember_chat_last_stats(const ember_chat* chat, ember_chat_stats* stats) {
  if (!chat) return NullArgument("chat");
  if (!stats) return NullArgument("stats");
  const ember::Status status = CheckStructSize<ember_chat_stats>(
      "ember_chat_stats", stats->struct_size,
      offsetof(ember_chat_stats, generate_seconds) + sizeof(double),
      ember::c_api::StructFill::kSizeOnly);
  if (!status.ok()) return Report(status);
  const ember::ChatTurnStats& s = chat->last;
  stats->prompt_tokens = static_cast<uint32_t>(s.prompt_tokens);
  stats->cached_tokens = static_cast<uint32_t>(s.reused_tokens);
  stats->generated_tokens = static_cast<uint32_t>(s.generated);
  stats->dropped_messages = static_cast<uint32_t>(s.dropped_messages);
  stats->prefill_seconds = s.prefill_seconds;
  stats->generate_seconds = s.generate_seconds;
  if (EMBER_HAS_FIELD(stats, ember_chat_stats, context_shifts)) {
    stats->context_shifts = static_cast<uint32_t>(s.context_shifts);
  }
  return EMBER_OK;
}

}  // extern "C"

ember_status ember_chat_set_tools(ember_chat* chat, const char* json, size_t length) {
  if (!chat) return NullArgument("chat");
  if (!json && length) return NullArgument("json");
  return Report(chat->chat.SetTools(std::string_view(json ? json : "", length)));
}

ember_status ember_chat_tool_call_count(const ember_chat* chat, size_t* n,
                                        const char** status_message) {
  if (n) *n = 0;
  if (status_message) *status_message = "";
  if (!chat) return NullArgument("chat");
  if (!n) return NullArgument("n");
  *n = chat->chat.num_tool_calls();
  if (status_message) *status_message = chat->chat.tool_calls_status().message();
  return EMBER_OK;
}

ember_status ember_chat_tool_call(const ember_chat* chat, size_t i,
                                  ember_tool_call* call) {
  if (!chat) return NullArgument("chat");
  if (!call) return NullArgument("call");
  const ember::Status size = CheckStructSize<ember_tool_call>(
      "ember_tool_call", call->struct_size,
      offsetof(ember_tool_call, arguments_length) + sizeof(size_t),
      ember::c_api::StructFill::kSizeOnly);
  if (!size.ok()) return Report(size);
  if (i >= chat->chat.num_tool_calls()) {
    return Report(
        ember::OutOfRange("tool call %zu of %zu", i, chat->chat.num_tool_calls()));
  }
  const ember::ToolCall& c = chat->chat.tool_call(i);
  chat->chat.tool_call_id(i, call->id);
  call->name = c.name.data();
  call->name_length = c.name.size();
  call->arguments = c.arguments.data();
  call->arguments_length = c.arguments.size();
  return EMBER_OK;
}
