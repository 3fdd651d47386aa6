// `ember template`: prints a conversation rendered with a model's chat template (the
// compiled one in the file, or a Hugging Face tokenizer directory's, compiled here),
// exactly: no newline is added.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "runtime/model/model.h"
#include "tools/cli/args.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/commands.h"
#include "tools/cli/template_flags.h"
#include "tools/template/chat_program.h"
#include "tools/template/hf_chat_config.h"
#include "tools/template/jinja_compiler.h"
#include "tools/template/jinja_parser.h"
#include "tools/util/files.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

ArgParser MakeParser() {
  std::vector<OptionSpec> specs = {
      {{"-m", "--model"}, true, "model file (.ember) whose chat template renders"},
      {{"--tokenizer"},
       true,
       "or a Hugging Face tokenizer directory (its tokenizer_config.json's template)"},
      {{"--messages"}, true, "JSON file: a list of {\"role\": ..., \"content\": ...}"},
      {{"--no-generation-prompt"},
       false,
       "do not end with the assistant's turn opening (add_generation_prompt=False)"},
      {{"-h", "--help"}, false, "show this help"},
  };
  for (OptionSpec& spec : TemplateFlagSpecs()) specs.push_back(std::move(spec));
  return ArgParser(std::move(specs));
}

// The conversation of a messages file; the strings the messages point into stay in
// *storage.
Status ReadMessages(const std::string& path, std::vector<std::string>* storage,
                    std::vector<ChatMessage>* messages) {
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(path, &root));
  if (!root.is_array()) {
    return InvalidArgument("%s: expected a list of {\"role\", \"content\"} objects",
                           path.c_str());
  }
  storage->clear();
  storage->reserve(2 * root.size());
  for (size_t i = 0; i < root.size(); ++i) {
    const Json& m = root[i];
    for (const char* key : {"role", "content"}) {
      if (!m.is_object() || !m.contains(key) || !m[key].is_string()) {
        return InvalidArgument("%s: message %zu has no string \"%s\"", path.c_str(), i,
                               key);
      }
      storage->push_back(m[key].get<std::string>());
    }
  }
  messages->clear();
  for (size_t i = 0; i + 1 < storage->size(); i += 2) {
    messages->push_back({(*storage)[i], (*storage)[i + 1]});
  }
  return Status::Ok();
}

Status Template(const ArgParser& args) {
  if (args.Has("-m") == args.Has("--tokenizer")) {
    return InvalidArgument("give either -m MODEL or --tokenizer DIR");
  }
  if (!args.Has("--messages")) return InvalidArgument("missing --messages FILE.json");
  ChatTemplateOptions options;
  options.add_generation_prompt = !args.Has("--no-generation-prompt");
  EMBER_RETURN_IF_ERROR(ReadTemplateFlags(args, &options));
  std::vector<std::string> storage;
  std::vector<ChatMessage> messages;
  EMBER_RETURN_IF_ERROR(ReadMessages(args.Get("--messages"), &storage, &messages));

  std::string text;
  if (args.Has("--tokenizer")) {
    std::string source;
    ChatProgramSpec program;
    EMBER_RETURN_IF_ERROR(ReadHfChatConfig(args.Get("--tokenizer"), &source, &program));
    if (source.empty()) {
      return NotFound("%s/tokenizer_config.json has no chat_template",
                      args.Get("--tokenizer").c_str());
    }
    jinja::Body body;
    EMBER_RETURN_IF_ERROR(jinja::Parse(source, &body));
    EMBER_RETURN_IF_ERROR(jinja::Compile(body, &program));
    EMBER_RETURN_IF_ERROR(RenderProgram(program, 1, messages, options, &text));
  } else {
    auto model = Model::Open(args.Get("-m").c_str());
    if (!model.ok()) return model.status();
    const ChatTemplate& chat = (*model)->chat_template();
    if (chat.empty()) {
      return NotFound(
          "%s has no compiled chat template (convert it again, or with "
          "--chat-template FILE)",
          args.Get("-m").c_str());
    }
    EMBER_RETURN_IF_ERROR(RenderToString(chat, messages, options, &text));
  }
  fwrite(text.data(), 1, text.size(), stdout);
  fflush(stdout);
  return Status::Ok();
}

}  // namespace

int TemplateCommand(int argc, char** argv) {
  return RunSubcommand(
      "template",
      "usage: ember template (-m MODEL | --tokenizer DIR) --messages FILE.json "
      "[--no-generation-prompt]\n",
      MakeParser(), argc, argv, &Template);
}

}  // namespace ember::tools
