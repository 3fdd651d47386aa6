// Gemma 3's vision tower and projector from a Gemma3ForConditionalGeneration directory
// (see hf_models.h), as transformers' modeling_siglip and modeling_gemma3 define them.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/model/tensor_names.h"
#include "tools/convert/hf/hf_image_processor.h"
#include "tools/convert/hf/hf_mapper.h"
#include "tools/convert/hf/hf_models.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

// The first of `prefixes` some tensor of `w` starts with; "" when none does.
std::string FindPrefix(const HfWeights& w, std::initializer_list<const char*> prefixes,
                       const char* probe) {
  for (const char* p : prefixes) {
    if (w.Has(std::string(p) + probe)) return p;
  }
  return "";
}

}  // namespace

Status ImportGemma3Vision(const Json& root, HfWeights* w, ModelSpec* spec) {
  const auto found = root.find("vision_config");
  if (found == root.end() || !found->is_object()) {
    return InvalidArgument(
        "config.json: a gemma3 model's vision_config is not an object");
  }
  const JsonFields f(*found, "config.json vision_config");
  const JsonFields top(root, "config.json");
  std::string model_type, act;
  EMBER_RETURN_IF_ERROR(
      f.String("model_type", false, "siglip_vision_model", &model_type));
  if (model_type != "siglip_vision_model") {
    return Unimplemented("config.json vision_config: model_type '%.40s' (SigLIP's only)",
                         model_type.c_str());
  }
  // SiglipVisionConfig's defaults where the file leaves a key out.
  int64_t d, ffn, layers, heads, image, patch, channels, tokens, image_token;
  double eps;
  bool head;
  EMBER_RETURN_IF_ERROR(f.Int("hidden_size", false, 768, 1, 1 << 16, &d));
  EMBER_RETURN_IF_ERROR(f.Int("intermediate_size", false, 3072, 1, 1 << 18, &ffn));
  EMBER_RETURN_IF_ERROR(f.Int("num_hidden_layers", false, 12, 1, 1024, &layers));
  EMBER_RETURN_IF_ERROR(f.Int("num_attention_heads", false, 12, 1, 1024, &heads));
  EMBER_RETURN_IF_ERROR(f.Int("image_size", false, 224, 1, 8192, &image));
  EMBER_RETURN_IF_ERROR(f.Int("patch_size", false, 16, 1, 8192, &patch));
  EMBER_RETURN_IF_ERROR(f.Int("num_channels", false, 3, 3, 3, &channels));
  EMBER_RETURN_IF_ERROR(f.Float("layer_norm_eps", false, 1e-6, 1e-12, 0.5, &eps));
  EMBER_RETURN_IF_ERROR(f.String("hidden_act", false, "gelu_pytorch_tanh", &act));
  EMBER_RETURN_IF_ERROR(f.Bool("vision_use_head", false, false, &head));
  EMBER_RETURN_IF_ERROR(top.Int("mm_tokens_per_image", false, 256, 1, 1 << 20, &tokens));
  const char* token_key =
      top.Has("image_token_id") ? "image_token_id" : "image_token_index";
  EMBER_RETURN_IF_ERROR(top.Int(token_key, false, 262144, 0, INT32_MAX, &image_token));
  if (head)
    return Unimplemented("config.json vision_config: vision_use_head (a pooling head)");
  if (d % heads != 0) {
    return InvalidArgument("config.json vision_config: %lld heads do not divide %lld",
                           static_cast<long long>(heads), static_cast<long long>(d));
  }
  const int64_t side = image / patch, pooled = std::llround(std::sqrt(tokens));
  if (image % patch != 0 || pooled * pooled != tokens || side % pooled != 0) {
    return InvalidArgument(
        "config.json: %lld image tokens from %lld x %lld patches (image_size %lld, "
        "patch_size %lld): not a whole pool",
        static_cast<long long>(tokens), static_cast<long long>(side),
        static_cast<long long>(side), static_cast<long long>(image),
        static_cast<long long>(patch));
  }

  // SigLIP's processor until the directory's preprocessor_config.json says otherwise;
  // Gemma 3's image blocks attend both ways (token_type_ids_mask_function).
  VisionConfig v = SiglipVisionConfig(
      static_cast<uint32_t>(d), static_cast<uint32_t>(heads), static_cast<uint32_t>(ffn),
      static_cast<uint32_t>(layers), static_cast<uint32_t>(image),
      static_cast<uint32_t>(patch), ImageConnector::kAveragePool,
      static_cast<uint32_t>(side / pooled));
  ModelConfig& e = v.encoder;
  e.norm_eps = static_cast<float>(eps);
  EMBER_RETURN_IF_ERROR(ParseHfActivation(act, &e.activation));
  // Gemma3MultiModalProjector's mm_soft_emb_norm takes the vision config's eps.
  v.projector_norm_eps = static_cast<float>(eps);
  v.image_token_id = static_cast<int32_t>(image_token);

  // Checkpoints before transformers 4.52 (the hub's files) and after.
  const std::string tower =
      FindPrefix(*w, {"vision_tower.vision_model.", "model.vision_tower.vision_model."},
                 "post_layernorm.weight");
  const std::string projector =
      FindPrefix(*w, {"multi_modal_projector.", "model.multi_modal_projector."},
                 "mm_soft_emb_norm.weight");
  if (tower.empty() || projector.empty()) {
    return InvalidModel(
        "a gemma3 model with a vision_config but no %s (vision_tower.vision_model.* or "
        "multi_modal_projector.*)",
        tower.empty() ? "vision tower" : "projector");
  }
  Mapper m(w, spec);
  const uint64_t D = e.d_model, F = e.ffn_dim, P = static_cast<uint64_t>(patch);
  const std::string v_ = "v.";
  // The Conv2d weight (D, 3, p, p), row-major: the (D, 3 p^2) matrix of patch rows.
  TensorSpec conv;
  conv.name = v_ + names::kPatchEmbedding;
  conv.shape = {D, 3 * P * P};
  EMBER_RETURN_IF_ERROR(
      w->Read(tower + "embeddings.patch_embedding.weight", {D, 3, P, P}, &conv.values));
  spec->tensors.push_back(std::move(conv));
  EMBER_RETURN_IF_ERROR(m.Copy(tower + "embeddings.patch_embedding.bias",
                               v_ + names::kPatchEmbeddingBias, {D}));
  EMBER_RETURN_IF_ERROR(m.Copy(tower + "embeddings.position_embedding.weight",
                               v_ + names::kPosEmbedding, {e.max_context, D}));
  for (unsigned i = 0; i < e.n_layers; ++i) {
    const std::string l = tower + "encoder.layers." + std::to_string(i) + ".";
    auto copy = [&](const std::string& hf, const char* format,
                    std::vector<uint64_t> shape) {
      return m.Copy(l + hf, v_ + names::LayerName(format, i), std::move(shape));
    };
    struct Pair {
      const char* hf;
      const char* weight;
      const char* bias;
      uint64_t rows, cols;  // cols 0: a norm
    };
    for (const Pair& p :
         {Pair{"layer_norm1", names::kAttnNorm, names::kAttnNormBias, D, 0},
          Pair{"self_attn.q_proj", names::kAttnQ, names::kAttnQBias, D, D},
          Pair{"self_attn.k_proj", names::kAttnK, names::kAttnKBias, D, D},
          Pair{"self_attn.v_proj", names::kAttnV, names::kAttnVBias, D, D},
          Pair{"self_attn.out_proj", names::kAttnOut, names::kAttnOutBias, D, D},
          Pair{"layer_norm2", names::kFfnNorm, names::kFfnNormBias, D, 0},
          Pair{"mlp.fc1", names::kFfnUp, names::kFfnUpBias, F, D},
          Pair{"mlp.fc2", names::kFfnDown, names::kFfnDownBias, D, F}}) {
      const std::string hf = p.hf;
      EMBER_RETURN_IF_ERROR(copy(hf + ".weight", p.weight,
                                 p.cols ? std::vector<uint64_t>{p.rows, p.cols}
                                        : std::vector<uint64_t>{p.rows}));
      EMBER_RETURN_IF_ERROR(copy(hf + ".bias", p.bias, {p.rows}));
    }
  }
  EMBER_RETURN_IF_ERROR(
      m.Copy(tower + "post_layernorm.weight", v_ + names::kOutputNorm, {D}));
  EMBER_RETURN_IF_ERROR(
      m.Copy(tower + "post_layernorm.bias", v_ + names::kOutputNormBias, {D}));
  // Gemma's RMSNorm multiplies by 1 + w: stored so. The projection is x @ W with W
  // (D, text d_model): stored transposed, as a Linear's (out, in).
  EMBER_RETURN_IF_ERROR(
      m.Copy(projector + "mm_soft_emb_norm.weight", names::kProjectorNorm, {D}, 1.0f));
  EMBER_RETURN_IF_ERROR(m.Conv1D(projector + "mm_input_projection_weight", D,
                                 {{names::kPoolProjector, spec->config.d_model}}));
  spec->vision = v;
  return Status::Ok();
}

Status ReadVisionProcessor(const std::string& dir, ModelSpec* spec) {
  VisionConfig& v = *spec->vision;
  const std::string processor_path = dir + "/preprocessor_config.json";
  if (access(processor_path.c_str(), R_OK) == 0) {
    EMBER_RETURN_IF_ERROR(ReadImageProcessorConfigFile(processor_path, &v.processor));
  }
  const ImageProcessorConfig& p = v.processor;
  const int tile = p.layout == ImageLayout::kFixed ? p.height : p.tile_size;
  if (tile != static_cast<int>(v.image_size) ||
      (p.layout == ImageLayout::kFixed && p.width != p.height)) {
    return InvalidArgument(
        "%s: the processor's tiles (%dx%d) are not the vision tower's image_size %u",
        processor_path.c_str(), p.layout == ImageLayout::kFixed ? p.width : tile, tile,
        v.image_size);
  }
  // Gemma3Processor: each boi_token a chat template writes becomes "\n\n" boi, the
  // image token once per row, eoi "\n\n". The names come from tokenizer_config.json,
  // as the processor takes them from its tokenizer.
  std::string boi = "<start_of_image>", eoi = "<end_of_image>",
              image = "<image_soft_token>";
  const std::string tokenizer_path = dir + "/tokenizer_config.json";
  if (access(tokenizer_path.c_str(), R_OK) == 0) {
    Json root;
    EMBER_RETURN_IF_ERROR(ReadJsonFile(tokenizer_path, &root));
    if (root.is_object()) {
      const JsonFields f(root, "tokenizer_config.json");
      EMBER_RETURN_IF_ERROR(f.String("boi_token", false, boi, &boi));
      EMBER_RETURN_IF_ERROR(f.String("eoi_token", false, eoi, &eoi));
      EMBER_RETURN_IF_ERROR(f.String("image_token", false, image, &image));
    }
  }
  // The image token must be the tokenizer's: the prompt is matched by text.
  const TokenizerSpec& tok = spec->tokenizer;
  bool found = false;
  for (const TokenizerSpec::Added& a : tok.added) {
    if (a.text == image) {
      found = a.id == static_cast<uint32_t>(v.image_token_id);
      if (!found) break;
    }
  }
  if (!found) {
    // The file still holds the tower; prompts cannot name its rows by text.
    fprintf(
        stderr,
        "ember convert: the tokenizer has no added token '%.40s' of id %d (config.json's "
        "image_token_index): the model takes images only as given rows, not in a "
        "prompt\n",
        image.c_str(), v.image_token_id);
    return Status::Ok();
  }
  if (!v.prompt.marker.Assign(boi) || !v.prompt.before.Assign("\n\n" + boi) ||
      !v.prompt.after.Assign(eoi + "\n\n") || !v.prompt.token.Assign(image)) {
    v.prompt = ImagePrompt();
    return InvalidArgument(
        "tokenizer_config.json: an image token name past %zu bytes, or holding a NUL",
        PromptText::kMax - 2);
  }
  return Status::Ok();
}

}  // namespace ember::tools
