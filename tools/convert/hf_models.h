// The architectures `ember convert --hf` knows: each reads its config.json fields into
// spec->config and its tensors, under ember's names (runtime/tensor_names.h) and in
// PyTorch's (out, in) layout, into spec->tensors.
#ifndef EMBER_TOOLS_CONVERT_HF_MODELS_H_
#define EMBER_TOOLS_CONVERT_HF_MODELS_H_

#include "runtime/model_writer.h"
#include "runtime/status.h"
#include "tools/convert/hf_weights.h"
#include "tools/util/json_util.h"

namespace ember::tools {

// model_type "gpt2": GPT2LMHeadModel / GPT2Model names, with or without "transformer.".
Status ImportGpt2(const JsonFields& config, HfWeights* weights, ModelSpec* spec);

// model_type "llama": LlamaForCausalLM names; rotate_half RoPE (RopePairing::kHalf).
Status ImportLlama(const JsonFields& config, HfWeights* weights, ModelSpec* spec);

// model_type "ember": the Config table's fields by name (enums by their lower-case
// names), every tensor under its ember name.
Status ImportEmber(const JsonFields& config, HfWeights* weights, ModelSpec* spec);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_MODELS_H_
