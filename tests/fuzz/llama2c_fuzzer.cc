// Fuzzes the llama2.c importer: the input is a checkpoint and a tokenizer file (split at
// kPartSeparator). What the importer accepts is written as a .ember file and loaded:
// the importer's checks and the loader's must not crash on any input.
#include <cstdint>
#include <vector>

#include "runtime/model/model.h"
#include "tests/fuzz/fuzz_common.h"
#include "tools/convert/hf/hf_import.h"
#include "tools/convert/llama2c/llama2c_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = ember::fuzz::SplitParts(data, size, 2);
  const std::vector<uint8_t> checkpoint(parts[0].begin(), parts[0].end());
  const std::vector<uint8_t> tokenizer(parts[1].begin(), parts[1].end());
  ember::ModelSpec spec;
  if (!ember::tools::ParseLlama2cCheckpoint(checkpoint, &spec).ok()) return 0;
  if (!ember::tools::ParseLlama2cTokenizer(tokenizer, spec.config.vocab_size,
                                           &spec.tokenizer)
           .ok()) {
    return 0;
  }
  if (!ember::tools::CheckSpecTensors(spec).ok()) return 0;
  std::vector<uint8_t> bytes;
  if (!ember::SerializeModel(spec, &bytes).ok()) return 0;
  const ember::fuzz::AlignedCopy copy(bytes.data(), bytes.size());
  auto model = ember::Model::FromMemory(copy.data(), copy.size());
  (void)model;
  return 0;
}
