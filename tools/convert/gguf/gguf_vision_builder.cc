// Vision models as llama.cpp's pair of files, for the mmproj tests and fuzz seeds (see
// gguf_builder.h).
#include <algorithm>
#include <cstring>

#include "kernels/half.h"
#include "runtime/model/tensor_names.h"
#include "tools/convert/gguf/gguf_builder.h"
#include "tools/convert/synthetic.h"

namespace ember::testing {
namespace {

const std::vector<float>& ValuesOf(const ModelSpec& spec, const std::string& name) {
  for (const TensorSpec& t : spec.tensors) {
    if (t.name == name) return t.values;
  }
  static const std::vector<float> kNone;
  return kNone;
}

std::string Bytes(const std::vector<float>& values, uint32_t type) {
  if (type == 0) return F32Bytes(values);
  std::string out(values.size() * 2, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = kernels::FloatToHalf(values[i]);
    memcpy(&out[2 * i], &h, 2);
  }
  return out;
}

bool IsProjector(const TensorSpec& t) { return t.name.rfind("mm.", 0) == 0; }

}  // namespace

Status VisionGgufSpec(bool shuffle, ModelSpec* spec) {
  tools::SyntheticShape shape;
  shape.dim = 64;
  shape.hidden = 96;
  shape.layers = 2;
  shape.heads = 4;
  shape.vocab = 320;
  shape.ctx = 128;
  EMBER_RETURN_IF_ERROR(tools::MakeSyntheticModel(shape, 3, "vision", spec));
  EMBER_RETURN_IF_ERROR(tools::AddSyntheticVision("tiny", 4, spec));
  // Idefics3's prompt tokens too, before Gemma 3's three (the last pieces).
  const char* tiles[3] = {"<fake_token_around_image>", "<global-img>", "<image>"};
  TokenizerSpec& tok = spec->tokenizer;
  for (uint32_t i = 0; i < 3; ++i) {
    const uint32_t id = shape.vocab - 6 + i;
    tok.pieces[id] = tiles[i];
    tok.types[id] = TokenType::kControl;
    if (!tok.scores.empty()) tok.scores[id] = 0.0f;
    tok.added.push_back({id, tiles[i], 0});
  }
  if (!shuffle) return Status::Ok();
  // The same tower under Idefics3's connector: the shuffled rows' projection.
  VisionConfig& v = *spec->vision;
  v.connector = ImageConnector::kPixelShuffle;
  v.image_blocks_bidirectional = false;
  v.image_token_id = static_cast<int32_t>(shape.vocab - 4);
  v.prompt = ImagePrompt();
  v.prompt.marker = "<image>";
  v.prompt.token = "<image>";
  v.prompt.layout = ImagePromptLayout::kTiles;
  v.prompt.around = "<fake_token_around_image>";
  v.prompt.global_token = "<global-img>";
  auto& t = spec->tensors;
  t.erase(std::remove_if(t.begin(), t.end(), IsProjector), t.end());
  TensorSpec fc;
  fc.name = names::kShuffleProjector;
  fc.shape = {spec->config.d_model, v.projector_inputs()};
  for (size_t i = 0; i < fc.shape[0] * fc.shape[1]; ++i) {
    fc.values.push_back(static_cast<float>((i * 37) % 101) / 50.0f - 1.0f);
  }
  t.push_back(fc);
  return Status::Ok();
}

std::string TextGgufOf(const ModelSpec& spec) {
  ModelSpec text = spec;
  text.vision.reset();
  auto& t = text.tensors;
  t.erase(std::remove_if(
              t.begin(), t.end(),
              [](const TensorSpec& x) { return names::IsVisionTensor(x.name.c_str()); }),
          t.end());
  return LlamaGguf(text, 0);
}

GgufBuilder MmprojGgufBuilder(const ModelSpec& spec, uint32_t matrix_type,
                              bool legacy_ffn) {
  const VisionConfig& v = *spec.vision;
  const ModelConfig& e = v.encoder;
  const bool gemma3 = v.connector == ImageConnector::kAveragePool;
  GgufBuilder b;
  b.Str("general.architecture", "clip")
      .Bool("clip.has_vision_encoder", true)
      .Str("clip.projector_type", gemma3 ? "gemma3" : "idefics3")
      .U32("clip.vision.image_size", v.image_size)
      .U32("clip.vision.patch_size", v.patch_size)
      .U32("clip.vision.embedding_length", e.d_model)
      .U32("clip.vision.feed_forward_length", e.ffn_dim)
      .U32("clip.vision.block_count", e.n_layers)
      .U32("clip.vision.attention.head_count", e.n_heads)
      .U32("clip.vision.projection_dim", spec.config.d_model)
      .F32("clip.vision.attention.layer_norm_epsilon", e.norm_eps)
      .F32s("clip.vision.image_mean", {0.5f, 0.5f, 0.5f})
      .F32s("clip.vision.image_std", {0.5f, 0.5f, 0.5f})
      .Bool("clip.use_gelu", true);
  // The converter writes Gemma 3's pool only when it is not the default 4.
  if (!gemma3 || v.connector_factor != 4) {
    b.U32("clip.vision.projector.scale_factor", v.connector_factor);
  }
  auto add = [&](const std::string& gguf, const std::string& name,
                 std::vector<uint64_t> ne) {
    const uint32_t type = ne.size() == 1 ? 0 : matrix_type;
    b.Tensor(gguf, ne, type, Bytes(ValuesOf(spec, name), type));
  };
  const uint64_t D = e.d_model, F = e.ffn_dim, P = v.patch_size;
  const std::string v_ = "v.";
  add("v.patch_embd.weight", v_ + names::kPatchEmbedding, {P, P, 3, D});
  add("v.patch_embd.bias", v_ + names::kPatchEmbeddingBias, {D});
  add("v.position_embd.weight", v_ + names::kPosEmbedding, {D, v.patches()});
  for (unsigned i = 0; i < e.n_layers; ++i) {
    const std::string l = "v.blk." + std::to_string(i) + ".";
    auto layer = [&](const char* format) { return v_ + names::LayerName(format, i); };
    const std::string up = legacy_ffn ? "ffn_down" : "ffn_up";
    const std::string down = legacy_ffn ? "ffn_up" : "ffn_down";
    add(l + "ln1.weight", layer(names::kAttnNorm), {D});
    add(l + "ln1.bias", layer(names::kAttnNormBias), {D});
    add(l + "attn_q.weight", layer(names::kAttnQ), {D, D});
    add(l + "attn_q.bias", layer(names::kAttnQBias), {D});
    add(l + "attn_k.weight", layer(names::kAttnK), {D, D});
    add(l + "attn_k.bias", layer(names::kAttnKBias), {D});
    add(l + "attn_v.weight", layer(names::kAttnV), {D, D});
    add(l + "attn_v.bias", layer(names::kAttnVBias), {D});
    add(l + "attn_out.weight", layer(names::kAttnOut), {D, D});
    add(l + "attn_out.bias", layer(names::kAttnOutBias), {D});
    add(l + "ln2.weight", layer(names::kFfnNorm), {D});
    add(l + "ln2.bias", layer(names::kFfnNormBias), {D});
    add(l + up + ".weight", layer(names::kFfnUp), {D, F});
    add(l + up + ".bias", layer(names::kFfnUpBias), {F});
    add(l + down + ".weight", layer(names::kFfnDown), {F, D});
    add(l + down + ".bias", layer(names::kFfnDownBias), {D});
  }
  add("v.post_ln.weight", v_ + names::kOutputNorm, {D});
  add("v.post_ln.bias", v_ + names::kOutputNormBias, {D});
  const uint64_t text_d = spec.config.d_model;
  if (gemma3) {
    add("mm.soft_emb_norm.weight", names::kProjectorNorm, {D});
    // Hugging Face's mm_input_projection_weight, (D, text d), as the file keeps it.
    const std::vector<float>& w = ValuesOf(spec, names::kPoolProjector);
    std::vector<float> t(w.size());
    for (uint64_t r = 0; r < text_d; ++r) {
      for (uint64_t c = 0; c < D; ++c) t[c * text_d + r] = w[r * D + c];
    }
    b.Tensor("mm.input_projection.weight", {text_d, D}, matrix_type,
             Bytes(t, matrix_type));
  } else {
    add("mm.model.fc.weight", names::kShuffleProjector, {v.projector_inputs(), text_d});
  }
  return b;
}

}  // namespace ember::testing
