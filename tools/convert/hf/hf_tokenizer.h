// Hugging Face tokenizers -> ember TokenizerSpec: byte-level BPE (vocab.json +
// merges.txt, or tokenizer.json with GPT-2's, Llama 3's, Qwen2's or SmolLM's
// pre-tokenizer, NFC), SentencePiece-style BPE with byte fallback (Gemma 3's and Llama
// 2's tokenizer.json) and WordPiece (BERT's tokenizer.json), with their added tokens.
#ifndef EMBER_TOOLS_CONVERT_HF_HF_TOKENIZER_H_
#define EMBER_TOOLS_CONVERT_HF_HF_TOKENIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model/loaded_tokenizer.h"
#include "runtime/model/model_writer.h"
#include "runtime/status.h"

namespace ember::tools {

// GPT-2's byte <-> unicode alphabet: printable Latin-1 bytes stand for themselves, the
// other 68 bytes for U+0100 onwards. Byte-level vocabularies spell pieces in it.
uint32_t ByteToUnicode(uint8_t byte);
// The raw bytes a byte-level piece spells, or false when it uses a character outside
// the alphabet.
bool ByteLevelDecode(const std::string& piece_utf8, std::string* bytes);
// The inverse: how a vocabulary spells raw bytes (UTF-8 of each byte's character).
std::string ByteLevelEncode(const std::string& bytes);

// What the model's own files say about special tokens (config.json,
// tokenizer_config.json).
struct SpecialTokens {
  int64_t bos_id = -1, eos_id = -1;
  int add_bos = -1;  // -1: the tokenizer kind's default
  // The special token a TemplateProcessing post-processor puts after the text
  // (Qwen3-Embedding's <|endoftext|>; BERT's [SEP] is WordPiece's append_eos), or -1.
  int64_t end_id = -1;
};

// A byte-level BPE vocabulary: vocab.json maps each piece (in GPT-2's alphabet) to its
// id, merges.txt lists the merges in rank order (an optional "#version" line first).
Status ReadVocabAndMerges(const std::string& vocab_json_path,
                          const std::string& merges_path, const SpecialTokens& specials,
                          TokenizerSpec* tokenizer);

// A tokenizer.json with a BPE model: byte-level (a pre-tokenizer of
// runtime/text/pretokenizer.h, recognised by its exact pattern) or SentencePiece-style
// ("▁" for spaces, byte fallback, the dummy prefix of Prepend or Metaspace); or with a
// WordPiece model (BertNormalizer, BertPreTokenizer, [CLS] $A [SEP]). Steps it does not
// run exactly are refused with a message that names them.
Status ReadTokenizerJson(const std::string& path, const SpecialTokens& specials,
                         TokenizerSpec* tokenizer);

// The tokenizer of a Hugging Face model directory: tokenizer.json if present, else
// vocab.json + merges.txt. Pads it with empty control tokens to `vocab_size` when the
// model's embedding has more rows than the tokenizer has pieces (0: the tokenizer's own
// size, for a tokenizer without a model).
Status ReadHfTokenizer(const std::string& dir, uint32_t vocab_size,
                       SpecialTokens specials, TokenizerSpec* tokenizer);

// A tokenizer directory (tokenizer.json or vocab.json + merges.txt, and
// tokenizer_config.json) read as ReadHfTokenizer does, written into a model file without
// tensors and bound as the runtime binds a model's (runtime/model/loaded_tokenizer.h):
// `ember tokenize --tokenizer DIR`.
Status LoadHfTokenizer(const std::string& dir, LoadedTokenizer* out);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_HF_TOKENIZER_H_
