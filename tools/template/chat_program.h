// A model's chat template at conversion: compiled (jinja_*), with the special token
// texts it reads, the control tokens it writes and the tokens that end an assistant's
// turn, resolved against the vocabulary.
#ifndef EMBER_TOOLS_TEMPLATE_CHAT_PROGRAM_H_
#define EMBER_TOOLS_TEMPLATE_CHAT_PROGRAM_H_

#include <string>
#include <vector>

#include "runtime/chat/chat_template.h"
#include "runtime/model/model_writer.h"
#include "runtime/status.h"

namespace ember::tools {

// Compiles tokenizer->chat_template (when not empty) into tokenizer->chat_program. The
// special token texts already in chat_program (tokenizer_config.json's) stay; missing
// ones are the pieces of the tokenizer's BOS and EOS. A construct the runtime cannot run
// is an error naming it and its line; so is a template that cannot render a short
// conversation within the buffer a chat gives it (ChatRenderBytes).
Status CompileChatTemplate(TokenizerSpec* tokenizer);

// A view of a compiled program for the runtime's ChatTemplate (its strings laid out in
// `storage`, which must outlive the tables).
struct ProgramStorage {
  std::vector<uint8_t> string_bytes;
  std::vector<uint32_t> string_offsets;
};
ChatProgramTables TablesOf(const ChatProgramSpec& program, ProgramStorage* storage);

// Renders messages into a string, within the buffer a chat would give them
// (ChatRenderBytes of their roles', contents' and extra_json's bytes and tools_json's):
// ResourceExhausted past it.
Status RenderToString(const ChatTemplate& chat_template,
                      const std::vector<ChatMessage>& messages,
                      const ChatTemplateOptions& options, std::string* text);
// The same with a compiled program.
Status RenderProgram(const ChatProgramSpec& program, uint32_t vocab_size,
                     const std::vector<ChatMessage>& messages,
                     const ChatTemplateOptions& options, std::string* text);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_TEMPLATE_CHAT_PROGRAM_H_
