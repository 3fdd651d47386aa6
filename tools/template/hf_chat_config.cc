// tokenizer_config.json's chat fields (see hf_chat_config.h).
#include "tools/template/hf_chat_config.h"

namespace ember::tools {
namespace {

// chat_template: a string, or a list of {"name", "template"} of which "default" is the
// one a chat uses; absent or null leaves *source as it is.
Status ReadChatTemplateField(const Json& config, const std::string& where,
                             std::string* source) {
  const auto t = config.find("chat_template");
  if (t == config.end() || t->is_null()) return Status::Ok();
  if (t->is_string()) {
    *source = t->get<std::string>();
  } else if (t->is_array()) {
    std::string chosen;
    for (const Json& named : *t) {
      if (!named.is_object()) {
        return InvalidArgument(
            "%s: chat_template lists %s, not a {name, template} object", where.c_str(),
            named.type_name());
      }
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
  } else {
    return InvalidArgument("%s: chat_template is neither a string nor a list",
                           where.c_str());
  }
  return Status::Ok();
}

// A special token entry: "<s>" or {"content": "<s>", ...}; absent or null is "".
Status ReadSpecialTokenText(const Json& config, const std::string& where, const char* key,
                            std::string* text) {
  text->clear();
  const auto token = config.find(key);
  if (token == config.end() || token->is_null()) return Status::Ok();
  if (token->is_string()) {
    *text = token->get<std::string>();
    return Status::Ok();
  }
  const auto content = token->is_object() ? token->find("content") : token->end();
  if (!token->is_object() || content == token->end() || !content->is_string()) {
    return InvalidArgument("%s: '%s' must be a string or {\"content\": string}",
                           where.c_str(), key);
  }
  *text = content->get<std::string>();
  return Status::Ok();
}

}  // namespace

Status ReadChatConfigFields(const Json& config, const std::string& where,
                            std::string* source, ChatProgramSpec* program) {
  if (!config.is_object()) return InvalidArgument("%s: not a JSON object", where.c_str());
  EMBER_RETURN_IF_ERROR(ReadChatTemplateField(config, where, source));
  for (const auto& [key, text] :
       {std::pair<const char*, std::string*>{"bos_token", &program->bos_token},
        {"eos_token", &program->eos_token},
        {"unk_token", &program->unk_token},
        {"pad_token", &program->pad_token}}) {
    EMBER_RETURN_IF_ERROR(ReadSpecialTokenText(config, where, key, text));
  }
  return Status::Ok();
}

Status ReadHfChatConfig(const std::string& dir, std::string* source,
                        ChatProgramSpec* program) {
  const std::string path = dir + "/tokenizer_config.json";
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(path, &root));
  return CatchJsonErrors(
      path, [&] { return ReadChatConfigFields(root, path, source, program); });
}

}  // namespace ember::tools
