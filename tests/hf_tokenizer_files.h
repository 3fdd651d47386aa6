// tokenizer.json files the Hugging Face tokenizer oracle test writes from real
// vocabularies, for the tokenizer shapes ../shared/models has no file of: GPT-2's
// ByteLevel, SmolLM's Digits + ByteLevel (both over OpenAI's GPT-2 vocabulary) and
// Llama 2's SentencePiece BPE (Prepend + Replace normalizer, byte fallback) as
// TinyLlama, Mistral and Phi-3-mini ship it, with Phi-3's rstrip chat tokens.
#ifndef EMBER_TESTS_HF_TOKENIZER_FILES_H_
#define EMBER_TESTS_HF_TOKENIZER_FILES_H_

#include <string>

#include "runtime/status.h"

namespace ember::testing {

// From `models`/gpt2-bpe (encoder.json, vocab.bpe) into dir/tokenizer.json and
// dir/tokenizer_config.json; `smollm` puts Digits(individual_digits) before ByteLevel.
Status WriteGpt2StyleTokenizer(const std::string& models, bool smollm,
                               const std::string& dir);

// From `models`/llama2c/tokenizer.bin (Llama 2's 32000 pieces and scores), with the
// merges transformers' LlamaConverter derives from them.
Status WriteLlama2StyleTokenizer(const std::string& models, const std::string& dir);

}  // namespace ember::testing

#endif  // EMBER_TESTS_HF_TOKENIZER_FILES_H_
