// Importer for Hugging Face model directories: config.json, safetensors weights (one
// file, or shards listed in model.safetensors.index.json) and the tokenizer. Pickled
// checkpoints (pytorch_model.bin) are never read.
//
// model_type "gpt2"  GPT2LMHeadModel / GPT2Model names (GPT-2, DistilGPT-2): Conv1D
//                    weights stored (in, out) are transposed, c_attn is split into Q/K/V.
// model_type "llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text", "gemma3",
//                    "idefics3", "smolvlm", "phi3": LlamaForCausalLM's names and their
//                    families' departures (hf_models.h, hf_decoders.cc): RMSNorm, gated
//                    FFN, GQA, rotate_half RoPE with scaling, sliding layers, qk-norm,
//                    Gemma's norms and scales, Phi-3's fused projections; Gemma 3's and
//                    Idefics3's (SmolVLM's) vision towers (hf_vision.cc).
// model_type "ember" ember's own config fields and tensor names
//                    (runtime/model/tensor_names.h), for any architecture the config
//                    can express (e.g. the post-LN encoder); see README.
#ifndef EMBER_TOOLS_CONVERT_HF_HF_IMPORT_H_
#define EMBER_TOOLS_CONVERT_HF_HF_IMPORT_H_

#include <string>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"

namespace ember::tools {

// Reads the directory into spec (f32 tensors). Unknown model types, missing tensors and
// tensors the architecture does not use get errors that name them.
Status ImportHf(const std::string& dir, ModelSpec* spec);

// Checks that the spec's tensors are exactly those its config needs, with the right
// shapes (what the loader will check), so a bad conversion fails before it is written.
Status CheckSpecTensors(const ModelSpec& spec);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_HF_IMPORT_H_
