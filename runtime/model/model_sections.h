// The sections of a model file the loader reads besides the tensors and the tokenizer:
// the config, the vision tower's, the compiled chat template and the baked prompt
// (model.cc calls these at load).
#ifndef EMBER_RUNTIME_MODEL_MODEL_SECTIONS_H_
#define EMBER_RUNTIME_MODEL_MODEL_SECTIONS_H_

#include <cstdint>
#include <vector>

#include "model_generated.h"
#include "runtime/chat/chat_template.h"
#include "runtime/model/config.h"
#include "runtime/model/model.h"
#include "runtime/model/tensor.h"
#include "runtime/status.h"

namespace ember {

// The core config table (model.cc), checked: sizes within limits, enums known, the
// families' fields (family_config.h). A vision tower's `encoder` has no vocabulary.
Status ReadConfig(const fb::Config& config, ModelConfig* out, bool encoder = false);

// The vision tower's table: its encoder (one bidirectional pass over learned positions,
// no vocabulary) and the sizes that tie patches, connector and text model together.
Status ReadVisionConfig(const fb::VisionConfig& vision, const ModelConfig& text,
                        VisionConfig* out);

// The tokenizer table's compiled chat template into `out` (empty when absent), checked.
Status ReadChatProgram(const fb::Tokenizer& tokenizer, uint32_t vocab_size,
                       ChatTemplate* out);

// The baked prompt's table and segment: inside the file, aligned, clear of the tensors,
// and a state whose header agrees with the table and the config (the model fingerprint
// and the checksums are checked when a session restores it).
Status ReadBakedPrompt(const fb::Model& model, const uint8_t* data, uint64_t file_size,
                       uint64_t directory_end, const ModelConfig& config,
                       const std::vector<Tensor>& tensors, BakedPromptView* out);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_MODEL_SECTIONS_H_
