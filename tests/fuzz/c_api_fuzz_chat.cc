// The C API sequence fuzzer's chat calls (see c_api_fuzz_calls.h): conversations over
// the program's session, and rendering the model's chat template into the harness's
// buffer.
#include <cstdio>
#include <cstring>

#include "tests/fuzz/c_api_fuzz_calls.h"

namespace ember::fuzz {

void CallProgram::ChatCreate() {
  ember_chat_free(chat_);
  chat_ = nullptr;
  ember_chat_options o;
  ember_chat_options_default(&o);
  const uint8_t fields = Byte();
  const uint32_t struct_sizes[] = {sizeof(o), 0, 4, UINT32_MAX,
                                   offsetof(ember_chat_options, add_generation_prompt)};
  // The sizes the chat allocates stay small: its memory is the caller's to size.
  const uint32_t text_bytes[] = {0, 1, 8, 64, 4096};
  const uint32_t messages[] = {0, 1, 2, 3, 256};
  const int64_t times[] = {-1, 0, INT64_MIN, INT64_MAX, 1767225600};
  if (fields & 1) o.struct_size = Pick(struct_sizes);
  if (fields & 2) o.max_text_bytes = Pick(text_bytes);
  if (fields & 4) o.max_messages = Pick(messages);
  if (fields & 8) o.enable_thinking = Pick(kEdgeInts);
  if (fields & 16) o.now_seconds = Pick(times);
  if (fields & 32) o.add_generation_prompt = Pick(kEdgeInts);
  Check(ember_chat_create(SessionArg(), fields & 64 ? nullptr : &o,
                          fields & 128 ? nullptr : &chat_),
        "ember_chat_create");
}

void CallProgram::ChatAdd() {
  const size_t filled = FillText();
  const uint8_t how = Byte();
  const char* text = how & 1 ? nullptr : text_buffer;
  const size_t length = text ? LengthIn(filled) : (how & 2 ? EdgeSize() : 0);
  ember_chat* chat = how & 4 ? nullptr : chat_;
  if (how & 8) {
    Check(ember_chat_set_system(chat, text, length), "ember_chat_set_system");
  } else {
    Check(ember_chat_add(chat, Pick(kRoles), text, length), "ember_chat_add");
  }
}

void CallProgram::ChatGenerate() {
  const uint8_t how = Byte();
  const size_t max_new = how & 1 ? EdgeSize() : Byte() % 8;
  Stopper stopper{vocab_};
  stopper.limit = 1 + Byte() % 16;
  size_t generated = SIZE_MAX;
  const ember_status s = Check(
      ember_chat_generate(how & 2 ? nullptr : chat_, max_new,
                          how & 4 ? nullptr : &StopEarly, &stopper,
                          how & 8 ? nullptr : &generated),
      "ember_chat_generate");
  if (s == EMBER_OK && !(how & 8) && generated > max_new) {
    Fail("ember_chat_generate", "more tokens than max_new");
  }
}

void CallProgram::ChatOther() {
  const uint8_t how = Byte();
  if (how % 3 == 0) {
    ember_chat_reset(how & 4 ? nullptr : chat_);
  } else if (how % 3 == 1) {
    ember_chat_stats stats;
    const uint32_t struct_sizes[] = {sizeof(stats), 0, 4, sizeof(stats) + 8, UINT32_MAX};
    stats.struct_size = Pick(struct_sizes);
    Check(ember_chat_last_stats(how & 4 ? nullptr : chat_, how & 8 ? nullptr : &stats),
          "ember_chat_last_stats");
  } else {
    ember_chat_free(chat_);
    chat_ = nullptr;
  }
}

void CallProgram::Render() {
  const size_t filled = FillText();
  ember_chat_message messages[kMaxMessages];
  size_t used = 0;
  for (ember_chat_message& m : messages) {
    m.role = Pick(kRoles);
    m.content_length = LengthIn(filled - used);
    m.content = Byte() % 16 == 0 && m.content_length == 0 ? nullptr : text_buffer + used;
    used += m.content_length / 2;
  }
  const uint8_t how = Byte();
  const ember_chat_message* list = how & 1 ? nullptr : messages;
  const size_t n = list ? LengthIn(kMaxMessages) : (how & 2 ? EdgeSize() : 0);
  char* buffer = how & 4 ? nullptr : render_buffer;
  const size_t capacities[] = {0, 1, 16, 64, 256, 1024, kRenderBytes};
  const size_t capacity = buffer ? Pick(capacities) : (how & 8 ? EdgeSize() : 0);
  ember_chat_options o;
  ember_chat_options_default(&o);
  o.add_generation_prompt = how & 16 ? 0 : 1;
  o.enable_thinking = how & 32 ? Pick(kEdgeInts) : -1;
  o.now_seconds = how & 64 ? 1767225600 : -1;
  size_t length = SIZE_MAX;
  const ember_status s =
      Check(ember_chat_template_render(Byte() % 16 ? model_ : nullptr, list, n,
                                       how & 128 ? nullptr : &o, buffer, capacity,
                                       Byte() % 16 ? &length : nullptr),
            "ember_chat_template_render");
  if (s == EMBER_OK && length > capacity) {
    Fail("ember_chat_template_render", "a text longer than the buffer");
  }
}


}  // namespace ember::fuzz
