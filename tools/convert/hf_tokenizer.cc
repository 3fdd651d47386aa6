// Hugging Face tokenizer import (see hf_tokenizer.h). Pieces are stored as the raw bytes
// they decode to: byte-level pieces leave GPT-2's alphabet, SentencePiece pieces turn
// "▁" back into a space.
#include "tools/convert/hf_tokenizer.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

#include "runtime/utf8.h"
#include "tools/convert/hf_tokenizer_internal.h"
#include "tools/util/files.h"
#include "tools/util/json_util.h"
#include "tools/util/parse.h"

namespace ember::tools {
namespace {

struct ByteAlphabet {
  uint32_t to_unicode[256];
  int16_t to_byte[256 + 68];  // code point -> byte, or -1
  ByteAlphabet() {
    for (int16_t& b : to_byte) b = -1;
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable =
          (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      to_unicode[b] = printable ? b : next++;
      to_byte[to_unicode[b]] = static_cast<int16_t>(b);
    }
  }
};

const ByteAlphabet& Alphabet() {
  static const ByteAlphabet alphabet;
  return alphabet;
}

void ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s->find(from, pos)) != std::string::npos;
       pos += to.size()) {
    s->replace(pos, from.size(), to);
  }
}

bool FileExists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// Ids are dense: each is below the number of pieces (`limit`).
Status AddPiece(const std::string& where, const std::string& piece, const Json& id_json,
                uint64_t limit, RawVocab* v) {
  if (!id_json.is_number_unsigned() || id_json.get<uint64_t>() >= limit) {
    return InvalidArgument("%s: the id of piece '%.60s' is not an integer in [0, %llu)",
                           where.c_str(), piece.c_str(),
                           static_cast<unsigned long long>(limit));
  }
  const uint32_t id = static_cast<uint32_t>(id_json.get<uint64_t>());
  if (id >= v->pieces.size()) {
    v->pieces.resize(id + 1);
    v->present.resize(id + 1, false);
  }
  if (v->present[id]) {
    return InvalidArgument("%s: two pieces have id %u", where.c_str(), id);
  }
  v->pieces[id] = piece;
  v->present[id] = true;
  v->ids.emplace(piece, id);
  return Status::Ok();
}

}  // namespace

Status ReadVocabObject(const std::string& where, const Json& vocab, RawVocab* v) {
  if (!vocab.is_object() || vocab.size() > kMaxVocab) {
    return InvalidArgument("%s: the vocabulary is not an object of up to %llu piece: id",
                           where.c_str(), static_cast<unsigned long long>(kMaxVocab));
  }
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    EMBER_RETURN_IF_ERROR(AddPiece(where, it.key(), it.value(), vocab.size(), v));
  }
  return Status::Ok();
}

// One merge as "left right" (merges.txt, older tokenizer.json) or ["left", "right"].
Status AddMerge(const std::string& where, size_t rank, const Json* pair,
                const std::string* line, RawVocab* v) {
  std::string left, right;
  if (line) {
    const size_t space = line->find(' ');
    if (space == std::string::npos || line->find(' ', space + 1) != std::string::npos) {
      return InvalidArgument("%s: merge %zu ('%.60s') is not two pieces", where.c_str(),
                             rank, line->c_str());
    }
    left = line->substr(0, space);
    right = line->substr(space + 1);
  } else if (pair->is_array() && pair->size() == 2 && (*pair)[0].is_string() &&
             (*pair)[1].is_string()) {
    left = (*pair)[0].get<std::string>();
    right = (*pair)[1].get<std::string>();
  } else if (pair->is_string()) {
    const std::string text = pair->get<std::string>();
    return AddMerge(where, rank, nullptr, &text, v);
  } else {
    return InvalidArgument("%s: merge %zu is not \"left right\" or [left, right]",
                           where.c_str(), rank);
  }
  v->merges.emplace_back(std::move(left), std::move(right));
  return Status::Ok();
}

Status ReadAddedTokens(const std::string& where, const Json& list, RawVocab* v) {
  if (list.is_null()) return Status::Ok();
  if (!list.is_array())
    return InvalidArgument("%s: added_tokens is not a list", where.c_str());
  for (const Json& token : list) {
    const JsonFields f(token, where + " added_tokens");
    int64_t id;
    AddedToken added;
    EMBER_RETURN_IF_ERROR(f.Int("id", true, 0, 0, kMaxVocab - 1, &id));
    EMBER_RETURN_IF_ERROR(f.String("content", true, "", &added.content));
    EMBER_RETURN_IF_ERROR(f.Bool("special", false, true, &added.special));
    v->added[static_cast<uint32_t>(id)] = added;
  }
  return Status::Ok();
}

namespace {

// Finishes a tokenizer: added and special tokens, dense ids, unique pieces.
Status Finish(const std::string& where, const RawVocab& v, const SpecialTokens& specials,
              TokenizerSpec* tok) {
  for (const auto& [id, added] : v.added) {
    if (id >= v.pieces.size() + v.added.size()) {  // ids must stay dense
      return InvalidArgument("%s: added token id %u is past the %zu pieces",
                             where.c_str(), id, v.pieces.size() + v.added.size());
    }
    if (id >= tok->pieces.size()) {
      tok->pieces.resize(id + 1);
      tok->types.resize(id + 1, TokenType::kControl);
      if (!tok->scores.empty()) tok->scores.resize(id + 1, 0.0f);
    }
    tok->pieces[id] = added.content;
    tok->types[id] = added.special ? TokenType::kControl : TokenType::kUserDefined;
  }
  for (size_t id = 0; id < tok->pieces.size(); ++id) {
    if ((id >= v.present.size() || !v.present[id]) && !v.added.count(id)) {
      return InvalidArgument("%s: no piece has id %zu (ids must be 0 to %zu)",
                             where.c_str(), id, tok->pieces.size() - 1);
    }
  }
  const int64_t n = static_cast<int64_t>(tok->pieces.size());
  for (int64_t id : {specials.bos_id, specials.eos_id}) {
    if (id >= n) {
      return InvalidArgument("%s: special token id %lld is outside the %lld pieces",
                             where.c_str(), static_cast<long long>(id),
                             static_cast<long long>(n));
    }
    if (id >= 0) tok->types[id] = TokenType::kControl;
  }
  tok->bos_id = static_cast<int32_t>(specials.bos_id);
  tok->eos_id = static_cast<int32_t>(specials.eos_id);
  const auto sorted = SortedPieceIds(*tok);
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (tok->pieces[sorted[i]] == tok->pieces[sorted[i - 1]]) {
      return InvalidArgument("%s: tokens %u and %u have the same bytes", where.c_str(),
                             sorted[i - 1], sorted[i]);
    }
  }
  return Status::Ok();
}

}  // namespace

Status BuildByteLevel(const std::string& where, const RawVocab& v,
                      const SpecialTokens& specials, TokenizerSpec* tok) {
  *tok = TokenizerSpec();
  tok->kind = TokenizerKind::kByteLevelBpe;
  tok->add_bos = specials.add_bos == 1;
  tok->add_dummy_prefix = false;
  tok->pieces.resize(v.pieces.size());
  tok->types.assign(v.pieces.size(), TokenType::kNormal);
  for (size_t id = 0; id < v.pieces.size(); ++id) {
    if (!v.present[id] || v.added.count(id)) continue;  // added tokens: raw text
    if (!ByteLevelDecode(v.pieces[id], &tok->pieces[id])) {
      return InvalidArgument(
          "%s: piece %zu ('%.60s') uses characters outside GPT-2's "
          "byte-level alphabet",
          where.c_str(), id, v.pieces[id].c_str());
    }
  }
  for (size_t rank = 0; rank < v.merges.size(); ++rank) {
    const auto& [left, right] = v.merges[rank];
    const auto l = v.ids.find(left), r = v.ids.find(right),
               result = v.ids.find(left + right);
    if (l == v.ids.end() || r == v.ids.end() || result == v.ids.end()) {
      return InvalidArgument(
          "%s: merge %zu ('%.40s' + '%.40s') names a piece that is not "
          "in the vocabulary",
          where.c_str(), rank, left.c_str(), right.c_str());
    }
    tok->merges.push_back(
        {l->second, r->second, result->second, static_cast<uint32_t>(rank)});
  }
  // A pair listed twice keeps its first (lowest) rank.
  std::stable_sort(tok->merges.begin(), tok->merges.end(),
                   [](const TokenizerSpec::Merge& a, const TokenizerSpec::Merge& b) {
                     return a.left != b.left ? a.left < b.left : a.right < b.right;
                   });
  tok->merges.erase(
      std::unique(tok->merges.begin(), tok->merges.end(),
                  [](const TokenizerSpec::Merge& a, const TokenizerSpec::Merge& b) {
                    return a.left == b.left && a.right == b.right;
                  }),
      tok->merges.end());
  return Finish(where, v, specials, tok);
}

// SentencePiece-style BPE: the llama2.c encoder merges the adjacent pair whose
// concatenation has the highest score, so a piece's score is minus the rank of the first
// merge that makes it (pieces no merge makes score -1e9).
Status BuildSentencePiece(const std::string& where, const RawVocab& v,
                          const std::string& unk_token, bool dummy_prefix,
                          const SpecialTokens& specials, TokenizerSpec* tok) {
  *tok = TokenizerSpec();
  tok->kind = TokenizerKind::kSentencePieceBpe;
  tok->add_bos = specials.add_bos != 0;
  tok->add_dummy_prefix = dummy_prefix;
  const size_t n = v.pieces.size();
  tok->pieces.resize(n);
  tok->types.assign(n, TokenType::kNormal);
  tok->scores.assign(n, -1e9f);
  for (size_t id = 0; id < n; ++id) {
    std::string piece = v.pieces[id];
    uint32_t cp;
    if (!piece.empty() && DecodeUtf8(piece, 0, &cp) == piece.size()) tok->scores[id] = 0;
    if (!v.present[id]) continue;
    if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>') {
      tok->types[id] = TokenType::kByte;
    } else if (!unk_token.empty() && piece == unk_token) {
      tok->types[id] = TokenType::kUnknown;
      tok->unk_id = static_cast<int32_t>(id);
    }
    ReplaceAll(&piece, kMetaSpace, " ");
    tok->pieces[id] = std::move(piece);
  }
  for (size_t rank = v.merges.size(); rank-- > 0;) {
    const auto& [left, right] = v.merges[rank];
    const auto result = v.ids.find(left + right);
    if (result == v.ids.end() || !v.ids.count(left) || !v.ids.count(right)) {
      return InvalidArgument(
          "%s: merge %zu ('%.40s' + '%.40s') names a piece that is not "
          "in the vocabulary",
          where.c_str(), rank, left.c_str(), right.c_str());
    }
    tok->scores[result->second] = -static_cast<float>(rank);
  }
  return Finish(where, v, specials, tok);
}

namespace {

// tokenizer_config.json: add_bos_token, bos/eos token text, added_tokens_decoder and
// the chat template (a string, or a list of named templates of which "default" is the
// one a chat uses).
Status ReadTokenizerConfig(const std::string& path, SpecialTokens* specials,
                           std::map<uint32_t, AddedToken>* added, std::string* bos_text,
                           std::string* eos_text, std::string* chat_template) {
  Json root;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(path, &root));
  const JsonFields f(root, path);
  if (specials->add_bos < 0 && f.Has("add_bos_token")) {
    bool add_bos;
    EMBER_RETURN_IF_ERROR(f.Bool("add_bos_token", false, false, &add_bos));
    specials->add_bos = add_bos;
  }
  for (auto [key, out] : {std::pair<const char*, std::string*>{"bos_token", bos_text},
                          {"eos_token", eos_text}}) {
    if (!root.is_object() || !root.contains(key)) continue;
    const Json& token = root[key];
    if (token.is_string()) *out = token.get<std::string>();
    if (token.is_object() && token.contains("content") && token["content"].is_string()) {
      *out = token["content"].get<std::string>();
    }
  }
  if (root.is_object() && root.contains("chat_template")) {
    const Json& t = root["chat_template"];
    if (t.is_string()) {
      *chat_template = t.get<std::string>();
    } else if (t.is_array()) {
      for (const Json& named : t) {
        const JsonFields n(named, path + " chat_template");
        std::string name, source;
        EMBER_RETURN_IF_ERROR(n.String("name", true, "", &name));
        EMBER_RETURN_IF_ERROR(n.String("template", true, "", &source));
        if (name == "default") *chat_template = source;
      }
      if (chat_template->empty()) {
        return InvalidArgument("%s: chat_template lists no template named \"default\"",
                               path.c_str());
      }
    } else if (!t.is_null()) {
      return InvalidArgument("%s: chat_template is neither a string nor a list",
                             path.c_str());
    }
  }
  if (root.is_object() && root.contains("added_tokens_decoder") &&
      root["added_tokens_decoder"].is_object()) {
    for (auto it = root["added_tokens_decoder"].begin();
         it != root["added_tokens_decoder"].end(); ++it) {
      int64_t id;
      EMBER_RETURN_IF_ERROR(
          ParseInt(it.key(), "added_tokens_decoder id", 0, kMaxVocab - 1, &id));
      const JsonFields t(it.value(), path + " added_tokens_decoder");
      AddedToken token;
      EMBER_RETURN_IF_ERROR(t.String("content", true, "", &token.content));
      EMBER_RETURN_IF_ERROR(t.Bool("special", false, true, &token.special));
      added->emplace(static_cast<uint32_t>(id), token);
    }
  }
  return Status::Ok();
}

}  // namespace

uint32_t ByteToUnicode(uint8_t byte) { return Alphabet().to_unicode[byte]; }

bool ByteLevelDecode(const std::string& piece, std::string* bytes) {
  bytes->clear();
  for (size_t pos = 0; pos < piece.size();) {
    uint32_t cp;
    const size_t len = DecodeUtf8(piece, pos, &cp);
    if (len == 0 || cp >= 256 + 68 || Alphabet().to_byte[cp] < 0) return false;
    bytes->push_back(static_cast<char>(Alphabet().to_byte[cp]));
    pos += len;
  }
  return true;
}

std::string ByteLevelEncode(const std::string& bytes) {
  std::string s;
  for (unsigned char b : bytes) {
    const uint32_t cp = Alphabet().to_unicode[b];  // < 0x800: one or two UTF-8 bytes
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return s;
}

Status ReadVocabAndMerges(const std::string& vocab_path, const std::string& merges_path,
                          const SpecialTokens& specials, TokenizerSpec* tok) {
  Json vocab;
  EMBER_RETURN_IF_ERROR(ReadJsonFile(vocab_path, &vocab));
  RawVocab v;
  EMBER_RETURN_IF_ERROR(ReadVocabObject(vocab_path, vocab, &v));
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(ReadFile(merges_path, &bytes));
  const std::string text(bytes.begin(), bytes.end());
  size_t start = 0;
  for (bool first = true; start < text.size(); first = false) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (first && line.rfind("#version", 0) == 0)) continue;
    EMBER_RETURN_IF_ERROR(AddMerge(merges_path, v.merges.size(), nullptr, &line, &v));
  }
  return BuildByteLevel(vocab_path, v, specials, tok);
}

Status ReadHfTokenizer(const std::string& dir, uint32_t vocab_size,
                       SpecialTokens specials, TokenizerSpec* tok) {
  std::map<uint32_t, AddedToken> config_added;
  std::string bos_text, eos_text, chat_template;
  const std::string config_path = dir + "/tokenizer_config.json";
  if (FileExists(config_path)) {
    EMBER_RETURN_IF_ERROR(CatchJsonErrors(config_path, [&] {
      return ReadTokenizerConfig(config_path, &specials, &config_added, &bos_text,
                                 &eos_text, &chat_template);
    }));
  }
  const std::string json_path = dir + "/tokenizer.json";
  const std::string vocab_path = dir + "/vocab.json", merges_path = dir + "/merges.txt";
  std::string where;
  if (FileExists(json_path)) {
    where = json_path;
    EMBER_RETURN_IF_ERROR(ReadTokenizerJson(json_path, specials, tok));
  } else if (FileExists(vocab_path) && FileExists(merges_path)) {
    where = vocab_path;
    EMBER_RETURN_IF_ERROR(ReadVocabAndMerges(vocab_path, merges_path, specials, tok));
    for (const auto& [id, added] : config_added) {  // specials vocab.json cannot mark
      if (id < tok->types.size() && added.special) tok->types[id] = TokenType::kControl;
    }
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
  if (tok->pieces.size() > vocab_size) {
    return InvalidArgument(
        "%s: the tokenizer has %zu pieces but the model's vocab_size is "
        "%u",
        where.c_str(), tok->pieces.size(), vocab_size);
  }
  tok->chat_template = chat_template;
  // Embedding rows past the tokenizer (vocabularies padded for speed) decode to nothing.
  tok->pieces.resize(vocab_size);
  tok->types.resize(vocab_size, TokenType::kControl);
  if (!tok->scores.empty()) tok->scores.resize(vocab_size, 0.0f);
  return Status::Ok();
}

}  // namespace ember::tools
