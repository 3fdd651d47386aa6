// The architectures `ember convert --hf` knows: each reads its config.json fields into
// spec->config and its tensors, under ember's names (runtime/model/tensor_names.h) and in
// PyTorch's (out, in) layout, into spec->tensors.
#ifndef EMBER_TOOLS_CONVERT_HF_HF_MODELS_H_
#define EMBER_TOOLS_CONVERT_HF_HF_MODELS_H_

#include <array>
#include <cstdint>

#include "runtime/model/model_writer.h"
#include "runtime/status.h"
#include "tools/convert/hf/hf_weights.h"
#include "tools/util/json_util.h"

namespace ember::tools {

// model_type "gpt2": GPT2LMHeadModel / GPT2Model names, with or without "transformer.".
Status ImportGpt2(const JsonFields& config, HfWeights* weights, ModelSpec* spec);

// model_type "bert": BertModel names (embeddings.*, encoder.layer.{i}.*), with or
// without "bert.": post-LN, learned positions, segment embeddings, a LayerNorm of the
// embeddings, bidirectional; the pooler and task heads are left out. Mean pooling unless
// a sentence-transformers configuration says otherwise (ReadSentenceTransformers).
Status ImportBert(const JsonFields& config, HfWeights* weights, ModelSpec* spec);

// A sentence-transformers directory's modules.json (hf_sentence_transformers.cc): its
// Pooling module's mode (mean, cls, last token), Dense modules (the pooled vector's
// projections, their weights added to spec as dense.{i}.*) and a Normalize module set
// the config's pooling, dense_dims and normalize; modules ember cannot run (max
// pooling, ...) are refused by name. No modules.json: the spec stays as it was.
Status ReadSentenceTransformers(const std::string& dir, ModelSpec* spec);
// config_sentence_transformers.json's named prompts ("prompts": {"query": "...", ...})
// and its default_prompt_name, into the tokenizer (none when the file is absent).
Status ReadSentenceTransformersPrompts(const std::string& dir, TokenizerSpec* tok);

// The decoder families that share Llama's tensor names (model.embed_tokens,
// model.layers.{i}.{input_layernorm, self_attn, mlp, ...}, model.norm, lm_head):
// model_type "llama" (Llama 1-3.x, SmolLM2), "mistral", "qwen2" (Qwen2, Qwen2.5),
// "qwen3", "gemma2", "gemma3_text" (Gemma3ForCausalLM), "gemma3" (its text_config and
// language model; with a vision_config, the vision tower: ImportGemma3Vision),
// "idefics3" and "smolvlm" (Idefics3ForConditionalGeneration, SmolVLM's: a Llama
// text_config under model.text_model., and the tower: ImportIdefics3Vision) and "phi3"
// (fused qkv_proj and gate_up_proj, split here). rotate_half RoPE (RopePairing::kHalf).
// `root` is the whole config.json; false when model_type is none of these.
bool IsDecoderFamily(const std::string& model_type);
Status ImportDecoder(const std::string& model_type, const Json& root, HfWeights* weights,
                     ModelSpec* spec);

// Gemma 3's vision tower (SigLIP, `vision_config`) and projector (average pool, RMSNorm,
// projection) of a Gemma3ForConditionalGeneration directory, into spec->vision and its
// "v." and "mm." tensors; spec->config must be the text model's already.
Status ImportGemma3Vision(const Json& root, HfWeights* weights, ModelSpec* spec);
// Idefics3's (SmolVLM's) vision tower (SigLIP under model.vision_model., `vision_config`)
// and connector (config.json's scale_factor: the pixel shuffle, then
// model.connector.modality_projection.proj without a bias) of model_type "idefics3" or
// "smolvlm", into spec->vision and its "v." and "mm." tensors, with Idefics3's tiling
// processor until preprocessor_config.json says more; spec->config must be the text
// model's already.
Status ImportIdefics3Vision(const std::string& model_type, const Json& root,
                            HfWeights* weights, ModelSpec* spec);
// A SigLIP layer's weight-and-bias pairs in order (layer_norm1, q, k, v, out_proj,
// layer_norm2, fc1, fc2): ember's per-layer names and (rows, cols) shapes, cols 0 for a
// norm. Each importer pairs them with its own file's names.
struct SiglipPair {
  const char* weight;
  const char* bias;
  uint64_t rows, cols;
};
std::array<SiglipPair, 8> SiglipLayerPairs(uint64_t d, uint64_t ffn);
// Idefics3ImageProcessor's layout at the tower's size, as its defaults have it: the
// longest edge to 4 tiles, tiles of image_size and a global view, Lanczos, alpha over
// white (the mean and std are left as they are).
void SetIdefics3Processor(VisionConfig* v);
// The names Gemma3Processor takes from its tokenizer (tokenizer_config.json's boi_token,
// eoi_token and image_token); Idefics3Processor's are fixed.
struct ImageTokenNames {
  std::string boi = "<start_of_image>", eoi = "<end_of_image>",
              image = "<image_soft_token>";
};
// The added token `text` of the tokenizer: its id, or -1 (hf_vision_prompt.cc).
int64_t AddedTokenId(const TokenizerSpec& tok, const std::string& text);
// How a prompt holds an image of spec's tower (hf_vision_prompt.cc), from the
// tokenizer's added tokens: Gemma3Processor's block of rows, or Idefics3Processor's
// tiles. spec->vision->image_token_id must be the image token's id; without the tokens
// the prompt stays empty (the model takes images only as given rows) and stderr says so.
Status SetImagePrompt(const ImageTokenNames& names, ModelSpec* spec);
// After the tokenizer (hf_vision_prompt.cc): the image processor (the directory's
// preprocessor_config.json) and how the prompt holds an image, for a spec with a vision
// tower: Gemma3Processor's block of rows, or Idefics3Processor's tiles (checked against
// processor_config.json's image_seq_len).
Status ReadVisionProcessor(const std::string& dir, ModelSpec* spec);

// An activation name as Hugging Face configs spell it.
Status ParseHfActivation(const std::string& name, Activation* out);

// model_type "ember": the Config table's fields by name (enums by their lower-case
// names), every tensor under its ember name.
Status ImportEmber(const JsonFields& config, HfWeights* weights, ModelSpec* spec);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_HF_HF_MODELS_H_
