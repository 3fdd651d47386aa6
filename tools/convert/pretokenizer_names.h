// The pre-tokenizer kinds of runtime/text/pretokenizer.h as the files ember imports name
// them: tokenizer.json's Split patterns and GGUF's `tokenizer.ggml.pre` (llama.cpp's
// names).
#ifndef EMBER_TOOLS_CONVERT_PRETOKENIZER_NAMES_H_
#define EMBER_TOOLS_CONVERT_PRETOKENIZER_NAMES_H_

#include <string>

#include "runtime/status.h"
#include "runtime/text/pretokenizer.h"

namespace ember::tools {

// The kind whose pattern is exactly `pattern` (a tokenizer.json Split's "Regex", or the
// pattern ByteLevel's use_regex means); an unknown pattern is an error that quotes it.
// `where` names the file in the message.
Status PreTokenizerForPattern(const std::string& where, const std::string& pattern,
                              PreTokenizerKind* kind);

// GGUF's tokenizer.ggml.pre, for a "gpt2" (byte-level BPE) tokenizer.ggml.model: the
// kind llama.cpp gives the name the same split as, and whether it sets ignore_merges
// (a chunk that is a piece is taken whole). Names whose split ember does not run
// ("default", "tekken", "deepseek-llm", ...) are an error naming them.
//   "gpt-2", "phi-2", "roberta-bpe", "mpt", "olmo", "jais", "gigachat", "jina-es",
//     "jina-de", "jina-v1-en", "jina-v2-es", "jina-v2-de", "jina-v2-code"  -> kGpt2
//   "llama-bpe", "llama3", "llama-v3", "falcon3" -> kLlama3, ignore_merges
//   "dbrx", "smaug-bpe"                           -> kLlama3
//   "qwen2", "deepseek-r1-qwen", "megrez", "stablelm2" -> kQwen2
//   "smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b"
//                                                 -> kSmolLm
// (Qwen's tokenizer.json also normalizes to NFC, which llama.cpp does not: a GGUF
// importer that wants Hugging Face's ids sets Normalization::kNfc for "qwen2" itself.)
Status PreTokenizerForGgufName(const std::string& name, PreTokenizerKind* kind,
                               bool* ignore_merges);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_PRETOKENIZER_NAMES_H_
