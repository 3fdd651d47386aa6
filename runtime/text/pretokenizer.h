// Pre-tokenizers: split text into the chunks byte-level BPE merges within, as the
// patterns of the Hugging Face tokenizer.json files of current models do (alternatives
// tried in order at each position, as a backtracking regex engine would), each run by
// hand: no regex engine and no allocation.
//
// The model file stores the kind (schema/model.fbs, Tokenizer.pre_tokenizer). Importers
// recognise it from tokenizer.json (the exact pattern string inside its Sequence) or
// from GGUF's `tokenizer.ggml.pre`; llama.cpp's names for each kind (src/llama-vocab.cpp,
// at commit c392e50, which also gives these splits to the other names listed):
//
//   kGpt2    tokenizer.json: ByteLevel(use_regex) (kGpt2Pattern)
//            tokenizer.ggml.pre: "gpt-2" (also "phi-2", "roberta-bpe", "mpt", "olmo",
//            "jais", "gigachat", "jina-*")
//   kLlama3  Sequence[Split(kLlama3Pattern, Isolated), ByteLevel(use_regex false)],
//            BPE ignore_merges; "llama-bpe", "llama3", "llama-v3", "falcon3" (also
//            "dbrx", "smaug-bpe", without ignore_merges)
//   kQwen2   NFC normalizer, Sequence[Split(kQwen2Pattern, Isolated), ByteLevel(use_regex
//            false)]; "qwen2" (also "deepseek-r1-qwen", "megrez", "stablelm2")
//   kSmolLm  Sequence[Digits(individual_digits), ByteLevel(use_regex)]; "smollm" (also
//            "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b")
//
// ignore_merges (Tokenizer.ignore_merges) is the BPE model's flag in tokenizer.json;
// llama.cpp sets it for "llama-bpe"/"llama3"/"llama-v3"/"falcon3" (and "tekken"). The
// normalizer (Qwen's NFC) is its own field: llama.cpp does not normalize.
// tools/convert/pretokenizer_names.h maps these names to a PreTokenizerKind.
//
// Character classes: \p{L}, \p{N} are Unicode general categories L* and N*, \s is the
// White_Space property (as Oniguruma, which Hugging Face tokenizers uses, and llama.cpp
// have it; JavaScript's \s differs on U+0085 and U+FEFF), from unicode.h. "(?i:'s|...)"
// is case-insensitive in ASCII only (transformers.js and llama.cpp rewrite it so).
#ifndef EMBER_RUNTIME_TEXT_PRETOKENIZER_H_
#define EMBER_RUNTIME_TEXT_PRETOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ember {

// Values equal the schema's fb::PreTokenizer (model.cc checks it at compile time).
enum class PreTokenizerKind : uint8_t {
  kDefault = 0,  // as stored by files older than the field: resolved at load
  kNone = 1,     // one chunk: the whole text (SentencePiece-style BPE)
  kGpt2 = 2,
  kLlama3 = 3,
  kQwen2 = 4,
  kSmolLm = 5,
  kBert = 6,  // BertPreTokenizer (bert_normalizer.h: BertChunkEnd), WordPiece only
};

// The patterns, exactly as tokenizer.json spells them (after JSON unescaping).
inline constexpr char kGpt2Pattern[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
inline constexpr char kLlama3Pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
inline constexpr char kQwen2Pattern[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// "gpt-2", "llama3", "qwen2", "smollm", "none" ("default" for kDefault). In
// tokenizer.cc: builds without the pre-tokenizers name them too.
const char* PreTokenizerName(PreTokenizerKind kind);

// False in builds that leave the Hugging Face text out (EMBER_WITH_HF_TEXT=OFF,
// hf_text_none.cc: no pre-tokenizers, NFC or Unicode tables): Tokenizer::Init then
// refuses a tokenizer that needs them.
bool HfTextBuiltIn();

// The end of the chunk that starts at text[pos]. `text` must be valid UTF-8 and
// pos < text.size(); the result is > pos and on a code point boundary. kDefault and
// kNone give the whole text.
size_t ChunkEnd(PreTokenizerKind kind, std::string_view text, size_t pos);

// GPT-2's pattern (kGpt2).
size_t Gpt2ChunkEnd(std::string_view text, size_t pos);

}  // namespace ember

#endif  // EMBER_RUNTIME_TEXT_PRETOKENIZER_H_
