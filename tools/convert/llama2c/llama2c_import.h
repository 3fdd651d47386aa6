// Importer for llama2.c checkpoints (legacy "version 0" fp32 format) and llama2.c
// tokenizer files.
#ifndef EMBER_TOOLS_CONVERT_LLAMA2C_LLAMA2C_IMPORT_H_
#define EMBER_TOOLS_CONVERT_LLAMA2C_LLAMA2C_IMPORT_H_

#include <string>
#include <vector>

#include "runtime/model/model_writer.h"

namespace ember::tools {

// Parses a checkpoint held in memory into spec (config and f32 tensors). The header is 7
// int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len); a negative
// vocab_size means a separate classifier follows the weights.
Status ParseLlama2cCheckpoint(const std::vector<uint8_t>& bytes, ModelSpec* spec);

// Parses a llama2.c tokenizer file (int32 max_token_length, then per token: float score,
// int32 length, bytes) for a vocabulary of `vocab_size`.
Status ParseLlama2cTokenizer(const std::vector<uint8_t>& bytes, uint32_t vocab_size,
                             TokenizerSpec* tokenizer);

// Reads both files into a ModelSpec (f32 tensors).
Status ImportLlama2c(const std::string& model_path, const std::string& tokenizer_path,
                     ModelSpec* spec);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_LLAMA2C_LLAMA2C_IMPORT_H_
