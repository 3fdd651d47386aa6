// A tokenizer without a model: a TokenizerSpec written into a model file without
// tensors and bound as the runtime binds a model's (`ember tokenize --tokenizer DIR`,
// tests of hand-made or imported vocabularies). Part of the writer (ember_writer).
#ifndef EMBER_RUNTIME_MODEL_LOADED_TOKENIZER_H_
#define EMBER_RUNTIME_MODEL_LOADED_TOKENIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "runtime/text/tokenizer.h"

namespace ember {

struct LoadedTokenizer {
  LoadedTokenizer() = default;
  // A move keeps the bytes where they are; a copy would point into the original.
  LoadedTokenizer(LoadedTokenizer&&) = default;
  LoadedTokenizer& operator=(LoadedTokenizer&&) = default;
  LoadedTokenizer(const LoadedTokenizer&) = delete;
  LoadedTokenizer& operator=(const LoadedTokenizer&) = delete;

  std::vector<uint8_t> storage;  // the file's bytes (the tokenizer reads them in place)
  Tokenizer tokenizer;
};

// Any tokenizer spec, through the writer and the loader.
Status LoadTokenizerSpec(const TokenizerSpec& tokenizer, const std::string& description,
                         LoadedTokenizer* out);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_LOADED_TOKENIZER_H_
