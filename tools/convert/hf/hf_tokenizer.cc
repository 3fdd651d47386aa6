// Hugging Face tokenizer import (see hf_tokenizer.h). Pieces are stored as the raw bytes
// they decode to: byte-level pieces leave GPT-2's alphabet, SentencePiece pieces turn
// "▁" back into a space.
#include "tools/convert/hf/hf_tokenizer.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

#include "runtime/text/utf8.h"
#include "tools/convert/hf/hf_tokenizer_internal.h"
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

Status ReadAddedToken(const std::string& where, const Json& token, AddedToken* added) {
  if (!token.is_object()) {
    return InvalidArgument("%s: an added token is %s, not an object", where.c_str(),
                           token.type_name());
  }
  const JsonFields f(token, where);
  EMBER_RETURN_IF_ERROR(f.String("content", true, "", &added->content));
  EMBER_RETURN_IF_ERROR(f.Bool("special", false, true, &added->special));
  EMBER_RETURN_IF_ERROR(f.Bool("lstrip", false, false, &added->lstrip));
  EMBER_RETURN_IF_ERROR(f.Bool("rstrip", false, false, &added->rstrip));
  EMBER_RETURN_IF_ERROR(f.Bool("single_word", false, false, &added->single_word));
  // Hugging Face's default: special tokens are matched in the text as written.
  EMBER_RETURN_IF_ERROR(f.Bool("normalized", false, !added->special, &added->normalized));
  if (added->content.empty()) {
    return InvalidArgument("%s: an added token is empty", where.c_str());
  }
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
    EMBER_RETURN_IF_ERROR(ReadAddedToken(where + " added_tokens", token, &added));
    EMBER_RETURN_IF_ERROR(f.Int("id", true, 0, 0, kMaxVocab - 1, &id));
    v->added[static_cast<uint32_t>(id)] = added;
  }
  return Status::Ok();
}

Status CheckAddedTokens(const std::string& where, const RawVocab& v, bool sentencepiece,
                        Normalization normalizer) {
  for (const auto& [id, added] : v.added) {
    if (added.single_word) {
      return InvalidArgument("%s: added token '%.60s' is single_word (not supported)",
                             where.c_str(), added.content.c_str());
    }
    if (!added.normalized) continue;
    if (normalizer != Normalization::kNone ||
        (sentencepiece && (added.content.find(' ') != std::string::npos ||
                           added.content.find(kMetaSpace) != std::string::npos))) {
      return InvalidArgument(
          "%s: added token '%.60s' is matched after a normalizer that may change it "
          "(\"normalized\": true): not supported",
          where.c_str(), added.content.c_str());
    }
  }
  return Status::Ok();
}

Status FinishTokenizer(const std::string& where, const RawVocab& v,
                       const SpecialTokens& specials, TokenizerSpec* tok) {
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
    // A piece is stored as it decodes: SentencePiece's "▁" is a space there too.
    std::string piece = added.content;
    if (tok->kind == TokenizerKind::kSentencePieceBpe)
      ReplaceAll(&piece, kMetaSpace, " ");
    tok->pieces[id] = piece;
    tok->types[id] = added.special ? TokenType::kControl : TokenType::kUserDefined;
    const uint8_t flags = (added.lstrip ? kAddedLstrip : 0) |
                          (added.rstrip ? kAddedRstrip : 0) |
                          (added.normalized ? kAddedNormalized : 0);
    tok->added.push_back({id, added.content, flags});
  }
  for (size_t id = 0; id < tok->pieces.size(); ++id) {
    if ((id >= v.present.size() || !v.present[id]) && !v.added.count(id)) {
      return InvalidArgument("%s: no piece has id %zu (ids must be 0 to %zu)",
                             where.c_str(), id, tok->pieces.size() - 1);
    }
  }
  const int64_t n = static_cast<int64_t>(tok->pieces.size());
  for (int64_t id : {specials.bos_id, specials.eos_id, specials.end_id}) {
    if (id >= n) {
      return InvalidArgument("%s: special token id %lld is outside the %lld pieces",
                             where.c_str(), static_cast<long long>(id),
                             static_cast<long long>(n));
    }
    if (id >= 0) tok->types[id] = TokenType::kControl;
  }
  tok->bos_id = static_cast<int32_t>(specials.bos_id);
  tok->eos_id = static_cast<int32_t>(specials.eos_id);
  tok->end_id = static_cast<int32_t>(specials.end_id);
  const auto sorted = SortedPieceIds(*tok);
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (tok->pieces[sorted[i]] == tok->pieces[sorted[i - 1]]) {
      return InvalidArgument("%s: tokens %u and %u have the same bytes", where.c_str(),
                             sorted[i - 1], sorted[i]);
    }
  }
  return Status::Ok();
}

namespace {

// Merges of ids (left, right) -> result from the file's list of piece pairs, in rank
// order.
Status ResolveMerges(const std::string& where, const RawVocab& v, TokenizerSpec* tok) {
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
  // Sorted by (left, right) for the runtime's binary search. A pair listed twice keeps
  // its last rank, as Hugging Face's merge map (and GPT-2's encoder.py dict) does.
  std::stable_sort(tok->merges.begin(), tok->merges.end(),
                   [](const TokenizerSpec::Merge& a, const TokenizerSpec::Merge& b) {
                     return a.left != b.left ? a.left < b.left : a.right < b.right;
                   });
  std::vector<TokenizerSpec::Merge> unique;
  for (const TokenizerSpec::Merge& m : tok->merges) {
    if (!unique.empty() && unique.back().left == m.left &&
        unique.back().right == m.right) {
      unique.back() = m;
    } else {
      unique.push_back(m);
    }
  }
  tok->merges = std::move(unique);
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
  EMBER_RETURN_IF_ERROR(ResolveMerges(where, v, tok));
  return FinishTokenizer(where, v, specials, tok);
}

// SentencePiece-style BPE as tokenizer.json has it: pieces spell spaces "▁" (stored as
// spaces, and the runtime reads a "▁" in the text as one), <0xNN> pieces are the byte
// fallback when the model says so, and merges keep their ranks.
Status BuildSentencePiece(const std::string& where, const RawVocab& v,
                          const SentencePieceOptions& options,
                          const SpecialTokens& specials, TokenizerSpec* tok) {
  *tok = TokenizerSpec();
  tok->kind = TokenizerKind::kSentencePieceBpe;
  tok->pre_tokenizer = PreTokenizerKind::kNone;
  tok->add_bos = specials.add_bos != 0;
  tok->add_dummy_prefix = false;
  tok->metaspace_is_space = true;
  const size_t n = v.pieces.size();
  tok->pieces.resize(n);
  tok->types.assign(n, TokenType::kNormal);
  for (size_t id = 0; id < n; ++id) {
    if (!v.present[id]) continue;
    std::string piece = v.pieces[id];
    if (options.byte_fallback && piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 &&
        piece[5] == '>') {
      tok->types[id] = TokenType::kByte;
    } else if (!options.unk_token.empty() && piece == options.unk_token) {
      tok->types[id] = TokenType::kUnknown;
      tok->unk_id = static_cast<int32_t>(id);
    }
    ReplaceAll(&piece, kMetaSpace, " ");
    tok->pieces[id] = std::move(piece);
  }
  EMBER_RETURN_IF_ERROR(ResolveMerges(where, v, tok));
  return FinishTokenizer(where, v, specials, tok);
}

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

}  // namespace ember::tools
