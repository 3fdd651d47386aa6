// What a Hugging Face tokenizer_config.json says about chat: the template's source (a
// string, or the one named "default" in a list) and the special token texts it reads.
#ifndef EMBER_TOOLS_TEMPLATE_HF_CHAT_CONFIG_H_
#define EMBER_TOOLS_TEMPLATE_HF_CHAT_CONFIG_H_

#include <string>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "tools/util/json_util.h"

namespace ember::tools {

// tokenizer_config.json's chat_template into *source (left as is when absent); `where`
// names the file in messages.
Status ReadChatTemplateField(const Json& config, const std::string& where,
                             std::string* source);
// The text of a special token entry ("bos_token": "<s>" or {"content": "<s>", ...}),
// empty when absent.
std::string SpecialTokenText(const Json& config, const char* key);
// Both, from DIR/tokenizer_config.json, the texts into program's bos/eos/unk/pad_token.
Status ReadHfChatConfig(const std::string& dir, std::string* source,
                        ChatProgramSpec* program);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_TEMPLATE_HF_CHAT_CONFIG_H_
