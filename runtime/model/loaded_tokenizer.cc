// A tokenizer without a model (see loaded_tokenizer.h).
#include "runtime/model/loaded_tokenizer.h"

#include <cstring>

#include "runtime/model/model.h"

namespace ember {

Status LoadTokenizerSpec(const TokenizerSpec& tokenizer, const std::string& description,
                         LoadedTokenizer* out) {
  ModelSpec spec;
  spec.tokenizer = tokenizer;
  spec.config.vocab_size = static_cast<uint32_t>(tokenizer.pieces.size());
  spec.description = description;
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(SerializeModel(spec, &bytes));
  // The loader wants 16-byte aligned memory: over-allocate and align the copy.
  out->storage.assign(bytes.size() + 15, 0);
  const uintptr_t address = reinterpret_cast<uintptr_t>(out->storage.data());
  uint8_t* aligned = out->storage.data() + (16 - address % 16) % 16;
  memcpy(aligned, bytes.data(), bytes.size());
  return ReadTokenizerOnly(aligned, bytes.size(), &out->tokenizer);
}

}  // namespace ember
