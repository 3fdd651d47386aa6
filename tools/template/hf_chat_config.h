// What a Hugging Face tokenizer_config.json says about chat: the template's source (a
// string, or the one named "default" in a list) and the special token texts it reads.
#ifndef EMBER_TOOLS_TEMPLATE_HF_CHAT_CONFIG_H_
#define EMBER_TOOLS_TEMPLATE_HF_CHAT_CONFIG_H_

#include <string>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "tools/util/json_util.h"

namespace ember::tools {

// tokenizer_config.json's chat fields: chat_template into *source (left as is when
// absent), the bos/eos/unk/pad_token texts into program's. A root that is not an object,
// or a field of the wrong type, is an error naming `where` (the file) and the key.
Status ReadChatConfigFields(const Json& config, const std::string& where,
                            std::string* source, ChatProgramSpec* program);
// The same, from DIR/tokenizer_config.json.
Status ReadHfChatConfig(const std::string& dir, std::string* source,
                        ChatProgramSpec* program);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_TEMPLATE_HF_CHAT_CONFIG_H_
