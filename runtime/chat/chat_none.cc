// Chat in a build without it (EMBER_WITH_CHAT=OFF: microcontrollers, firmware): replaces
// the chat template's VM (chat_template.cc, template_*.cc) and the chat turns (chat.cc).
// A model file that carries a compiled chat template still loads: the program is
// ignored, so the model reports none, and rendering it or starting a chat is refused
// with kUnimplemented. Stop strings and prompt states are not chat's alone and stay.
#include "runtime/chat/chat.h"
#include "runtime/chat/chat_template.h"

namespace ember {

namespace {

Status LeftOut() {
  return Unimplemented(
      "chat templates and chat turns are left out of this build (EMBER_WITH_CHAT=OFF)");
}

}  // namespace

Status ChatTemplate::Init(const ChatProgramTables&, uint32_t) {
  t_ = ChatProgramTables();  // the program, if any, is ignored: empty()
  return Status::Ok();
}

Status ChatTemplate::Render(const ChatMessage*, size_t, const ChatTemplateOptions&, char*,
                            size_t, size_t* length) const {
  *length = 0;
  return LeftOut();
}

size_t Chat::RequiredBytes(const Session&, const ChatOptions&) { return 0; }

Status Chat::Init(Session*, Sampler*, const ChatOptions&, void*, size_t) {
  return LeftOut();
}

Status Chat::SetSystem(std::string_view) { return LeftOut(); }

Status Chat::Add(std::string_view, std::string_view, std::string_view) {
  return LeftOut();
}

Status Chat::SetTools(std::string_view) { return LeftOut(); }

Status Chat::AttachImage(const float*, const PromptImage&) { return LeftOut(); }

void Chat::tool_call_id(size_t, char id[10]) const { id[0] = 0; }

Status Chat::Reply(size_t, StopStrings*, TokenCallback, void*, ChatTurnStats* stats) {
  *stats = ChatTurnStats();
  return LeftOut();
}

void Chat::CompactText() {}

Status Chat::Tokenize(const ChatMessage*, size_t, size_t, size_t, const int32_t** tokens,
                      size_t* n) {
  *tokens = nullptr;
  *n = 0;
  return LeftOut();
}

}  // namespace ember
