// GGUF tokenizer import (see gguf_tokenizer.h): the vocabulary tables, special ids and
// options of tokenizer.ggml.*, checked against each other, into a TokenizerSpec.
#include "tools/convert/gguf/gguf_tokenizer.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/text/tokenizer_internal.h"
#include "runtime/text/utf8.h"
#include "tools/convert/hf/hf_tokenizer_internal.h"
#include "tools/convert/pretokenizer_names.h"

namespace ember::tools {
namespace {

// GGUF token types (llama.cpp's llama_token_type).
enum GgufTokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// Control tokens that end a turn in the common chat formats (Llama 3, ChatML, Phi-3,
// Gemma, ...): generation stops at them as at EOS, as llama.cpp does.
constexpr const char* kEndOfTurnTexts[] = {"<|eot_id|>",   "<|eom_id|>",    "<|im_end|>",
                                           "<|end|>",      "<end_of_turn>", "<EOT>",
                                           "<|endoftext|>"};

void ReplaceAll(std::string* s, std::string_view from, std::string_view to) {
  for (size_t pos = 0; (pos = s->find(from, pos)) != std::string::npos;
       pos += to.size()) {
    s->replace(pos, from.size(), to);
  }
}

// Control and user-defined tokens are found in the text before anything else, as
// llama.cpp partitions it (control tokens only when special tokens are parsed): ember's
// added tokens, matched as written. A text no UTF-8 input can hold (empty, invalid,
// longer than the runtime's limit) is left out, and of tokens with the same text the
// first.
void SetAddedTokens(const std::vector<std::string_view>& tokens,
                    const std::vector<int32_t>& types, TokenizerSpec* tok) {
  tok->added.clear();
  std::set<std::string_view> seen;
  for (uint32_t i = 0; i < tokens.size(); ++i) {
    if (types[i] != kControl && types[i] != kUserDefined) continue;
    size_t bad;
    if (tokens[i].empty() || tokens[i].size() > tokenizer_internal::kMaxAddedBytes ||
        !ValidUtf8(tokens[i], &bad) || !seen.insert(tokens[i]).second) {
      continue;
    }
    tok->added.push_back({i, std::string(tokens[i]), 0});
  }
}

// A special token id key: absent or 0xFFFFFFFF (-1) is none; others must name a token.
Status SpecialId(const GgufFile& f, const char* key, uint32_t n, int64_t* id) {
  const GgufKv* kv = f.Find(key);
  *id = -1;
  if (!kv) return Status::Ok();
  int64_t v;
  EMBER_RETURN_IF_ERROR(f.GetInt(key, false, -1, -1, UINT32_MAX, &v));
  if (v == -1 || v == UINT32_MAX) return Status::Ok();
  if (v >= n) {
    return InvalidModel("GGUF: %s is %lld, outside the %u tokens", key,
                        static_cast<long long>(v), n);
  }
  *id = v;
  return Status::Ok();
}

// tokenizer.ggml.token_type: one integer per token (all normal when absent; llama.cpp
// writes int32, older files other integer widths).
Status TokenTypes(const GgufFile& f, uint32_t n, std::vector<int32_t>* types) {
  const char* const key = "tokenizer.ggml.token_type";
  const GgufKv* kv = f.Find(key);
  const GgufValue* array = kv ? &kv->value : nullptr;
  const bool integers = array && array->type == GgufType::kArray &&
                        GgufScalarBytes(array->element_type) != 0 &&
                        array->element_type != GgufType::kFloat32 &&
                        array->element_type != GgufType::kFloat64 &&
                        array->element_type != GgufType::kBool;
  if (array && !integers) {
    EMBER_RETURN_IF_ERROR(
        f.GetArray(key, GgufType::kInt32, false, &array));  // the message
  }
  types->assign(n, kNormal);
  if (!array) return Status::Ok();
  if (array->count != n) {
    return InvalidModel("GGUF: %s has %llu entries for %u tokens", key,
                        static_cast<unsigned long long>(array->count), n);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const double t = GgufNumberAt(*array, i);
    if (!(t >= kUndefined && t <= kByte)) {
      return InvalidModel("GGUF: token %u has unknown token type %.0f", i, t);
    }
    (*types)[i] = t == kUndefined ? kNormal : static_cast<int32_t>(t);
  }
  return Status::Ok();
}

TokenType EmberType(int32_t gguf_type) {
  switch (gguf_type) {
    case kUnknown:
      return TokenType::kUnknown;
    case kControl:
    case kUnused:  // never matched in text, decodes to nothing
      return TokenType::kControl;
    case kUserDefined:
      return TokenType::kUserDefined;
    case kByte:
      return TokenType::kByte;
    default:
      return TokenType::kNormal;
  }
}

Status SentencePiece(const GgufFile& f, const std::vector<std::string_view>& tokens,
                     const std::vector<int32_t>& types, TokenizerSpec* tok) {
  const uint32_t n = static_cast<uint32_t>(tokens.size());
  const GgufValue* scores;
  EMBER_RETURN_IF_ERROR(
      f.GetArray("tokenizer.ggml.scores", GgufType::kFloat32, false, &scores));
  if (scores && scores->count != n) {
    return InvalidModel("GGUF: tokenizer.ggml.scores has %llu entries for %u tokens",
                        static_cast<unsigned long long>(scores->count), n);
  }
  bool remove_extra_whitespaces;
  EMBER_RETURN_IF_ERROR(f.GetBool("tokenizer.ggml.remove_extra_whitespaces", false, false,
                                  &remove_extra_whitespaces));
  if (remove_extra_whitespaces) {
    return Unimplemented(
        "GGUF: tokenizer.ggml.remove_extra_whitespaces (SentencePiece "
        "normalization) is not supported");
  }
  tok->kind = TokenizerKind::kSentencePieceBpe;
  // llama.cpp writes spaces in the text as U+2581 before merging: U+2581 is a space.
  tok->metaspace_is_space = true;
  EMBER_RETURN_IF_ERROR(
      f.GetBool("tokenizer.ggml.add_space_prefix", false, true, &tok->add_dummy_prefix));
  tok->scores.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    tok->scores[i] = scores ? static_cast<float>(GgufNumberAt(*scores, i)) : 0.0f;
    if (tok->scores[i] != tok->scores[i]) {
      return InvalidModel("GGUF: the score of token %u is NaN", i);
    }
    std::string piece(tokens[i]);
    if (types[i] == kByte) {
      const bool hex = piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 &&
                       isxdigit(static_cast<unsigned char>(piece[3])) &&
                       isxdigit(static_cast<unsigned char>(piece[4])) && piece[5] == '>';
      if (!hex) {
        return InvalidModel("GGUF: byte token %u is %s, not <0xNN>", i,
                            GgufQuote(piece).c_str());
      }
    } else {
      ReplaceAll(&piece, kMetaSpace, " ");
    }
    tok->pieces.push_back(std::move(piece));
    tok->types.push_back(EmberType(types[i]));
  }
  SetAddedTokens(tokens, types, tok);
  return Status::Ok();
}

// llama.cpp's "bert" (WPM) vocabulary: its converter writes a word-start piece with a
// U+2581 prefix and a continuation without its "##" (special tokens as they are); ember
// stores them as they decode (" word", "ing"). [CLS] is tokenizer.ggml.cls_token_id (or
// BOS), [SEP] tokenizer.ggml.seperator_token_id (llama.cpp's spelling; or EOS), appended
// as llama.cpp does. The normalizer is BERT uncased's: llama.cpp lowercases every BERT
// vocabulary; it decomposes (NFD) without dropping the marks, where Hugging Face's
// uncased tokenizers strip them, which ember follows (accented text can differ).
Status WordPiece(const GgufFile& f, const std::vector<std::string_view>& tokens,
                 const std::vector<int32_t>& types, SpecialTokens* specials,
                 TokenizerSpec* tok) {
  const uint32_t n = static_cast<uint32_t>(tokens.size());
  tok->kind = TokenizerKind::kWordPiece;
  tok->pre_tokenizer = PreTokenizerKind::kBert;
  tok->normalizer = Normalization::kBert;
  tok->bert = {true, true, true, true};
  tok->wordpiece_prefix = "##";
  tok->add_dummy_prefix = false;
  for (uint32_t i = 0; i < n; ++i) {
    std::string piece(tokens[i]);
    const TokenType type = EmberType(types[i]);
    if (type == TokenType::kByte) {
      return InvalidModel("GGUF: a bert vocabulary with byte token %u", i);
    }
    if ((type == TokenType::kNormal || type == TokenType::kUserDefined) &&
        piece.compare(0, 3, kMetaSpace) == 0) {
      piece = " " + piece.substr(3);
    }
    tok->pieces.push_back(std::move(piece));
    tok->types.push_back(type);
  }
  int64_t cls, sep;
  EMBER_RETURN_IF_ERROR(SpecialId(f, "tokenizer.ggml.cls_token_id", n, &cls));
  EMBER_RETURN_IF_ERROR(SpecialId(f, "tokenizer.ggml.seperator_token_id", n, &sep));
  if (cls >= 0) specials->bos_id = cls;
  if (sep >= 0) specials->eos_id = sep;
  tok->bos_id = static_cast<int32_t>(specials->bos_id);
  tok->eos_id = static_cast<int32_t>(specials->eos_id);
  bool add_sep;
  EMBER_RETURN_IF_ERROR(f.GetBool("tokenizer.ggml.add_sep_token", false, true, &add_sep));
  tok->append_eos = add_sep && tok->eos_id >= 0;
  SetAddedTokens(tokens, types, tok);
  return Status::Ok();
}

Status ByteLevel(const GgufFile& f, const std::vector<std::string_view>& tokens,
                 const std::vector<int32_t>& types, const SpecialTokens& specials,
                 TokenizerSpec* tok) {
  std::string_view pre;
  EMBER_RETURN_IF_ERROR(f.GetString("tokenizer.ggml.pre", false, &pre));
  if (pre.empty()) {
    return Unimplemented(
        "GGUF: no tokenizer.ggml.pre names the byte-level BPE pre-tokenizer (llama.cpp "
        "then guesses one; ember does not)");
  }
  PreTokenizerKind pre_tokenizer;
  bool ignore_merges;
  const Status named =
      PreTokenizerForGgufName(std::string(pre), &pre_tokenizer, &ignore_merges);
  if (!named.ok()) {
    return Unimplemented("GGUF: %s", named.message());
  }
  const GgufValue* merges;
  EMBER_RETURN_IF_ERROR(
      f.GetArray("tokenizer.ggml.merges", GgufType::kString, true, &merges));
  RawVocab v;
  const uint32_t n = static_cast<uint32_t>(tokens.size());
  v.pieces.reserve(n);
  v.present.assign(n, true);
  for (uint32_t i = 0; i < n; ++i) {
    v.pieces.emplace_back(tokens[i]);
    if (!v.ids.emplace(v.pieces.back(), i).second) {
      return InvalidModel("GGUF: tokens %u and %u are both %s", v.ids[v.pieces.back()], i,
                          GgufQuote(tokens[i]).c_str());
    }
    // Control, user-defined, unused and unknown tokens are raw text, not spelled in the
    // byte alphabet.
    if (types[i] != kNormal && types[i] != kByte) {
      v.added[i] = AddedToken{v.pieces.back(), types[i] != kUserDefined};
    }
  }
  const std::vector<std::string_view> lines = GgufStrings(*merges);
  for (size_t rank = 0; rank < lines.size(); ++rank) {
    const std::string line(lines[rank]);
    EMBER_RETURN_IF_ERROR(
        AddMerge("GGUF tokenizer.ggml.merges", rank, nullptr, &line, &v));
  }
  EMBER_RETURN_IF_ERROR(BuildByteLevel("GGUF", v, specials, tok));
  for (uint32_t i = 0; i < n; ++i) {
    if (types[i] == kUnknown) tok->types[i] = TokenType::kUnknown;
  }
  tok->pre_tokenizer = pre_tokenizer;
  tok->ignore_merges = ignore_merges;
  // Qwen's tokenizer.json normalizes to NFC, which llama.cpp leaves out: ember keeps
  // the model's own tokenization (the same ids for text already in NFC).
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") tok->normalizer = Normalization::kNfc;
  SetAddedTokens(tokens, types, tok);
  return Status::Ok();
}

}  // namespace

Status ReadGgufTokenizer(const GgufFile& f, uint32_t vocab_size, TokenizerSpec* tok) {
  *tok = TokenizerSpec();
  std::string_view model;
  EMBER_RETURN_IF_ERROR(f.GetString("tokenizer.ggml.model", true, &model));
  const GgufValue* tokens_array;
  EMBER_RETURN_IF_ERROR(
      f.GetArray("tokenizer.ggml.tokens", GgufType::kString, true, &tokens_array));
  const std::vector<std::string_view> tokens = GgufStrings(*tokens_array);
  if (tokens.empty() || tokens.size() > kMaxVocab) {
    return InvalidModel("GGUF: %zu tokens (1 to %llu allowed)", tokens.size(),
                        static_cast<unsigned long long>(kMaxVocab));
  }
  const uint32_t n = static_cast<uint32_t>(tokens.size());
  if (vocab_size != 0 && n != vocab_size) {
    return InvalidModel(
        "GGUF: %u tokens in tokenizer.ggml.tokens, but the embedding has "
        "%u rows",
        n, vocab_size);
  }
  std::vector<int32_t> types;
  EMBER_RETURN_IF_ERROR(TokenTypes(f, n, &types));
  SpecialTokens specials;
  int64_t unk_id, eot_id, eom_id, pad_id;
  EMBER_RETURN_IF_ERROR(SpecialId(f, "tokenizer.ggml.bos_token_id", n, &specials.bos_id));
  EMBER_RETURN_IF_ERROR(SpecialId(f, "tokenizer.ggml.eos_token_id", n, &specials.eos_id));
  EMBER_RETURN_IF_ERROR(SpecialId(f, "tokenizer.ggml.unknown_token_id", n, &unk_id));
  EMBER_RETURN_IF_ERROR(SpecialId(f, "tokenizer.ggml.eot_token_id", n, &eot_id));
  EMBER_RETURN_IF_ERROR(SpecialId(f, "tokenizer.ggml.eom_token_id", n, &eom_id));
  EMBER_RETURN_IF_ERROR(SpecialId(f, "tokenizer.ggml.padding_token_id", n, &pad_id));
  bool add_eos;
  EMBER_RETURN_IF_ERROR(
      f.GetBool("tokenizer.ggml.add_eos_token", false, false, &add_eos));
  if (add_eos && model != "bert") {  // BERT's [SEP] is its eos: appended (WordPiece)
    return Unimplemented(
        "GGUF: tokenizer.ggml.add_eos_token is true: ember does not end "
        "prompts with EOS");
  }
  bool add_bos;
  if (model == "llama") {
    EMBER_RETURN_IF_ERROR(
        f.GetBool("tokenizer.ggml.add_bos_token", false, true, &add_bos));
    EMBER_RETURN_IF_ERROR(SentencePiece(f, tokens, types, tok));
    tok->bos_id = static_cast<int32_t>(specials.bos_id);
    tok->eos_id = static_cast<int32_t>(specials.eos_id);
  } else if (model == "gpt2") {
    EMBER_RETURN_IF_ERROR(
        f.GetBool("tokenizer.ggml.add_bos_token", false, false, &add_bos));
    EMBER_RETURN_IF_ERROR(ByteLevel(f, tokens, types, specials, tok));
  } else if (model == "bert") {
    EMBER_RETURN_IF_ERROR(
        f.GetBool("tokenizer.ggml.add_bos_token", false, true, &add_bos));
    EMBER_RETURN_IF_ERROR(WordPiece(f, tokens, types, &specials, tok));
  } else {
    return Unimplemented(
        "GGUF: tokenizer.ggml.model %s is not supported (ember reads "
        "llama, gpt2 and bert)",
        GgufQuote(model).c_str());
  }
  tok->add_bos = add_bos;
  if (add_bos && tok->bos_id < 0) {
    return InvalidModel(
        "GGUF: tokenizer.ggml.add_bos_token is true but there is no "
        "tokenizer.ggml.bos_token_id");
  }
  tok->unk_id = static_cast<int32_t>(unk_id);
  tok->pad_id = static_cast<int32_t>(pad_id);
  if (tok->kind == TokenizerKind::kWordPiece && unk_id < 0) {
    return InvalidModel("GGUF: a bert vocabulary without tokenizer.ggml.unknown_token_id");
  }
  if (unk_id >= 0) tok->types[unk_id] = TokenType::kUnknown;
  for (int64_t id : {specials.bos_id, specials.eos_id, eot_id, eom_id, pad_id}) {
    if (id >= 0 && tok->types[id] != TokenType::kUnknown)
      tok->types[id] = TokenType::kControl;
  }
  for (int64_t id : {specials.eos_id, eot_id, eom_id}) {
    if (id >= 0) tok->stop_ids.push_back(static_cast<int32_t>(id));
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (tok->types[i] != TokenType::kControl) continue;
    for (const char* text : kEndOfTurnTexts) {
      if (tok->pieces[i] == text) tok->stop_ids.push_back(static_cast<int32_t>(i));
    }
  }
  std::sort(tok->stop_ids.begin(), tok->stop_ids.end());
  tok->stop_ids.erase(std::unique(tok->stop_ids.begin(), tok->stop_ids.end()),
                      tok->stop_ids.end());
  // Byte-level BPE starts from one piece per byte: all 256 must be there (as the loader
  // requires), and none may be a special token.
  bool has_byte[256] = {};
  for (uint32_t i = 0; i < n && tok->kind == TokenizerKind::kByteLevelBpe; ++i) {
    const TokenType t = tok->types[i];
    if (tok->pieces[i].size() == 1 &&
        (t == TokenType::kNormal || t == TokenType::kUserDefined)) {
      has_byte[static_cast<uint8_t>(tok->pieces[i][0])] = true;
    }
  }
  for (int b = 0; b < 256 && tok->kind == TokenizerKind::kByteLevelBpe; ++b) {
    if (!has_byte[b]) {
      return InvalidModel(
          "GGUF: the byte-level vocabulary has no ordinary token for byte 0x%02x", b);
    }
  }
  std::string_view chat_template;
  EMBER_RETURN_IF_ERROR(f.GetString("tokenizer.chat_template", false, &chat_template));
  tok->chat_template = std::string(chat_template);
  // What the template reads as bos_token and eos_token (compiled when the model is
  // written): the texts of those ids, as llama.cpp renders them.
  for (auto [id, text] :
       {std::pair<int32_t, std::string*>{tok->bos_id, &tok->chat_program.bos_token},
        {tok->eos_id, &tok->chat_program.eos_token}}) {
    if (id >= 0 && static_cast<uint32_t>(id) < n) *text = tok->pieces[id];
  }
  // As they decode (byte-level pieces spell a byte in up to 2 UTF-8 bytes, "▁" takes 3).
  for (uint32_t i = 0; i < n; ++i) {
    if (tok->pieces[i].size() > tokenizer_internal::kMaxPieceBytes) {
      return InvalidModel("GGUF: token %u is %zu bytes long (ember's limit is %zu)", i,
                          tok->pieces[i].size(), tokenizer_internal::kMaxPieceBytes);
    }
  }
  // The runtime finds pieces by binary search: searchable pieces must be unique.
  const std::vector<uint32_t> sorted = SortedPieceIds(*tok);
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (tok->pieces[sorted[i]] == tok->pieces[sorted[i - 1]]) {
      return InvalidModel("GGUF: tokens %u and %u are both %s", sorted[i - 1], sorted[i],
                          GgufQuote(tok->pieces[sorted[i]]).c_str());
    }
  }
  return Status::Ok();
}

}  // namespace ember::tools
