// Shared by the fuzz harnesses and the seed generator: multi-file inputs, aligned copies,
// and the small models (in each importer's own format) the seed corpora start from.
#ifndef EMBER_TESTS_FUZZ_FUZZ_COMMON_H_
#define EMBER_TESTS_FUZZ_FUZZ_COMMON_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/model/model_writer.h"

namespace ember::fuzz {

// An input that stands for several files holds them in order, separated by this line.
inline constexpr std::string_view kPartSeparator = "\n--ember-fuzz-part--\n";

// The first `max_parts` - 1 separators split the input; missing parts are empty.
std::vector<std::string_view> SplitParts(const uint8_t* data, size_t size,
                                         size_t max_parts);
std::string JoinParts(const std::vector<std::string>& parts);

// A copy at a 64-byte aligned address (Model::FromMemory needs 16).
class AlignedCopy {
 public:
  AlignedCopy(const void* data, size_t size);
  ~AlignedCopy();
  AlignedCopy(const AlignedCopy&) = delete;
  AlignedCopy& operator=(const AlignedCopy&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_;
  size_t size_;
};

// A tiny Llama-style model (d_model 8, one layer, 260 pieces, context 16): small seeds
// make quick fuzzing.
ModelSpec SmallModelSpec();
// The same tensors and config around another tokenizer (the embedding resized).
ModelSpec ModelAroundTokenizer(const TokenizerSpec& tokenizer);

// The spec as llama2.c files: the legacy (version 0) checkpoint and tokenizer.bin.
std::vector<uint8_t> Llama2cCheckpoint(const ModelSpec& spec);
std::vector<uint8_t> Llama2cTokenizer(const TokenizerSpec& tokenizer);

// A safetensors file of F32 tensors (name, shape, values).
struct NamedTensor {
  std::string name;
  std::vector<uint64_t> shape;
  const std::vector<float>* values;
};
std::string Safetensors(const std::vector<NamedTensor>& tensors);

// The files of a Hugging Face directory, in the order the HF harness splits its input.
inline constexpr const char* kHfFiles[] = {"config.json",    "model.safetensors",
                                           "tokenizer.json", "vocab.json",
                                           "merges.txt",     "tokenizer_config.json"};
inline constexpr size_t kNumHfFiles = sizeof(kHfFiles) / sizeof(kHfFiles[0]);
// SmallModelSpec() as a LlamaForCausalLM directory, with a byte-level BPE tokenizer as
// vocab.json + merges.txt (json_tokenizer: as tokenizer.json instead).
std::vector<std::string> HfLlamaFiles(bool json_tokenizer);

}  // namespace ember::fuzz

#endif  // EMBER_TESTS_FUZZ_FUZZ_COMMON_H_
