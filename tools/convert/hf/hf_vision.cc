// The vision towers of Hugging Face multimodal directories (see hf_models.h), as
// transformers' modeling code defines them: a SigLIP ViT (modeling_siglip, and
// modeling_idefics3's copy of it) under Gemma 3's average-pool projector or Idefics3's
// (SmolVLM's) pixel-shuffle connector. Their processor and prompt: hf_vision_prompt.cc.
#include <cmath>
#include <string>
#include <vector>

#include "runtime/model/tensor_names.h"
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

// A SigLIP tower's shape as a vision_config states it, with its config class's defaults
// for the keys a file leaves out.
struct TowerShape {
  int64_t d, ffn, layers, heads, image, patch;
};

// The tower's fields of `f` (defaults from `defaults`), checked: heads divide the width,
// patches tile the image. Returns a VisionConfig with the encoder's eps and activation.
Status ReadTower(const JsonFields& f, const TowerShape& defaults,
                 ImageConnector connector, int64_t factor, VisionConfig* out) {
  TowerShape s;
  int64_t channels;
  double eps;
  std::string act;
  EMBER_RETURN_IF_ERROR(f.Int("hidden_size", false, defaults.d, 1, 1 << 16, &s.d));
  EMBER_RETURN_IF_ERROR(
      f.Int("intermediate_size", false, defaults.ffn, 1, 1 << 18, &s.ffn));
  EMBER_RETURN_IF_ERROR(
      f.Int("num_hidden_layers", false, defaults.layers, 1, 1024, &s.layers));
  EMBER_RETURN_IF_ERROR(
      f.Int("num_attention_heads", false, defaults.heads, 1, 1024, &s.heads));
  EMBER_RETURN_IF_ERROR(f.Int("image_size", false, defaults.image, 1, 8192, &s.image));
  EMBER_RETURN_IF_ERROR(f.Int("patch_size", false, defaults.patch, 1, 8192, &s.patch));
  EMBER_RETURN_IF_ERROR(f.Int("num_channels", false, 3, 3, 3, &channels));
  EMBER_RETURN_IF_ERROR(f.Float("layer_norm_eps", false, 1e-6, 1e-12, 0.5, &eps));
  EMBER_RETURN_IF_ERROR(f.String("hidden_act", false, "gelu_pytorch_tanh", &act));
  if (s.d % s.heads != 0) {
    return InvalidArgument("config.json vision_config: %lld heads do not divide %lld",
                           static_cast<long long>(s.heads), static_cast<long long>(s.d));
  }
  if (s.image % s.patch != 0) {
    return InvalidArgument(
        "config.json vision_config: patch_size %lld does not divide image_size %lld",
        static_cast<long long>(s.patch), static_cast<long long>(s.image));
  }
  VisionConfig v =
      SiglipVisionConfig(static_cast<uint32_t>(s.d), static_cast<uint32_t>(s.heads),
                         static_cast<uint32_t>(s.ffn), static_cast<uint32_t>(s.layers),
                         static_cast<uint32_t>(s.image), static_cast<uint32_t>(s.patch),
                         connector, static_cast<uint32_t>(factor));
  v.encoder.norm_eps = static_cast<float>(eps);
  EMBER_RETURN_IF_ERROR(ParseHfActivation(act, &v.encoder.activation));
  *out = v;
  return Status::Ok();
}

// The SigLIP tower's tensors under `tower` (embeddings.*, encoder.layers.{i}.*,
// post_layernorm.*) as the "v." tensors of `v`.
Status ImportSiglipTower(const std::string& tower, const VisionConfig& v, HfWeights* w,
                         ModelSpec* spec) {
  const ModelConfig& e = v.encoder;
  Mapper m(w, spec);
  const uint64_t D = e.d_model, F = e.ffn_dim, P = v.patch_size;
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
    constexpr const char* kHf[8] = {
        "layer_norm1",        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
        "self_attn.out_proj", "layer_norm2",      "mlp.fc1",          "mlp.fc2"};
    const std::array<SiglipPair, 8> pairs = SiglipLayerPairs(D, F);
    for (size_t k = 0; k < pairs.size(); ++k) {
      const SiglipPair& p = pairs[k];
      const std::string hf = kHf[k];
      EMBER_RETURN_IF_ERROR(copy(hf + ".weight", p.weight,
                                 p.cols ? std::vector<uint64_t>{p.rows, p.cols}
                                        : std::vector<uint64_t>{p.rows}));
      EMBER_RETURN_IF_ERROR(copy(hf + ".bias", p.bias, {p.rows}));
    }
  }
  EMBER_RETURN_IF_ERROR(
      m.Copy(tower + "post_layernorm.weight", v_ + names::kOutputNorm, {D}));
  return m.Copy(tower + "post_layernorm.bias", v_ + names::kOutputNormBias, {D});
}

}  // namespace

std::array<SiglipPair, 8> SiglipLayerPairs(uint64_t d, uint64_t ffn) {
  return {SiglipPair{names::kAttnNorm, names::kAttnNormBias, d, 0},
          SiglipPair{names::kAttnQ, names::kAttnQBias, d, d},
          SiglipPair{names::kAttnK, names::kAttnKBias, d, d},
          SiglipPair{names::kAttnV, names::kAttnVBias, d, d},
          SiglipPair{names::kAttnOut, names::kAttnOutBias, d, d},
          SiglipPair{names::kFfnNorm, names::kFfnNormBias, d, 0},
          SiglipPair{names::kFfnUp, names::kFfnUpBias, ffn, d},
          SiglipPair{names::kFfnDown, names::kFfnDownBias, d, ffn}};
}

void SetIdefics3Processor(VisionConfig* v) {
  // Idefics3ImageProcessor's 4 x 364 over tiles of 364 (SmolVLM's 2048 over 512).
  ImageProcessorConfig& p = v->processor;
  p.layout = ImageLayout::kSplitTiles;
  p.tile_size = static_cast<int>(v->image_size);
  p.longest_edge = 4 * p.tile_size;
  p.resample = ResampleFilter::kLanczos;
  p.alpha_over_white = true;
}

Status ImportGemma3Vision(const Json& root, HfWeights* w, ModelSpec* spec) {
  const auto found = root.find("vision_config");
  if (found == root.end() || !found->is_object()) {
    return InvalidArgument(
        "config.json: a gemma3 model's vision_config is not an object");
  }
  const JsonFields f(*found, "config.json vision_config");
  const JsonFields top(root, "config.json");
  std::string model_type;
  EMBER_RETURN_IF_ERROR(
      f.String("model_type", false, "siglip_vision_model", &model_type));
  if (model_type != "siglip_vision_model") {
    return Unimplemented("config.json vision_config: model_type '%.40s' (SigLIP's only)",
                         model_type.c_str());
  }
  int64_t tokens, image_token;
  bool head;
  EMBER_RETURN_IF_ERROR(f.Bool("vision_use_head", false, false, &head));
  EMBER_RETURN_IF_ERROR(top.Int("mm_tokens_per_image", false, 256, 1, 1 << 20, &tokens));
  const char* token_key =
      top.Has("image_token_id") ? "image_token_id" : "image_token_index";
  EMBER_RETURN_IF_ERROR(top.Int(token_key, false, 262144, 0, INT32_MAX, &image_token));
  if (head)
    return Unimplemented("config.json vision_config: vision_use_head (a pooling head)");
  // SiglipVisionConfig's defaults where the file leaves a key out; SigLIP's processor
  // until the directory's preprocessor_config.json says otherwise; Gemma 3's image
  // blocks attend both ways (token_type_ids_mask_function).
  VisionConfig v;
  EMBER_RETURN_IF_ERROR(ReadTower(f, TowerShape{768, 3072, 12, 12, 224, 16},
                                  ImageConnector::kAveragePool, 1, &v));
  const int64_t side = static_cast<int64_t>(v.patches_per_side());
  const int64_t pooled = std::llround(std::sqrt(tokens));
  if (pooled * pooled != tokens || side % pooled != 0) {
    return InvalidArgument(
        "config.json: %lld image tokens from %lld x %lld patches (image_size %u, "
        "patch_size %u): not a whole pool",
        static_cast<long long>(tokens), static_cast<long long>(side),
        static_cast<long long>(side), v.image_size, v.patch_size);
  }
  v.connector_factor = static_cast<uint32_t>(side / pooled);
  // Gemma3MultiModalProjector's mm_soft_emb_norm takes the vision config's eps.
  v.projector_norm_eps = v.encoder.norm_eps;
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
  EMBER_RETURN_IF_ERROR(ImportSiglipTower(tower, v, w, spec));
  // Gemma's RMSNorm multiplies by 1 + w: stored so. The projection is x @ W with W
  // (D, text d_model): stored transposed, as a Linear's (out, in).
  Mapper m(w, spec);
  const uint64_t D = v.encoder.d_model;
  EMBER_RETURN_IF_ERROR(
      m.Copy(projector + "mm_soft_emb_norm.weight", names::kProjectorNorm, {D}, 1.0f));
  EMBER_RETURN_IF_ERROR(m.Conv1D(projector + "mm_input_projection_weight", D,
                                 {{names::kPoolProjector, spec->config.d_model}}));
  spec->vision = v;
  return Status::Ok();
}

Status ImportIdefics3Vision(const std::string& model_type, const Json& root, HfWeights* w,
                            ModelSpec* spec) {
  // No vision_config: the config class's defaults (Idefics3Config builds one).
  const Json empty = Json::object();
  const auto found = root.find("vision_config");
  if (found != root.end() && !found->is_object()) {
    return InvalidArgument("config.json: a %s model's vision_config is not an object",
                           model_type.c_str());
  }
  const Json& vision_config = found == root.end() ? empty : *found;
  const JsonFields f(vision_config, "config.json vision_config");
  const JsonFields top(root, "config.json");
  std::string vision_type;
  EMBER_RETURN_IF_ERROR(
      f.String("model_type", false, model_type + "_vision", &vision_type));
  if (vision_type != "idefics3_vision" && vision_type != "smolvlm_vision") {
    return Unimplemented(
        "config.json vision_config: model_type '%.40s' (idefics3_vision or "
        "smolvlm_vision)",
        vision_type.c_str());
  }
  // Idefics3Config's and SmolVLMConfig's defaults (SmolVLM's checkpoints set 4 and their
  // own token id).
  int64_t scale, image_token;
  EMBER_RETURN_IF_ERROR(top.Int("scale_factor", false, 2, 1, 64, &scale));
  EMBER_RETURN_IF_ERROR(
      top.Int("image_token_id", false, 128257, 0, INT32_MAX, &image_token));
  // Idefics3VisionConfig's and SmolVLMVisionConfig's defaults (SigLIP So400m's width
  // over 224 / 32).
  VisionConfig v;
  EMBER_RETURN_IF_ERROR(ReadTower(f, TowerShape{1152, 3072, 12, 16, 224, 32},
                                  ImageConnector::kPixelShuffle, scale, &v));
  // pixel_shuffle folds scale x scale patches into one row: the patch grid must split.
  if (v.patches_per_side() % static_cast<size_t>(scale) != 0) {
    return InvalidArgument(
        "config.json: scale_factor %lld does not divide the %zu x %zu patch grid "
        "(image_size %u / patch_size %u)",
        static_cast<long long>(scale), v.patches_per_side(), v.patches_per_side(),
        v.image_size, v.patch_size);
  }
  // The image token's row is looked up before the image rows replace it
  // (inputs_merger): it must be a row of the embedding.
  if (image_token >= spec->config.vocab_size) {
    return InvalidArgument(
        "config.json: image_token_id %lld is past the text model's %u embedding rows",
        static_cast<long long>(image_token), spec->config.vocab_size);
  }
  v.image_token_id = static_cast<int32_t>(image_token);
  // Until a preprocessor_config.json says more.
  SetIdefics3Processor(&v);

  const std::string tower = "model.vision_model.";
  if (!w->Has(tower + "post_layernorm.weight")) {
    return InvalidModel("a %s model without its vision tower (%s*)", model_type.c_str(),
                        tower.c_str());
  }
  EMBER_RETURN_IF_ERROR(ImportSiglipTower(tower, v, w, spec));
  // Idefics3SimpleMLP: one Linear without a bias from the shuffled rows (D scale^2
  // wide) to the text model's width.
  Mapper m(w, spec);
  EMBER_RETURN_IF_ERROR(m.Copy("model.connector.modality_projection.proj.weight",
                               names::kShuffleProjector,
                               {spec->config.d_model, v.projector_inputs()}));
  spec->vision = v;
  return Status::Ok();
}

}  // namespace ember::tools
