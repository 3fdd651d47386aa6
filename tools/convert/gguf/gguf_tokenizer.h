// The tokenizer of a GGUF file, from its tokenizer.* metadata:
//   tokenizer.ggml.model "llama": SentencePiece-style BPE (tokens with "▁" for spaces,
//       scores, token types, <0xNN> byte fallback; add_space_prefix, default true);
//   tokenizer.ggml.model "gpt2": byte-level BPE (tokens in GPT-2's byte alphabet, merges
//       "left right" in rank order); tokenizer.ggml.pre names the pre-tokenizer.
// Special ids (bos, eos, unknown, eot, eom, padding; 0xFFFFFFFF means none),
// add_bos_token (default: true for "llama", false for "gpt2"), the stop ids (EOS, EOT,
// EOM, and control tokens that end a turn in the common chat formats, as llama.cpp
// treats them) and tokenizer.chat_template.
#ifndef EMBER_TOOLS_CONVERT_GGUF_GGUF_TOKENIZER_H_
#define EMBER_TOOLS_CONVERT_GGUF_GGUF_TOKENIZER_H_

#include <cstdint>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "tools/convert/gguf/gguf_reader.h"

namespace ember::tools {

// vocab_size 0 takes the number of tokens; otherwise there must be exactly that many
// (the rows of the token embedding).
Status ReadGgufTokenizer(const GgufFile& file, uint32_t vocab_size,
                         TokenizerSpec* tokenizer);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_GGUF_GGUF_TOKENIZER_H_
