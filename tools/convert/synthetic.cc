// Synthetic models (see synthetic.h): seeded N(0, 1/fan_in) weights in the llama2.c
// tensor layout, and the byte-fallback tokenizer (runtime/model/synthetic_tokenizer.h).
#include "tools/convert/synthetic.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "runtime/model/synthetic_tokenizer.h"
#include "runtime/model/tensor_names.h"

namespace ember::tools {
namespace {

// splitmix64: a small, fast generator whose output is the same on every platform.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1]: 53 random bits, never 0 (log below).
  double Uniform() { return ((Next() >> 11) + 1) * (1.0 / 9007199254740992.0); }

 private:
  uint64_t state_;
};

// Fills `values` from N(0, stddev^2) by the Box-Muller transform, two values per pair of
// uniforms.
void FillNormal(uint64_t seed, float stddev, std::vector<float>* values) {
  Random random(seed);
  constexpr double kTwoPi = 6.283185307179586;
  for (size_t i = 0; i < values->size(); i += 2) {
    const double radius = stddev * std::sqrt(-2.0 * std::log(random.Uniform()));
    const double angle = kTwoPi * random.Uniform();
    (*values)[i] = static_cast<float>(radius * std::cos(angle));
    if (i + 1 < values->size())
      (*values)[i + 1] = static_cast<float>(radius * std::sin(angle));
  }
}

}  // namespace

Status SyntheticPreset(const std::string& name, SyntheticShape* shape) {
  // llama2.c's TinyStories checkpoints (karpathy/tinyllamas).
  if (name == "stories15M") {
    *shape = SyntheticShape{288, 768, 6, 6, 6, 32000, 256};
  } else if (name == "stories110M") {
    *shape = SyntheticShape{768, 2048, 12, 12, 12, 32000, 1024};
  } else {
    return NotFound(
        "no synthetic preset '%s' (stories15M, stories110M, or custom with "
        "--dim --hidden --layers --heads --vocab --ctx)",
        name.c_str());
  }
  return Status::Ok();
}

Status CheckSyntheticShape(const SyntheticShape& s) {
  const struct {
    const char* flag;
    uint32_t value, max;
  } sizes[] = {{"--dim", s.dim, 1 << 16},        {"--hidden", s.hidden, 1 << 18},
               {"--layers", s.layers, 1024},     {"--heads", s.heads, 1024},
               {"--kv-heads", s.kv_heads, 1024}, {"--vocab", s.vocab, 1 << 22},
               {"--ctx", s.ctx, 1 << 24}};  // the loader's limit (tests use it)
  for (const auto& size : sizes) {
    if (size.value == 0 || size.value > size.max) {
      return InvalidArgument("synthetic model: %s %u is outside [1, %u]", size.flag,
                             size.value, size.max);
    }
  }
  if (s.dim % s.heads != 0 || (s.dim / s.heads) % 2 != 0) {
    return InvalidArgument(
        "synthetic model: --dim %u must split into --heads %u heads of an even size",
        s.dim, s.heads);
  }
  if (s.heads % s.kv_heads != 0) {
    return InvalidArgument("synthetic model: --kv-heads %u must divide --heads %u",
                           s.kv_heads, s.heads);
  }
  if (s.vocab < kSyntheticTokenizerMinVocab) {
    return InvalidArgument(
        "synthetic model: --vocab %u is too small: the byte-fallback tokenizer needs %u "
        "pieces (<unk>, <s>, </s> and 256 bytes)",
        s.vocab, kSyntheticTokenizerMinVocab);
  }
  return Status::Ok();
}

Status MakeSyntheticModel(const SyntheticShape& shape_in, uint64_t seed,
                          const std::string& name, ModelSpec* spec) {
  SyntheticShape s = shape_in;
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  EMBER_RETURN_IF_ERROR(CheckSyntheticShape(s));
  ModelConfig& c = spec->config;
  c = ModelConfig();
  snprintf(c.architecture, sizeof(c.architecture), "llama");
  c.d_model = s.dim;
  c.n_layers = s.layers;
  c.n_heads = s.heads;
  c.n_kv_heads = s.kv_heads;
  c.head_dim = s.dim / s.heads;
  c.ffn_dim = s.hidden;
  c.vocab_size = s.vocab;
  c.max_context = s.ctx;
  // The rest are ModelConfig's defaults, llama2.c's architecture: pre-RMSNorm (eps 1e-5),
  // SwiGLU, interleaved RoPE (theta 10000), classifier tied to the embedding.
  spec->tokenizer = SyntheticTokenizer(s.vocab);
  spec->tensors.clear();

  const uint64_t D = s.dim, F = s.hidden, kv_dim = uint64_t{c.head_dim} * s.kv_heads;
  // Tensor i draws from its own stream: seed and index mixed by one splitmix64 step.
  auto add = [&](const std::string& tensor_name, uint64_t rows, uint64_t cols) {
    TensorSpec t;
    t.name = tensor_name;
    if (cols == 0) {  // a norm weight
      t.shape = {rows};
      t.values.assign(rows, 1.0f);
    } else {
      t.shape = {rows, cols};
      t.values.resize(rows * cols);
      Random mix(seed ^ (0xD1B54A32D192ED03ull * (spec->tensors.size() + 1)));
      FillNormal(mix.Next(),
                 static_cast<float>(1.0 / std::sqrt(static_cast<double>(cols))),
                 &t.values);
    }
    spec->tensors.push_back(std::move(t));
  };
  // The classifier is tied to the embedding: its fan-in, d_model, sets the scale.
  add(names::kTokEmbedding, s.vocab, D);
  for (uint32_t l = 0; l < s.layers; ++l) {
    auto layer = [l](const char* format) { return names::LayerName(format, l); };
    add(layer(names::kAttnNorm), D, 0);
    add(layer(names::kAttnQ), D, D);
    add(layer(names::kAttnK), kv_dim, D);
    add(layer(names::kAttnV), kv_dim, D);
    add(layer(names::kAttnOut), D, D);
    add(layer(names::kFfnNorm), D, 0);
    add(layer(names::kFfnGate), F, D);
    add(layer(names::kFfnDown), D, F);
    add(layer(names::kFfnUp), F, D);
  }
  add(names::kOutputNorm, D, 0);
  char description[160];
  snprintf(description, sizeof(description),
           "synthetic %s: random weights (seed %llu), not a trained model", name.c_str(),
           static_cast<unsigned long long>(seed));
  spec->description = description;
  return Status::Ok();
}

Status AddSyntheticVision(const std::string& preset, uint64_t seed, ModelSpec* spec) {
  struct Shape {
    const char* name;
    uint32_t d, layers, heads, ffn, image, patch;
    ImageConnector connector;
    uint32_t factor;
  };
  const Shape shapes[] = {
      {"gemma3", 1152, 27, 16, 4304, 896, 14, ImageConnector::kAveragePool, 4},
      {"smolvlm", 768, 12, 12, 3072, 512, 16, ImageConnector::kPixelShuffle, 4},
      {"tiny", 32, 2, 2, 72, 32, 8, ImageConnector::kAveragePool, 2},
  };
  const Shape* shape = nullptr;
  for (const Shape& s : shapes) {
    if (preset == s.name) shape = &s;
  }
  if (shape == nullptr) {
    return InvalidArgument("no synthetic vision tower '%s' (gemma3, smolvlm, tiny)",
                           preset.c_str());
  }
  TokenizerSpec& tok = spec->tokenizer;
  const uint32_t vocab = spec->config.vocab_size;
  if (vocab < kSyntheticTokenizerMinVocab + 3 || tok.pieces.size() != vocab) {
    return InvalidArgument("a synthetic vision model needs a vocabulary of at least %u",
                           kSyntheticTokenizerMinVocab + 3);
  }
  // Gemma 3's prompt pieces, or with SmolVLM's pixel shuffle, its tiled prompt's.
  const bool tiles = shape->connector == ImageConnector::kPixelShuffle;
  const char* specials[3] = {"<start_of_image>", "<end_of_image>", "<image_soft_token>"};
  if (tiles) {
    specials[0] = "<fake_token_around_image>";
    specials[1] = "<global-img>";
    specials[2] = "<image>";
  }
  for (uint32_t i = 0; i < 3; ++i) {
    const uint32_t id = vocab - 3 + i;
    tok.pieces[id] = specials[i];
    tok.types[id] = TokenType::kControl;
    if (!tok.scores.empty()) tok.scores[id] = 0.0f;
    tok.added.push_back({id, specials[i], 0});
  }

  VisionConfig v =
      SiglipVisionConfig(shape->d, shape->heads, shape->ffn, shape->layers, shape->image,
                         shape->patch, shape->connector, shape->factor);
  const ModelConfig& e = v.encoder;
  v.image_token_id = static_cast<int32_t>(vocab - 1);
  ImageProcessorConfig& p = v.processor;
  if (shape->connector == ImageConnector::kPixelShuffle) {
    p.layout = ImageLayout::kSplitTiles;
    p.longest_edge = 4 * static_cast<int>(shape->image);
    p.tile_size = static_cast<int>(shape->image);
    p.resample = ResampleFilter::kLanczos;
  }
  if (tiles) {  // the tiles' names "<row_R_col_C>" are plain text here
    v.prompt.marker = specials[2];
    v.prompt.token = specials[2];
    v.prompt.layout = ImagePromptLayout::kTiles;
    v.prompt.around = specials[0];
    v.prompt.global_token = specials[1];
  } else {
    v.prompt.marker = specials[0];
    v.prompt.before = std::string("\n\n") + specials[0];
    v.prompt.after = std::string(specials[1]) + "\n\n";
    v.prompt.token = specials[2];
  }

  const uint64_t D = e.d_model, F = e.ffn_dim;
  size_t stream = 1000;  // streams apart from the text model's tensors
  auto add = [&](const std::string& name, uint64_t rows, uint64_t cols, float value) {
    TensorSpec t;
    t.name = name;
    if (cols == 0) {  // a norm weight (1) or a bias (0)
      t.shape = {rows};
      t.values.assign(rows, value);
    } else {
      t.shape = {rows, cols};
      t.values.resize(rows * cols);
      Random mix(seed ^ (0xD1B54A32D192ED03ull * ++stream));
      FillNormal(mix.Next(),
                 static_cast<float>(1.0 / std::sqrt(static_cast<double>(cols))),
                 &t.values);
    }
    spec->tensors.push_back(std::move(t));
  };
  const std::string t = "v.";
  add(t + names::kPatchEmbedding, D, v.patch_values(), 0.0f);
  add(t + names::kPatchEmbeddingBias, D, 0, 0.0f);
  add(t + names::kPosEmbedding, v.patches(), D, 0.0f);
  for (uint32_t l = 0; l < e.n_layers; ++l) {
    auto name = [&](const char* format) { return t + names::LayerName(format, l); };
    add(name(names::kAttnNorm), D, 0, 1.0f);
    add(name(names::kAttnNormBias), D, 0, 0.0f);
    for (const char* m : {names::kAttnQ, names::kAttnK, names::kAttnV, names::kAttnOut}) {
      add(name(m), D, D, 0.0f);
    }
    for (const char* b :
         {names::kAttnQBias, names::kAttnKBias, names::kAttnVBias, names::kAttnOutBias}) {
      add(name(b), D, 0, 0.0f);
    }
    add(name(names::kFfnNorm), D, 0, 1.0f);
    add(name(names::kFfnNormBias), D, 0, 0.0f);
    add(name(names::kFfnUp), F, D, 0.0f);
    add(name(names::kFfnUpBias), F, 0, 0.0f);
    add(name(names::kFfnDown), D, F, 0.0f);
    add(name(names::kFfnDownBias), D, 0, 0.0f);
  }
  add(t + names::kOutputNorm, D, 0, 1.0f);
  add(t + names::kOutputNormBias, D, 0, 0.0f);
  const uint64_t text = spec->config.d_model, in = v.projector_inputs();
  if (v.connector == ImageConnector::kAveragePool) {
    add(names::kProjectorNorm, D, 0, 1.0f);
    add(names::kPoolProjector, text, in, 0.0f);
  } else {
    add(names::kShuffleProjector, text, in, 0.0f);
  }
  spec->vision = v;
  spec->description += std::string(", with a synthetic ") + preset + " vision tower";
  return Status::Ok();
}

}  // namespace ember::tools
