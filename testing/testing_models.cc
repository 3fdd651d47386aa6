// Shared test helpers that build models (see testing.h): tiny and families-shaped model
// specs, loading a spec in memory, the KV rows a plan holds.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/model/synthetic_tokenizer.h"
#include "runtime/model/tensor_names.h"
#include "runtime/session.h"
#include "testing/testing.h"

namespace ember::testing {

ModelSpec TinyModelSpec(uint32_t d_model, uint32_t n_layers, uint32_t n_heads,
                        uint32_t n_kv_heads, uint32_t ffn_dim, uint32_t vocab,
                        uint32_t context, uint32_t seed) {
  ModelSpec spec;
  ModelConfig& c = spec.config;
  snprintf(c.architecture, sizeof(c.architecture), "llama");
  c.d_model = d_model;
  c.n_layers = n_layers;
  c.n_heads = n_heads;
  c.n_kv_heads = n_kv_heads;
  c.head_dim = d_model / n_heads;
  c.ffn_dim = ffn_dim;
  c.vocab_size = vocab;
  c.max_context = context;

  std::mt19937 rng(seed);
  auto add = [&](const std::string& name, std::vector<uint64_t> shape, float scale,
                 float offset) {
    TensorSpec t;
    t.name = name;
    t.shape = shape;
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    std::uniform_real_distribution<float> dist(-scale, scale);
    t.values.resize(n);
    for (float& v : t.values) v = offset + dist(rng);
    spec.tensors.push_back(std::move(t));
  };
  const float wscale = 1.0f / std::sqrt(static_cast<float>(d_model));
  const uint64_t D = d_model, Q = c.q_dim(), KV = c.kv_dim(), F = ffn_dim;
  add(names::kTokEmbedding, {vocab, D}, 1.0f, 0.0f);
  for (uint32_t i = 0; i < n_layers; ++i) {
    add(names::LayerName(names::kAttnNorm, i), {D}, 0.1f, 1.0f);
    add(names::LayerName(names::kAttnQ, i), {Q, D}, wscale, 0.0f);
    add(names::LayerName(names::kAttnK, i), {KV, D}, wscale, 0.0f);
    add(names::LayerName(names::kAttnV, i), {KV, D}, wscale, 0.0f);
    add(names::LayerName(names::kAttnOut, i), {D, Q}, wscale, 0.0f);
    add(names::LayerName(names::kFfnNorm, i), {D}, 0.1f, 1.0f);
    add(names::LayerName(names::kFfnGate, i), {F, D}, wscale, 0.0f);
    add(names::LayerName(names::kFfnUp, i), {F, D}, wscale, 0.0f);
    add(names::LayerName(names::kFfnDown, i), {D, F}, 1.0f / std::sqrt(float(F)), 0.0f);
  }
  add(names::kOutputNorm, {D}, 0.1f, 1.0f);

  spec.tokenizer = SyntheticTokenizer(vocab);  // byte fallback, then filler
  spec.description = "tiny random test model";
  return spec;
}

void ExpectPrefillDecodeAndThreadsAgreeBitwise(const Model& model,
                                               const SessionOptions& options,
                                               const std::vector<int32_t>& tokens,
                                               const char* what) {
  const size_t vocab = model.config().vocab_size;
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 3}) {
    auto pool = ThreadPool::Create(threads);
    ASSERT_TRUE(pool.ok());
    auto batched = Session::Create(model, options, pool->get());
    ASSERT_TRUE(batched.ok()) << batched.status().message();
    ASSERT_TRUE(batched->Prefill(tokens.data(), tokens.size()).ok());
    results.emplace_back(batched->logits(), batched->logits() + vocab);
    auto stepped = Session::Create(model, options, pool->get());
    ASSERT_TRUE(stepped.ok());
    for (int32_t t : tokens) ASSERT_TRUE(stepped->Decode(t).ok());
    results.emplace_back(stepped->logits(), stepped->logits() + vocab);
  }
  for (size_t i = 1; i < results.size(); ++i) {
    ASSERT_EQ(0, memcmp(results[0].data(), results[i].data(), vocab * sizeof(float)))
        << what << ": result " << i << " (threads " << 1 + i / 2
        << (i % 2 ? ", decode" : ", prefill") << ") differs";
  }
}

ModelSpec FamiliesModelSpec(uint32_t window, uint32_t context, uint32_t seed) {
  const uint32_t d = 48, layers = 3, heads = 4, kv_heads = 2, head_dim = 16;
  ModelSpec spec = TinyModelSpec(d, layers, heads, kv_heads, 64, 300, context, seed);
  ModelConfig& c = spec.config;
  c.head_dim = head_dim;
  c.rope_pairing = RopePairing::kHalf;
  c.rope_theta = 100000.0f;
  c.rope_scaling = RopeScaling::kYarn;
  c.rope_scaling_factor = 4.0f;
  c.rope_original_context = 16;
  c.rope_attention_factor = 1.1386f;
  c.rope_local_theta = 10000.0f;
  c.qk_norm = c.post_norms = true;
  c.embedding_scale = 6.9375f;
  c.attention_scale = 0.2f;
  c.attn_softcap = 3.0f;
  c.final_softcap = 8.0f;
  c.sliding_window = window;
  c.layer_attention = {LayerAttention::kSliding, LayerAttention::kGlobal,
                       LayerAttention::kSliding};
  std::mt19937 rng(seed + 1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto set = [&](const std::string& name, std::vector<uint64_t> shape, float scale,
                 float offset) {
    TensorSpec* t = nullptr;
    for (TensorSpec& s : spec.tensors) {
      if (s.name == name) t = &s;
    }
    if (!t) {
      spec.tensors.push_back(TensorSpec{name, {}, {}, DType::kF32, {}});
      t = &spec.tensors.back();
    }
    uint64_t n = 1;
    for (uint64_t dim : shape) n *= dim;
    t->shape = shape;
    t->values.resize(n);
    for (float& v : t->values) v = offset + scale * dist(rng);
  };
  const uint64_t D = d, Q = uint64_t{heads} * head_dim,
                 KV = uint64_t{kv_heads} * head_dim;
  const float w = 1.0f / std::sqrt(static_cast<float>(d));
  for (uint32_t i = 0; i < layers; ++i) {
    set(names::LayerName(names::kAttnQ, i), {Q, D}, w, 0.0f);
    set(names::LayerName(names::kAttnK, i), {KV, D}, w, 0.0f);
    set(names::LayerName(names::kAttnV, i), {KV, D}, w, 0.0f);
    set(names::LayerName(names::kAttnOut, i), {D, Q}, 0.125f, 0.0f);
    set(names::LayerName(names::kAttnQNorm, i), {head_dim}, 0.2f, 1.0f);
    set(names::LayerName(names::kAttnKNorm, i), {head_dim}, 0.2f, 1.0f);
    set(names::LayerName(names::kAttnPostNorm, i), {D}, 0.2f, 1.0f);
    set(names::LayerName(names::kFfnPostNorm, i), {D}, 0.2f, 1.0f);
  }
  return spec;
}

VisionConfig SiglipTestConfig(uint32_t d, uint32_t heads, uint32_t ffn, uint32_t layers,
                              uint32_t image, uint32_t patch, ImageConnector connector,
                              uint32_t factor) {
  return SiglipVisionConfig(d, heads, ffn, layers, image, patch, connector, factor);
}

void AddVisionTower(ModelSpec* spec, ImageConnector connector, uint32_t seed) {
  AddVisionTower(spec, SiglipTestConfig(32, 2, 72, 2, 32, 8, connector, 2), seed);
}

void AddVisionTower(ModelSpec* spec, VisionConfig v, uint32_t seed) {
  const ImageConnector connector = v.connector;
  const uint32_t d = v.encoder.d_model, ffn = v.encoder.ffn_dim;
  const uint32_t layers = v.encoder.n_layers;
  v.image_token_id = static_cast<int32_t>(spec->config.vocab_size) + 7;

  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto add = [&](const std::string& name, std::vector<uint64_t> shape, float scale,
                 float offset) {
    TensorSpec t;
    t.name = name;
    t.shape = shape;
    t.dtype = DType::kF32;
    uint64_t n = 1;
    for (uint64_t dim : shape) n *= dim;
    t.values.resize(n);
    for (float& x : t.values) x = offset + scale * dist(rng);
    spec->tensors.push_back(std::move(t));
  };
  const uint64_t D = d, F = ffn;
  const float w = 1.0f / std::sqrt(static_cast<float>(d));
  const std::string p = "v.";
  add(p + names::kPatchEmbedding, {D, v.patch_values()}, 0.1f, 0.0f);
  add(p + names::kPatchEmbeddingBias, {D}, 0.1f, 0.0f);
  add(p + names::kPosEmbedding, {v.patches(), D}, 0.5f, 0.0f);
  for (unsigned l = 0; l < layers; ++l) {
    auto name = [&](const char* format) { return p + names::LayerName(format, l); };
    add(name(names::kAttnNorm), {D}, 0.1f, 1.0f);
    add(name(names::kAttnNormBias), {D}, 0.1f, 0.0f);
    for (const char* m : {names::kAttnQ, names::kAttnK, names::kAttnV, names::kAttnOut}) {
      add(name(m), {D, D}, w, 0.0f);
    }
    for (const char* b :
         {names::kAttnQBias, names::kAttnKBias, names::kAttnVBias, names::kAttnOutBias}) {
      add(name(b), {D}, 0.1f, 0.0f);
    }
    add(name(names::kFfnNorm), {D}, 0.1f, 1.0f);
    add(name(names::kFfnNormBias), {D}, 0.1f, 0.0f);
    add(name(names::kFfnUp), {F, D}, w, 0.0f);
    add(name(names::kFfnUpBias), {F}, 0.1f, 0.0f);
    add(name(names::kFfnDown), {D, F}, 1.0f / std::sqrt(static_cast<float>(ffn)), 0.0f);
    add(name(names::kFfnDownBias), {D}, 0.1f, 0.0f);
  }
  add(p + names::kOutputNorm, {D}, 0.1f, 1.0f);
  add(p + names::kOutputNormBias, {D}, 0.1f, 0.0f);
  const uint64_t text = spec->config.d_model, in = v.projector_inputs();
  if (connector == ImageConnector::kAveragePool) {
    add(names::kProjectorNorm, {D}, 0.1f, 1.0f);
    add(names::kPoolProjector, {text, in}, w, 0.0f);
  } else {
    add(names::kShuffleProjector, {text, in}, 1.0f / std::sqrt(static_cast<float>(in)),
        0.0f);
  }
  spec->vision = v;
}

ModelSpec VisionPromptModelSpec(ImageConnector connector) {
  ModelSpec spec = TinyModelSpec();
  AddVisionTower(&spec, connector);
  TokenizerSpec& tok = spec.tokenizer;
  const std::pair<int32_t, const char*> specials[] = {
      {297, "<boi>"}, {298, "<eoi>"}, {299, "<img>"}};
  for (const auto& [id, text] : specials) {
    tok.pieces[id] = text;
    tok.types[id] = TokenType::kControl;
    if (!tok.scores.empty()) tok.scores[id] = 0.0f;
    tok.added.push_back({static_cast<uint32_t>(id), text, 0});
  }
  VisionConfig& v = *spec.vision;
  v.image_token_id = 299;
  v.prompt.marker = "<boi>";
  v.prompt.before = "\n<boi>";
  v.prompt.after = "<eoi>\n";
  v.prompt.token = "<img>";
  return spec;
}

SessionOptions FamiliesSessionOptions(uint32_t context, uint32_t max_batch, KvType type,
                                      bool shift) {
  SessionOptions options;
  options.max_context = context;
  options.max_batch = max_batch;
  options.kv_type = type;
  options.context_shift = shift;
  options.context_keep = shift ? 4 : 0;
  return options;
}

size_t KvRowsBytes(const SessionPlan& plan) {
  size_t bytes = 0;
  for (size_t i = 0; i < plan.arena.num_buffers(); ++i) {
    const ArenaPlan::Buffer& b = plan.arena.buffer(i);
    const std::string name = b.name;
    if (b.kind == BufferKind::kKvCache && name != "kv_layers" && name != "history") {
      bytes += b.bytes;
    }
  }
  return bytes;
}

std::vector<int32_t> SpreadTokens(size_t n, size_t step) {
  std::vector<int32_t> tokens;
  for (size_t i = 0; i < n; ++i)
    tokens.push_back(static_cast<int32_t>(3 + (i * step) % 290));
  return tokens;
}

LoadedModel LoadSpec(const ModelSpec& spec) {
  LoadedModel out;
  std::vector<uint8_t> bytes;
  const Status s = SerializeModel(spec, &bytes);
  EXPECT_TRUE(s.ok()) << s.message();
  if (!s.ok()) return out;
  out.bytes = AlignedBytes(bytes);
  auto model = Model::FromMemory(out.bytes.data(), out.bytes.size());
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (model.ok()) out.model = std::move(*model);
  return out;
}

ModelSpec ModelSpecAroundTokenizer(const TokenizerSpec& tokenizer) {
  ModelSpec spec = TinyModelSpec(8, 1, 2, 1, 8, 300, 16);
  // Resize the token embedding to the vocabulary; every other tensor keeps its shape.
  const uint32_t vocab = static_cast<uint32_t>(tokenizer.pieces.size());
  spec.config.vocab_size = vocab;
  spec.tokenizer = tokenizer;
  for (TensorSpec& t : spec.tensors) {
    if (t.name == names::kTokEmbedding) {
      t.shape[0] = vocab;
      t.values.assign(size_t{vocab} * t.shape[1], 0.01f);
    }
  }
  return spec;
}

std::string WriteModelAroundTokenizer(const TokenizerSpec& tokenizer,
                                      const std::string& name) {
  const ModelSpec spec = ModelSpecAroundTokenizer(tokenizer);
  const char* tmp = getenv("TMPDIR");
  const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/ember_" + name +
                           "_" + std::to_string(getpid()) + ".ember";
  const Status s = WriteModel(spec, path);
  if (!s.ok()) {
    ADD_FAILURE() << "writing " << path << ": " << s.message();
    return std::string();
  }
  static std::vector<std::string>* to_remove = [] {
    auto* paths = new std::vector<std::string>();
    atexit([] {
      for (const std::string& p : *to_remove) unlink(p.c_str());
    });
    return paths;
  }();
  to_remove->push_back(path);
  return path;
}

std::vector<uint8_t> TinyModelBytes() {
  std::vector<uint8_t> bytes;
  Status s = SerializeModel(TinyModelSpec(), &bytes);
  EXPECT_TRUE(s.ok()) << s.message();
  return bytes;
}

AlignedBytes::AlignedBytes(const std::vector<uint8_t>& bytes)
    : storage_(bytes.size() + 63), size_(bytes.size()) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(storage_.data());
  data_ = storage_.data() + ((64 - base % 64) % 64);
  if (!bytes.empty()) memcpy(data_, bytes.data(), bytes.size());
}

}  // namespace ember::testing
