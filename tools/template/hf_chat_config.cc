// tokenizer_config.json's chat fields (see hf_chat_config.h).
#include "tools/template/hf_chat_config.h"

namespace ember::tools {

Status ReadChatTemplateField(const Json& root, const std::string& where,
                             std::string* source) {
  if (!root.is_object() || !root.contains("chat_template")) return Status::Ok();
  const Json& t = root["chat_template"];
  if (t.is_string()) {
    *source = t.get<std::string>();
  } else if (t.is_array()) {
    std::string chosen;
    for (const Json& named : t) {
      const JsonFields n(named, where + " chat_template");
      std::string name, text;
      EMBER_RETURN_IF_ERROR(n.String("name", true, "", &name));
      EMBER_RETURN_IF_ERROR(n.String("template", true, "", &text));
      if (name == "default") chosen = text;
    }
    if (chosen.empty()) {
      return InvalidArgument("%s: chat_template lists no template named \"default\"",
                             where.c_str());
    }
    *source = chosen;
  } else if (!t.is_null()) {
    return InvalidArgument("%s: chat_template is neither a string nor a list",
                           where.c_str());
  }
  return Status::Ok();
}

std::string SpecialTokenText(const Json& root, const char* key) {
  if (!root.is_object() || !root.contains(key)) return "";
  const Json& token = root[key];
  if (token.is_string()) return token.get<std::string>();
  if (token.is_object() && token.contains("content") && token["content"].is_string()) {
    return token["content"].get<std::string>();
  }
  return "";
}

Status ReadHfChatConfig(const std::string& dir, std::string* source,
                        ChatProgramSpec* program) {
  const std::string path = dir + "/tokenizer_config.json";
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(path, &root));
  return CatchJsonErrors(path, [&] {
    EMBER_RETURN_IF_ERROR(ReadChatTemplateField(root, path, source));
    program->bos_token = SpecialTokenText(root, "bos_token");
    program->eos_token = SpecialTokenText(root, "eos_token");
    program->unk_token = SpecialTokenText(root, "unk_token");
    program->pad_token = SpecialTokenText(root, "pad_token");
    return Status::Ok();
  });
}

}  // namespace ember::tools
