// Shared by the Hugging Face tokenizer readers (hf_tokenizer.cc: vocab.json + merges.txt;
// hf_tokenizer_json.cc: tokenizer.json): a vocabulary as the files spell it, and the
// builders that turn it into an ember TokenizerSpec.
#ifndef EMBER_TOOLS_CONVERT_HF_TOKENIZER_INTERNAL_H_
#define EMBER_TOOLS_CONVERT_HF_TOKENIZER_INTERNAL_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/model_writer.h"
#include "runtime/status.h"
#include "tools/convert/hf_tokenizer.h"
#include "tools/util/json_util.h"

namespace ember::tools {

inline constexpr char kMetaSpace[] = "\xE2\x96\x81";  // U+2581, SentencePiece's space
inline constexpr uint64_t kMaxVocab = 1u << 24;

struct AddedToken {
  std::string content;
  bool special = true;
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

// GPT-2 byte-level BPE: pieces leave GPT-2's alphabet; merges resolved to ids.
Status BuildByteLevel(const std::string& where, const RawVocab& v,
                      const SpecialTokens& specials, TokenizerSpec* tokenizer);
// SentencePiece-style BPE: "▁" becomes a space, <0xNN> pieces are byte tokens, scores
// come from merge ranks.
Status BuildSentencePiece(const std::string& where, const RawVocab& v,
                          const std::string& unk_token, bool dummy_prefix,
                          const SpecialTokens& specials, TokenizerSpec* tokenizer);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_TOKENIZER_INTERNAL_H_
