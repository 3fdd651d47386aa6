// `ember template`: prints a conversation (and the tools it may call) rendered with a
// model's chat template (the compiled one in the file, or a Hugging Face tokenizer
// directory's, compiled here), exactly: no newline is added.
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
      {{"--messages"},
       true,
       "JSON file: a list of {\"role\": ..., \"content\": ...} (other keys such as "
       "tool_calls, tool_call_id, name are passed on; content may be null)"},
      {{"--tools"},
       true,
       "JSON file: the list of tool definitions the template gets as `tools` (OpenAI's "
       "{\"type\": \"function\", \"function\": {...}}); default: None"},
      {{"--no-generation-prompt"},
       false,
       "do not end with the assistant's turn opening (add_generation_prompt=False)"},
      {{"-h", "--help"}, false, "show this help"},
  };
  for (OptionSpec& spec : TemplateFlagSpecs()) specs.push_back(std::move(spec));
  return ArgParser(std::move(specs));
}

// A messages file as the strings the messages point into: each message's role, its
// content when it is a string, and its other keys (and a content that is not a string:
// null, a list of parts) as a JSON object in the file's key order.
struct MessagesFile {
  std::vector<std::string> role, content, extra;
};

Status ReadMessages(const std::string& path, MessagesFile* file,
                    std::vector<ChatMessage>* messages) {
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(ReadFile(path, &bytes));
  // Ordered: a template writing a message or its tool calls as JSON writes their keys in
  // the file's order, as Python's dicts keep it.
  const auto root = nlohmann::ordered_json::parse(bytes.begin(), bytes.end(), nullptr,
                                                  /*allow_exceptions=*/false);
  if (root.is_discarded()) return InvalidArgument("%s: not valid JSON", path.c_str());
  if (!root.is_array()) {
    return InvalidArgument("%s: expected a list of {\"role\", \"content\", ...} objects",
                           path.c_str());
  }
  *file = MessagesFile();
  for (size_t i = 0; i < root.size(); ++i) {
    const auto& m = root[i];
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string()) {
      return InvalidArgument("%s: message %zu has no string \"role\"", path.c_str(), i);
    }
    if (!m.contains("content")) {
      return InvalidArgument("%s: message %zu has no \"content\" (null for none)",
                             path.c_str(), i);
    }
    nlohmann::ordered_json extra = nlohmann::ordered_json::object();
    for (const auto& [key, value] : m.items()) {
      if (key != "role" && !(key == "content" && value.is_string())) extra[key] = value;
    }
    file->role.push_back(m["role"].get<std::string>());
    file->content.push_back(m["content"].is_string() ? m["content"].get<std::string>()
                                                     : std::string());
    file->extra.push_back(extra.empty() ? std::string() : extra.dump());
  }
  messages->clear();
  for (size_t i = 0; i < file->role.size(); ++i) {
    messages->push_back({file->role[i], file->content[i], file->extra[i]});
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
  MessagesFile file;
  std::vector<ChatMessage> messages;
  EMBER_RETURN_IF_ERROR(ReadMessages(args.Get("--messages"), &file, &messages));
  // The tools file's text as it is: the render reads it, keys in their order.
  std::string tools;
  if (args.Has("--tools")) {
    std::vector<uint8_t> bytes;
    EMBER_RETURN_IF_ERROR(ReadFile(args.Get("--tools"), &bytes));
    tools.assign(bytes.begin(), bytes.end());
    if (tools.find_first_not_of(" \t\n\r") == std::string::npos) {
      return InvalidArgument("%s: empty (give a JSON list of tool definitions)",
                             args.Get("--tools").c_str());
    }
    options.tools_json = tools;
  }

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
      "[--tools FILE.json] [--no-generation-prompt]\n",
      MakeParser(), argc, argv, &Template);
}

}  // namespace ember::tools
