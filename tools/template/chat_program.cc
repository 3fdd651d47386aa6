// Compiling a model's chat template at conversion (see chat_program.h).
#include "tools/template/chat_program.h"

#include <cstdio>
#include <cstring>
#include <iterator>
#include <set>

#include "runtime/chat/chat_template_format.h"
#include "runtime/text/utf8.h"
#include "tools/template/jinja_compiler.h"
#include "tools/template/jinja_parser.h"

namespace ember::tools {
namespace {

// Control tokens the template writes (their text is in its strings or special token
// texts) become added tokens when the tokenizer has them only as pieces (llama2.c's BOS
// and EOS): a rendered conversation is then encoded with special-token parsing, as
// Hugging Face's apply_chat_template encodes it, and each becomes its id. Tokenizers from
// tokenizer.json list all theirs already.
void AddTemplateSpecials(const ChatProgramSpec& p, TokenizerSpec* tok) {
  std::vector<const std::string*> texts;
  for (const std::string& s : p.strings) texts.push_back(&s);
  for (const std::string* s : {&p.bos_token, &p.eos_token, &p.unk_token, &p.pad_token}) {
    texts.push_back(s);
  }
  std::set<uint32_t> ids;
  std::set<std::string> added;
  for (const TokenizerSpec::Added& a : tok->added) {
    ids.insert(a.id);
    added.insert(a.text);
  }
  for (uint32_t id = 0; id < tok->pieces.size(); ++id) {
    const std::string& piece = tok->pieces[id];
    size_t bad = 0;
    if (tok->types[id] != TokenType::kControl || piece.empty() ||
        !ValidUtf8(piece, &bad) || ids.count(id) || added.count(piece)) {
      continue;
    }
    for (const std::string* text : texts) {
      if (text->find(piece) != std::string::npos) {
        tok->added.push_back({id, piece, 0});
        added.insert(piece);
        break;
      }
    }
  }
}

// The token that ends an assistant's turn: the special token the template writes right
// after an assistant message's content (whitespace aside), found by rendering one.
std::vector<int32_t> EndOfTurn(const TokenizerSpec& tok, const ChatProgramSpec& p) {
  static const char kMark[] = "ZQXJ-ember-probe";
  const std::vector<ChatMessage> probe = {{"user", "Hello"}, {"assistant", kMark}};
  ChatTemplateOptions options;
  options.add_generation_prompt = false;
  std::string text;
  if (!RenderProgram(p, static_cast<uint32_t>(tok.pieces.size()), probe, options, &text)
           .ok()) {
    return {};
  }
  size_t at = text.find(kMark);
  if (at == std::string::npos) return {};
  at += sizeof(kMark) - 1;
  // Right after the content, or after whitespace (" </s>"); pieces may hold whitespace
  // themselves (llama2.c's EOS is "\n</s>\n").
  for (; at < text.size(); ++at) {
    const TokenizerSpec::Added* best = nullptr;
    for (const TokenizerSpec::Added& a : tok.added) {
      if (tok.types[a.id] != TokenType::kNormal &&
          text.compare(at, a.text.size(), a.text) == 0 &&
          (!best || a.text.size() > best->text.size())) {
        best = &a;
      }
    }
    if (best) return {static_cast<int32_t>(best->id)};
    if (text[at] != ' ' && text[at] != '\n') break;
  }
  return {};
}

// A template whose output or scratch outgrows the buffer a chat gives even a short
// conversation ("x" * 10**9, a string doubled in a loop) can never render in one: it is
// refused now rather than stored. Templates may refuse a system message or want roles to
// alternate (raise_exception, which the runtime reports on each turn): the conversation
// is tried without its system message too, and only running out of buffer or of steps
// (a runaway loop, which would stall every turn for the whole budget) refuses.
Status CheckRendersWithinBudget(const TokenizerSpec& tok, const ChatProgramSpec& p) {
  static const ChatMessage kProbe[] = {{"system", "You are brief."},
                                       {"user", "Hello"},
                                       {"assistant", "Hi. How can I help?"},
                                       {"user", "Tell me a story."}};
  for (size_t first : {0, 1}) {
    const std::vector<ChatMessage> probe(std::begin(kProbe) + first, std::end(kProbe));
    std::string text;
    const Status s = RenderProgram(p, static_cast<uint32_t>(tok.pieces.size()), probe,
                                   ChatTemplateOptions(), &text);
    if (s.ok()) return s;
    if (s.code() == StatusCode::kResourceExhausted) {  // out of buffer, or of steps
      size_t bytes = 0;
      for (const ChatMessage& m : probe) bytes += m.role.size() + m.content.size();
      const char* why = s.message();
      const char kPrefix[] = "chat template: ";
      if (strncmp(why, kPrefix, sizeof(kPrefix) - 1) == 0) why += sizeof(kPrefix) - 1;
      return InvalidArgument(
          "chat template: a %zu-message conversation of %zu bytes does not render: %s",
          probe.size(), bytes, why);
    }
  }
  return Status::Ok();
}

}  // namespace

ChatProgramTables TablesOf(const ChatProgramSpec& p, ProgramStorage* storage) {
  storage->string_bytes.clear();
  storage->string_offsets.assign(1, 0);
  for (const std::string& s : p.strings) {
    storage->string_bytes.insert(storage->string_bytes.end(), s.begin(), s.end());
    storage->string_offsets.push_back(
        static_cast<uint32_t>(storage->string_bytes.size()));
  }
  ChatProgramTables t;
  t.format_version = tmpl::kFormatVersion;
  t.code = p.code.data();
  t.code_size = p.code.size();
  t.string_bytes = storage->string_bytes.data();
  t.string_bytes_size = storage->string_bytes.size();
  t.string_offsets = storage->string_offsets.data();
  t.num_strings = p.strings.size();
  t.floats = p.floats.data();
  t.num_floats = p.floats.size();
  t.num_slots = p.num_slots;
  t.max_stack = p.max_stack;
  t.max_loops = p.max_loops;
  t.bos_token = p.bos_token;
  t.eos_token = p.eos_token;
  t.unk_token = p.unk_token;
  t.pad_token = p.pad_token;
  t.end_of_turn_ids = p.end_of_turn_ids.data();
  t.num_end_of_turn_ids = p.end_of_turn_ids.size();
  return t;
}

Status RenderProgram(const ChatProgramSpec& program, uint32_t vocab_size,
                     const std::vector<ChatMessage>& messages,
                     const ChatTemplateOptions& options, std::string* text) {
  ProgramStorage storage;
  ChatTemplate t;
  EMBER_RETURN_IF_ERROR(t.Init(TablesOf(program, &storage), vocab_size));
  return RenderToString(t, messages, options, text);
}

Status RenderToString(const ChatTemplate& t, const std::vector<ChatMessage>& messages,
                      const ChatTemplateOptions& options, std::string* text) {
  // The roles count too: a messages file may hold any, where a chat keeps its four.
  size_t bytes = options.tools_json.size();
  for (const ChatMessage& m : messages) {
    bytes += m.role.size() + m.content.size() + m.extra_json.size();
  }
  std::vector<char> buffer(ChatRenderBytes(bytes));
  size_t length = 0;
  const Status s = t.Render(messages.data(), messages.size(), options, buffer.data(),
                            buffer.size(), &length);
  if (s.ok()) text->assign(buffer.data(), length);
  return s;
}

Status CompileChatTemplate(TokenizerSpec* tok) {
  ChatProgramSpec& p = tok->chat_program;
  if (tok->chat_template.empty()) {
    p = ChatProgramSpec();
    return Status::Ok();
  }
  const auto piece = [&](int32_t id) {
    return id >= 0 && static_cast<size_t>(id) < tok->pieces.size() ? tok->pieces[id]
                                                                   : std::string();
  };
  if (p.bos_token.empty()) p.bos_token = piece(tok->bos_id);
  if (p.eos_token.empty()) p.eos_token = piece(tok->eos_id);
  jinja::Body body;
  EMBER_RETURN_IF_ERROR(jinja::Parse(tok->chat_template, &body));
  EMBER_RETURN_IF_ERROR(jinja::Compile(body, &p));
  EMBER_RETURN_IF_ERROR(CheckRendersWithinBudget(*tok, p));
  AddTemplateSpecials(p, tok);
  p.end_of_turn_ids = EndOfTurn(*tok, p);
  return Status::Ok();
}

}  // namespace ember::tools
