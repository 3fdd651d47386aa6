// ChatTemplate: renders a conversation with the model's chat template, compiled at
// conversion (tools/template) into bytecode that runs here with no heap: one caller
// buffer holds the text and the render's scratch, and every loop and output is bounded.
#ifndef EMBER_RUNTIME_CHAT_CHAT_TEMPLATE_H_
#define EMBER_RUNTIME_CHAT_CHAT_TEMPLATE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/chat/template_value.h"
#include "runtime/status.h"

namespace ember {

// The compiled template as the model file holds it (schema/model.fbs, ChatProgram).
struct ChatProgramTables {
  uint32_t format_version = 0;
  const uint8_t* code = nullptr;
  size_t code_size = 0;
  const uint8_t* string_bytes = nullptr;
  size_t string_bytes_size = 0;
  const uint32_t* string_offsets = nullptr;  // num_strings + 1
  size_t num_strings = 0;
  const double* floats = nullptr;
  size_t num_floats = 0;
  uint32_t num_slots = 0, max_stack = 0, max_loops = 0;
  std::string_view bos_token, eos_token, unk_token, pad_token;
  const int32_t* end_of_turn_ids = nullptr;
  size_t num_end_of_turn_ids = 0;
};

struct ChatTemplateOptions {
  bool add_generation_prompt = true;  // end with the assistant's turn opening
  int enable_thinking = -1;           // -1: undefined; 0: false; 1: true (Qwen3 reads it)
  // The time strftime_now formats, in seconds since 1970 (UTC); negative: no clock, and
  // strftime_now is undefined.
  int64_t now_seconds = -1;
  // Instructions a render may run (0: 2^24, far more than any chat template needs); past
  // them it fails, whatever the template does.
  uint64_t max_steps = 0;
  // The tools the template may offer: a JSON array of tool definitions as OpenAI writes
  // them ([{"type": "function", "function": {"name", "description", "parameters"}}]),
  // the template's `tools`; empty: tools is None, as transformers passes it. It must
  // outlive the render. A template compiled before tools (version 1) refuses them.
  std::string_view tools_json;
};

// The buffer a chat renders a conversation in, for `text_bytes` bytes of input: the
// messages' roles and contents plus tools_json and every message's extra_json (which the
// render reads into values in its scratch). It holds the rendered text (the messages and
// the template's markup) and the render's scratch (its string concatenations copy each
// message a few times). A chat gives at least this to every conversation it holds
// (runtime/chat/chat.h), and the tools render within it too, so that a template that
// cannot render there is refused at conversion.
size_t ChatRenderBytes(size_t text_bytes);

class ChatTemplate {
 public:
  // Checks the program (version, constants, every instruction's operands and jump
  // targets, the limits) and binds to it. Ids must be < vocab_size.
  Status Init(const ChatProgramTables& tables, uint32_t vocab_size);
  bool empty() const { return t_.code_size == 0; }
  const ChatProgramTables& tables() const { return t_; }

  // Renders messages[0, n) into buffer[0, *length). The rest of the buffer is the
  // render's scratch (ChatRenderBytes is enough for real templates); ResourceExhausted
  // when the buffer is too small, InvalidArgument when tools_json or an extra_json is
  // not JSON of the right shape, or the template refuses the conversation
  // (raise_exception: "roles must alternate ...") or fails on it.
  Status Render(const ChatMessage* messages, size_t n, const ChatTemplateOptions& options,
                char* buffer, size_t capacity, size_t* length) const;

  bool IsEndOfTurn(int32_t id) const {
    for (size_t i = 0; i < t_.num_end_of_turn_ids; ++i) {
      if (t_.end_of_turn_ids[i] == id) return true;
    }
    return false;
  }

 private:
  ChatProgramTables t_;
  // Phi-4-mini's kind: it takes the tools in the system message (read once, at Init).
  bool tools_in_system_ = false;
};

namespace tmpl {
// The machine (template_vm.cc): runs a checked program over its inputs (the program's
// NumInputSlots(format_version) of them).
Status Run(const ChatProgramTables& program, const Value* inputs, uint64_t max_steps,
           Heap* heap);
}  // namespace tmpl

}  // namespace ember

#endif  // EMBER_RUNTIME_CHAT_CHAT_TEMPLATE_H_
