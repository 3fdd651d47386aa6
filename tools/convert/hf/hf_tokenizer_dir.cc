// A Hugging Face tokenizer directory: tokenizer_config.json (BOS and EOS, add_bos_token,
// added tokens, the chat template) with tokenizer.json or vocab.json + merges.txt; and
// the same tokenizer bound as the runtime binds it, without a model
// (runtime/model/loaded_tokenizer.h).
#include <unistd.h>

#include <algorithm>
#include <map>

#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/convert/hf/hf_tokenizer_internal.h"
#include "tools/template/hf_chat_config.h"
#include "tools/util/json_util.h"
#include "tools/util/parse.h"

namespace ember::tools {
namespace {

bool FileExists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// tokenizer_config.json: add_bos_token, added_tokens_decoder, and the chat fields: the
// template (a string, or a list of named templates of which "default" is the one a chat
// uses) and the special token texts it reads (bos_token and eos_token also name BOS and
// EOS when the tokenizer does not).
Status ReadTokenizerConfig(const std::string& path, SpecialTokens* specials,
                           std::map<uint32_t, AddedToken>* added,
                           std::string* chat_template, ChatProgramSpec* chat) {
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(path, &root));
  EMBER_RETURN_IF_ERROR(ReadChatConfigFields(root, path, chat_template, chat));
  const JsonFields f(root, path);
  if (f.Has("add_bos_token")) {
    bool add_bos;
    EMBER_RETURN_IF_ERROR(f.Bool("add_bos_token", false, false, &add_bos));
    if (specials->add_bos < 0) specials->add_bos = add_bos;
  }
  const auto decoder = root.find("added_tokens_decoder");
  if (decoder == root.end() || decoder->is_null()) return Status::Ok();
  if (!decoder->is_object()) {
    return InvalidArgument("%s: added_tokens_decoder is not an object of id: token",
                           path.c_str());
  }
  for (auto it = decoder->begin(); it != decoder->end(); ++it) {
    int64_t id;
    EMBER_RETURN_IF_ERROR(
        ParseInt(it.key(), "added_tokens_decoder id", 0, kMaxVocab - 1, &id));
    AddedToken token;
    EMBER_RETURN_IF_ERROR(
        ReadAddedToken(path + " added_tokens_decoder", it.value(), &token));
    added->emplace(static_cast<uint32_t>(id), token);
  }
  return Status::Ok();
}

}  // namespace

Status ReadHfTokenizer(const std::string& dir, uint32_t vocab_size,
                       SpecialTokens specials, TokenizerSpec* tok) {
  std::map<uint32_t, AddedToken> config_added;
  std::string chat_template;
  ChatProgramSpec chat;  // the special token texts the chat template reads
  const std::string config_path = dir + "/tokenizer_config.json";
  if (FileExists(config_path)) {
    EMBER_RETURN_IF_ERROR(CatchJsonErrors(config_path, [&] {
      return ReadTokenizerConfig(config_path, &specials, &config_added, &chat_template,
                                 &chat);
    }));
  }
  const std::string& bos_text = chat.bos_token;
  const std::string& eos_text = chat.eos_token;
  const std::string json_path = dir + "/tokenizer.json";
  const std::string vocab_path = dir + "/vocab.json", merges_path = dir + "/merges.txt";
  std::string where;
  if (FileExists(json_path)) {
    where = json_path;
    EMBER_RETURN_IF_ERROR(ReadTokenizerJson(json_path, specials, tok));
  } else if (FileExists(vocab_path) && FileExists(merges_path)) {
    where = vocab_path;
    EMBER_RETURN_IF_ERROR(ReadVocabAndMerges(vocab_path, merges_path, specials, tok));
    // Added tokens vocab.json cannot mark: matched in the text as tokenizer.json's are.
    RawVocab added;
    for (const auto& [id, token] : config_added) {
      if (id >= tok->types.size() || tok->pieces[id] != token.content) {
        return InvalidArgument("%s: added token %u ('%.60s') is not that piece",
                               config_path.c_str(), id, token.content.c_str());
      }
      tok->types[id] = token.special ? TokenType::kControl : TokenType::kUserDefined;
      const uint8_t flags = (token.lstrip ? kAddedLstrip : 0) |
                            (token.rstrip ? kAddedRstrip : 0) |
                            (token.normalized ? kAddedNormalized : 0);
      tok->added.push_back({id, token.content, flags});
      added.added[id] = token;
    }
    EMBER_RETURN_IF_ERROR(
        CheckAddedTokens(config_path, added, false, Normalization::kNone));
  } else {
    return NotFound(
        "%s: no tokenizer: expected tokenizer.json, or vocab.json and "
        "merges.txt (SentencePiece's tokenizer.model is not read)",
        dir.c_str());
  }
  // Special tokens named only by text in tokenizer_config.json.
  for (auto [text, id] :
       {std::pair<const std::string*, int32_t*>{&bos_text, &tok->bos_id},
        {&eos_text, &tok->eos_id}}) {
    if (*id >= 0 || text->empty()) continue;
    for (size_t i = 0; i < tok->pieces.size(); ++i) {
      if (tok->types[i] == TokenType::kControl && tok->pieces[i] == *text) {
        *id = static_cast<int32_t>(i);
      }
    }
  }
  // The padding token, named only by text in tokenizer_config.json (WordPiece's may come
  // from tokenizer.json's padding settings).
  if (tok->pad_id < 0 && !chat.pad_token.empty()) {
    for (size_t i = 0; i < tok->pieces.size(); ++i) {
      if (tok->types[i] == TokenType::kControl && tok->pieces[i] == chat.pad_token) {
        tok->pad_id = static_cast<int32_t>(i);
      }
    }
  }
  tok->chat_template = chat_template;
  // What the template reads (CompileChatTemplate compiles it when the model is written).
  tok->chat_program = chat;
  if (vocab_size == 0) return Status::Ok();  // the tokenizer alone
  // Special added tokens past the model's embedding rows are left out: the model cannot
  // embed them (Gemma 3's <image_soft_token>, id 262144, beside a 262144-row text model).
  while (tok->pieces.size() > vocab_size && tok->types.back() == TokenType::kControl &&
         static_cast<int64_t>(tok->pieces.size()) - 1 != tok->bos_id &&
         static_cast<int64_t>(tok->pieces.size()) - 1 != tok->eos_id) {
    tok->pieces.pop_back();
    tok->types.pop_back();
    if (!tok->scores.empty()) tok->scores.pop_back();
  }
  tok->added.erase(std::remove_if(tok->added.begin(), tok->added.end(),
                                  [&](const TokenizerSpec::Added& a) {
                                    return a.id >= tok->pieces.size();
                                  }),
                   tok->added.end());
  if (tok->pieces.size() > vocab_size) {
    return InvalidArgument(
        "%s: the tokenizer has %zu pieces but the model's vocab_size is "
        "%u",
        where.c_str(), tok->pieces.size(), vocab_size);
  }
  // Embedding rows past the tokenizer (vocabularies padded for speed) decode to nothing.
  tok->pieces.resize(vocab_size);
  tok->types.resize(vocab_size, TokenType::kControl);
  if (!tok->scores.empty()) tok->scores.resize(vocab_size, 0.0f);
  return Status::Ok();
}

Status LoadHfTokenizer(const std::string& dir, LoadedTokenizer* out) {
  TokenizerSpec tokenizer;
  EMBER_RETURN_IF_ERROR(ReadHfTokenizer(dir, 0, SpecialTokens(), &tokenizer));
  return LoadTokenizerSpec(tokenizer, "the tokenizer of " + dir, out);
}

}  // namespace ember::tools
