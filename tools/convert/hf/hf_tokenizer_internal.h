// Shared by the Hugging Face tokenizer readers (hf_tokenizer.cc: vocab.json + merges.txt;
// hf_tokenizer_json.cc: tokenizer.json): a vocabulary as the files spell it, and the
// builders that turn it into an ember TokenizerSpec.
#ifndef EMBER_TOOLS_CONVERT_HF_HF_TOKENIZER_INTERNAL_H_
#define EMBER_TOOLS_CONVERT_HF_HF_TOKENIZER_INTERNAL_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/util/json_util.h"

namespace ember::tools {

inline constexpr char kMetaSpace[] = "\xE2\x96\x81";  // U+2581, SentencePiece's space
inline constexpr uint64_t kMaxVocab = 1u << 24;

// An added token: matched in the text as written (lstrip/rstrip take the white space
// around it; normalized ones are matched after the normalizer; single_word is refused).
struct AddedToken {
  std::string content;
  bool special = true;
  bool lstrip = false, rstrip = false, normalized = false, single_word = false;
};

// A vocabulary as a file spells it: piece strings by id, and merges by rank.
struct RawVocab {
  std::vector<std::string> pieces;
  std::vector<bool> present;
  std::unordered_map<std::string, uint32_t> ids;
  std::vector<std::pair<std::string, std::string>> merges;
  std::map<uint32_t, AddedToken> added;
};

// {"piece": id, ...} into v. `where` names the file in messages.
Status ReadVocabObject(const std::string& where, const Json& vocab, RawVocab* v);
// One merge, from a merges.txt line ("left right") or a JSON entry ("left right" or
// ["left", "right"]).
Status AddMerge(const std::string& where, size_t rank, const Json* pair,
                const std::string* line, RawVocab* v);
// tokenizer.json's added_tokens list.
Status ReadAddedTokens(const std::string& where, const Json& list, RawVocab* v);
// One entry of added_tokens (or of tokenizer_config.json's added_tokens_decoder).
Status ReadAddedToken(const std::string& where, const Json& token, AddedToken* added);
// Refuses what the runtime would not match as Hugging Face does: single_word tokens, and
// normalized ones the normalizer could change (any under NFC; with spaces or "▁" under
// SentencePiece's "▁" normalizer).
Status CheckAddedTokens(const std::string& where, const RawVocab& v, bool sentencepiece,
                        Normalization normalizer);

// A step's "type" ("?" when it has none).
std::string TypeOf(const Json& step);
// The steps of a normalizer, pre-tokenizer or post-processor (`field`): a Sequence's
// (its list under `list_key`), flattened, or the step itself; none for null.
Status Steps(const std::string& where, const Json& node, const char* field,
             const char* list_key, std::vector<const Json*>* steps, int depth = 0);
// Finishes a tokenizer: added and special tokens, dense ids, unique pieces.
Status FinishTokenizer(const std::string& where, const RawVocab& v,
                       const SpecialTokens& specials, TokenizerSpec* tokenizer);
// A tokenizer.json whose model is WordPiece (hf_tokenizer_wordpiece.cc): BertNormalizer,
// BertPreTokenizer, TemplateProcessing or BertProcessing.
Status ReadWordPieceJson(const std::string& path, const Json& root,
                         const SpecialTokens& specials, TokenizerSpec* tokenizer);

// GPT-2 byte-level BPE: pieces leave GPT-2's alphabet; merges resolved to ids.
Status BuildByteLevel(const std::string& where, const RawVocab& v,
                      const SpecialTokens& specials, TokenizerSpec* tokenizer);
// SentencePiece-style BPE: "▁" becomes a space (and is one in the text), <0xNN> pieces
// are byte tokens when byte_fallback, merges keep their ranks (no scores). The dummy
// prefix is the caller's to set.
struct SentencePieceOptions {
  std::string unk_token;
  bool byte_fallback = true;
};
Status BuildSentencePiece(const std::string& where, const RawVocab& v,
                          const SentencePieceOptions& options,
                          const SpecialTokens& specials, TokenizerSpec* tokenizer);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_HF_TOKENIZER_INTERNAL_H_
