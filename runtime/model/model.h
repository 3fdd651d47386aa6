// Model: a verified, read-only view of a .ember file (mmapped or in caller memory) with
// its config, tokenizer and weights bound. Shared by any number of sessions.
#ifndef EMBER_RUNTIME_MODEL_MODEL_H_
#define EMBER_RUNTIME_MODEL_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "runtime/chat/chat_template.h"
#include "runtime/model/config.h"
#include "runtime/model/tensor.h"
#include "runtime/model/weights.h"
#include "runtime/status.h"
#include "runtime/text/tokenizer.h"

namespace ember {

// A prompt baked into the file (schema/model.fbs, BakedPrompt): its text, tokens and
// saved state (runtime/chat/prompt_state.h). num_tokens 0 and state null when there is
// none.
struct BakedPromptView {
  std::string_view text;
  const int32_t* tokens = nullptr;
  size_t num_tokens = 0;
  const uint8_t* state = nullptr;
  size_t state_bytes = 0;
};

class Model {
 public:
  // Maps the file read-only and verifies it. Weights stay in the mapping (zero copy).
  static Result<std::unique_ptr<Model>> Open(const char* path);
  // Verifies a model the caller holds in memory (flash, .rodata, a read buffer). The
  // memory must stay valid and unchanged for the Model's lifetime, and start at an
  // address that is a multiple of 16.
  static Result<std::unique_ptr<Model>> FromMemory(const void* data, size_t size);

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return config_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }
  // The compiled chat template (empty() when the file has none).
  const ChatTemplate& chat_template() const { return chat_template_; }
  const Weights& weights() const { return weights_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const char* description() const { return description_; }
  const BakedPromptView& baked_prompt() const { return baked_prompt_; }
  // The vision tower and its weights; null for a text-only model.
  const VisionConfig* vision() const { return vision_ ? &vision_->config : nullptr; }
  const VisionWeights* vision_weights() const {
    return vision_ ? &vision_->weights : nullptr;
  }
  uint64_t file_bytes() const { return size_; }
  const uint8_t* file_data() const { return data_; }  // the whole file, as mapped or given
  // Number of weight elements (parameters), counting a tied classifier once.
  uint64_t parameter_count() const;

 private:
  Model() = default;
  Status Init(const uint8_t* data, size_t size);

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  ModelConfig config_;
  std::vector<Tensor> tensors_;
  Weights weights_;
  Tokenizer tokenizer_;
  ChatTemplate chat_template_;
  const char* description_ = "";
  BakedPromptView baked_prompt_;
  struct Vision {
    VisionConfig config;
    VisionWeights weights;
  };
  std::unique_ptr<Vision> vision_;
};

// Verifies the directory of a model file in memory (16-byte aligned) and binds
// `tokenizer` to its tokenizer table alone: for tools that tokenize without weights
// (`ember tokenize --tokenizer DIR` writes a file with no tensors). The memory must
// outlive the tokenizer.
Status ReadTokenizerOnly(const void* data, size_t size, Tokenizer* tokenizer);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_MODEL_H_
