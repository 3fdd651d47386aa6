// mmproj files (see gguf_mmproj.h): the clip.* keys into a VisionConfig, the tensors
// under ember's "v." and "mm." names.
#include "tools/convert/gguf/gguf_mmproj.h"

#include <cstring>
#include <string>

#include "runtime/model/tensor_names.h"
#include "tools/convert/gguf/gguf_arch_keys.h"
#include "tools/convert/hf/hf_models.h"

namespace ember::tools {
namespace {

// The clip.* keys ember reads or checks; any other is refused (a key it does not read,
// such as feature_layer or a window pattern, would change the arithmetic).
constexpr const char* kClipKeys[] = {
    "projector_type",      "has_vision_encoder", "has_text_encoder", "has_audio_encoder",
    "has_llava_projector", "use_gelu",           "use_silu"};

Status CheckKeys(const GgufFile& f) {
  std::string_view arch;
  EMBER_RETURN_IF_ERROR(f.GetString("general.architecture", false, &arch));
  if (!arch.empty() && arch != "clip") {
    return InvalidArgument(
        "GGUF mmproj: general.architecture is '%.40s': not a projector file ('clip')",
        std::string(arch).c_str());
  }
  for (const GgufKv& kv : f.metadata()) {
    if (kv.key.substr(0, 5) != "clip." || kv.key.substr(0, 12) == "clip.vision.")
      continue;
    bool known = false;
    for (const char* k : kClipKeys) known = known || kv.key.substr(5) == k;
    if (!known) {
      return Unimplemented("GGUF mmproj: %s is a setting ember does not support",
                           GgufQuote(kv.key).c_str());
    }
  }
  bool vision, text, audio, silu;
  EMBER_RETURN_IF_ERROR(f.GetBool("clip.has_vision_encoder", false, true, &vision));
  EMBER_RETURN_IF_ERROR(f.GetBool("clip.has_text_encoder", false, false, &text));
  EMBER_RETURN_IF_ERROR(f.GetBool("clip.has_audio_encoder", false, false, &audio));
  EMBER_RETURN_IF_ERROR(f.GetBool("clip.use_silu", false, false, &silu));
  if (!vision) return InvalidModel("GGUF mmproj: clip.has_vision_encoder is false");
  if (text || audio) {
    return Unimplemented("GGUF mmproj: a %s encoder (ember reads vision towers)",
                         text ? "text" : "audio");
  }
  // SigLIP's tanh GELU is what both projectors' towers run (use_gelu, or neither key).
  if (silu) return Unimplemented("GGUF mmproj: clip.use_silu (a SiLU tower)");
  return Status::Ok();
}

// clip.vision.image_mean or image_std: 3 floats, into out (left as they are if absent).
Status ReadTriple(const GgufFile& f, const char* key, bool positive, float (&out)[3]) {
  const GgufValue* v = nullptr;
  EMBER_RETURN_IF_ERROR(f.GetArray(key, GgufType::kFloat32, false, &v));
  if (!v) return Status::Ok();
  if (v->count != 3) {
    return InvalidModel("GGUF mmproj: %s holds %llu values (3 wanted)", key,
                        static_cast<unsigned long long>(v->count));
  }
  for (int c = 0; c < 3; ++c) {
    float x;
    memcpy(&x, v->data + 4 * c, 4);
    if (!(x > -1e6f && x < 1e6f) || (positive && !(x > 0.0f))) {
      return InvalidModel("GGUF mmproj: %s[%d] is %g", key, c, static_cast<double>(x));
    }
    out[c] = x;
  }
  return Status::Ok();
}

// The tower's config from clip.vision.*; the connector and its factor as given.
Status ReadTower(const GgufFile& f, ImageConnector connector, int64_t default_factor,
                 VisionConfig* out) {
  const ArchKeys k(f, "clip.vision");
  EMBER_RETURN_IF_ERROR(k.CheckAllKnown(
      {"image_size", "patch_size", "embedding_length", "feed_forward_length",
       "block_count", "attention.head_count", "attention.layer_norm_epsilon",
       "image_mean", "image_std", "projection_dim", "projector.scale_factor",
       "preproc_image_size"}));
  uint32_t d, ffn, layers, heads, image, patch, factor;
  EMBER_RETURN_IF_ERROR(k.Dim("embedding_length", true, 0, 1 << 16, &d));
  EMBER_RETURN_IF_ERROR(k.Dim("feed_forward_length", true, 0, 1 << 18, &ffn));
  EMBER_RETURN_IF_ERROR(k.Dim("block_count", true, 0, 1024, &layers));
  EMBER_RETURN_IF_ERROR(k.Dim("attention.head_count", true, 0, 1024, &heads));
  EMBER_RETURN_IF_ERROR(k.Dim("image_size", true, 0, 8192, &image));
  EMBER_RETURN_IF_ERROR(k.Dim("patch_size", true, 0, 8192, &patch));
  EMBER_RETURN_IF_ERROR(
      k.Dim("projector.scale_factor", false, default_factor, 64, &factor));
  float eps;
  EMBER_RETURN_IF_ERROR(k.Float("attention.layer_norm_epsilon", 1e-6, 1e-12, 0.5, &eps));
  if (d % heads != 0) {
    return InvalidModel("GGUF mmproj: %u heads do not divide the tower's width %u", heads,
                        d);
  }
  if (image % patch != 0) {
    return InvalidModel("GGUF mmproj: patch_size %u does not divide image_size %u", patch,
                        image);
  }
  if ((image / patch) % factor != 0) {
    return InvalidModel(
        "GGUF mmproj: clip.vision.projector.scale_factor %u does not divide the %u x %u "
        "patch grid (image_size %u / patch_size %u)",
        factor, image / patch, image / patch, image, patch);
  }
  VisionConfig v =
      SiglipVisionConfig(d, heads, ffn, layers, image, patch, connector, factor);
  v.encoder.norm_eps = eps;
  v.projector_norm_eps = eps;
  EMBER_RETURN_IF_ERROR(ReadTriple(f, "clip.vision.image_mean", false, v.processor.mean));
  EMBER_RETURN_IF_ERROR(ReadTriple(f, "clip.vision.image_std", true, v.processor.std));
  *out = v;
  return Status::Ok();
}

// Lists the file's tensors under ember's names, each one the file holds exactly once;
// anything else in the file is refused by name.
class ProjectorTensors {
 public:
  ProjectorTensors(const GgufFile& f, std::vector<GgufTensorSource>* out)
      : f_(f), out_(out), used_(f.tensors().size(), false) {}

  // The GGUF tensor `gguf` as ember's `name` of `shape` (PyTorch order), its elements
  // checked against the shape; `transposed`: the file holds the (shape[1], shape[0])
  // matrix.
  Status Add(const std::string& gguf, const std::string& name,
             std::vector<uint64_t> shape, bool transposed = false) {
    const GgufTensorInfo* t = f_.FindTensor(gguf);
    if (!t) return InvalidModel("GGUF mmproj: no tensor %s", GgufQuote(gguf).c_str());
    uint64_t elements = 1;
    for (uint64_t n : shape) elements *= n;
    // A matrix's rows are the file's outermost dimension (a Conv2d's (d, 3, p, p) too);
    // a transposed one's are its innermost.
    const bool rows_match = shape.size() == 1 ? t->n_dims == 1
                            : transposed      ? t->n_dims == 2 && t->ne[0] == shape[0]
                                              : t->ne[t->n_dims - 1] == shape[0];
    if (t->elements != elements || !rows_match) {
      std::string want;
      for (uint64_t n : shape) want += (want.empty() ? "" : " x ") + std::to_string(n);
      return InvalidModel(
          "GGUF mmproj: tensor %s has %llu values in %u dimensions (ne[0] %llu); %s "
          "wants "
          "%s%s",
          GgufQuote(gguf).c_str(), static_cast<unsigned long long>(t->elements),
          t->n_dims, static_cast<unsigned long long>(t->ne[0]), name.c_str(),
          want.c_str(), transposed ? ", transposed" : "");
    }
    used_[static_cast<size_t>(t - f_.tensors().data())] = true;
    GgufTensorSource s;
    s.name = name;
    s.shape = std::move(shape);
    s.source = t;
    s.transposed = transposed;
    out_->push_back(std::move(s));
    return Status::Ok();
  }

  Status CheckAllUsed() const {
    for (size_t i = 0; i < used_.size(); ++i) {
      if (!used_[i]) {
        return Unimplemented(
            "GGUF mmproj: tensor %s is not one ember's SigLIP tower reads",
            GgufQuote(f_.tensors()[i].name).c_str());
      }
    }
    return Status::Ok();
  }

 private:
  const GgufFile& f_;
  std::vector<GgufTensorSource>* out_;
  std::vector<bool> used_;
};

// The SigLIP tower's tensors.
Status MapTower(const GgufFile& f, const VisionConfig& v, ProjectorTensors* t) {
  const uint64_t D = v.encoder.d_model, F = v.encoder.ffn_dim;
  const std::string v_ = "v.";
  EMBER_RETURN_IF_ERROR(
      t->Add("v.patch_embd.weight", v_ + names::kPatchEmbedding, {D, v.patch_values()}));
  EMBER_RETURN_IF_ERROR(
      t->Add("v.patch_embd.bias", v_ + names::kPatchEmbeddingBias, {D}));
  EMBER_RETURN_IF_ERROR(t->Add("v.position_embd.weight", v_ + names::kPosEmbedding,
                               {v.encoder.max_context, D}));
  for (unsigned i = 0; i < v.encoder.n_layers; ++i) {
    const std::string l = "v.blk." + std::to_string(i) + ".";
    // Older files name fc1 (d -> ffn) ffn_down: its rows tell (when ffn differs from d).
    const GgufTensorInfo* down = f.FindTensor(l + "ffn_down.weight");
    const bool swapped = F != D && down && down->ne[0] == D;
    const char* gguf[8] = {"ln1",
                           "attn_q",
                           "attn_k",
                           "attn_v",
                           "attn_out",
                           "ln2",
                           swapped ? "ffn_down" : "ffn_up",
                           swapped ? "ffn_up" : "ffn_down"};
    const std::array<SiglipPair, 8> pairs = SiglipLayerPairs(D, F);
    for (size_t k = 0; k < pairs.size(); ++k) {
      const SiglipPair& p = pairs[k];
      const std::string name = l + gguf[k];
      EMBER_RETURN_IF_ERROR(t->Add(name + ".weight", v_ + names::LayerName(p.weight, i),
                                   p.cols ? std::vector<uint64_t>{p.rows, p.cols}
                                          : std::vector<uint64_t>{p.rows}));
      EMBER_RETURN_IF_ERROR(
          t->Add(name + ".bias", v_ + names::LayerName(p.bias, i), {p.rows}));
    }
  }
  EMBER_RETURN_IF_ERROR(t->Add("v.post_ln.weight", v_ + names::kOutputNorm, {D}));
  return t->Add("v.post_ln.bias", v_ + names::kOutputNormBias, {D});
}

Status MapProjector(const GgufFile& f, ModelSpec* spec,
                    std::vector<GgufTensorSource>* tensors) {
  EMBER_RETURN_IF_ERROR(CheckKeys(f));
  std::string_view type;
  EMBER_RETURN_IF_ERROR(f.GetString("clip.projector_type", true, &type));
  const bool gemma3 = type == "gemma3";
  if (!gemma3 && type != "idefics3") {
    return Unimplemented(
        "GGUF mmproj: clip.projector_type '%.40s' (ember reads gemma3 and idefics3)",
        std::string(type).c_str());
  }
  VisionConfig v;
  EMBER_RETURN_IF_ERROR(
      ReadTower(f, gemma3 ? ImageConnector::kAveragePool : ImageConnector::kPixelShuffle,
                gemma3 ? 4 : 2, &v));
  const uint64_t text_d = spec->config.d_model;
  int64_t projection_dim;
  EMBER_RETURN_IF_ERROR(f.GetInt("clip.vision.projection_dim", false,
                                 static_cast<int64_t>(text_d), 1, 1 << 20,
                                 &projection_dim));
  if (static_cast<uint64_t>(projection_dim) != text_d) {
    return InvalidModel(
        "GGUF mmproj: clip.vision.projection_dim %lld, but the text model is %llu wide",
        static_cast<long long>(projection_dim), static_cast<unsigned long long>(text_d));
  }
  ImageProcessorConfig& p = v.processor;
  int64_t longest_edge = 0;
  if (gemma3) {
    p.alpha_over_white = false;  // Gemma3ImageProcessor: convert("RGB") drops alpha
  } else {
    SetIdefics3Processor(&v);
    EMBER_RETURN_IF_ERROR(f.GetInt("clip.vision.preproc_image_size", false,
                                   p.longest_edge, p.tile_size, 65536, &longest_edge));
    p.longest_edge = static_cast<int>(longest_edge);
  }
  EMBER_RETURN_IF_ERROR(ValidateImageProcessorConfig(p));

  ProjectorTensors t(f, tensors);
  EMBER_RETURN_IF_ERROR(MapTower(f, v, &t));
  if (gemma3) {
    EMBER_RETURN_IF_ERROR(
        t.Add("mm.soft_emb_norm.weight", names::kProjectorNorm, {v.encoder.d_model}));
    EMBER_RETURN_IF_ERROR(t.Add("mm.input_projection.weight", names::kPoolProjector,
                                {text_d, v.encoder.d_model}, /*transposed=*/true));
  } else {
    EMBER_RETURN_IF_ERROR(t.Add("mm.model.fc.weight", names::kShuffleProjector,
                                {text_d, v.projector_inputs()}));
  }
  EMBER_RETURN_IF_ERROR(t.CheckAllUsed());

  // The image token by the name each processor gives it (the rows' marker in the
  // session's tokens: a text model without it is not this projector's), then the
  // prompt as a Hugging Face directory's defaults make it.
  const char* image_token = gemma3 ? "<image_soft_token>" : "<image>";
  v.image_token_id = static_cast<int32_t>(AddedTokenId(spec->tokenizer, image_token));
  if (v.image_token_id < 0) {
    return InvalidModel(
        "GGUF mmproj: a %s projector, but the text model's tokenizer has no added token "
        "'%s' (is it the projector of another model?)",
        gemma3 ? "gemma3" : "idefics3", image_token);
  }
  spec->vision = v;
  return SetImagePrompt(ImageTokenNames(), spec);
}

}  // namespace

Status MapGgufProjector(const GgufFile& f, ModelSpec* spec,
                        std::vector<GgufTensorSource>* tensors) {
  // Every message says it is about the projector file ("GGUF: ..." from the reader's
  // typed reads becomes "GGUF mmproj: ...").
  const Status s = MapProjector(f, spec, tensors);
  if (s.ok() || strncmp(s.message(), "GGUF mmproj", 11) == 0) return s;
  const char* m = s.message();
  if (strncmp(m, "GGUF: ", 6) == 0) m += 6;
  return Status(s.code(), "GGUF mmproj: %s", m);
}

}  // namespace ember::tools
