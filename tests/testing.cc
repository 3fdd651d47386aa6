// Shared test helpers (see testing.h).
#include "tests/testing.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "gtest/gtest.h"
#include "runtime/generate.h"
#include "runtime/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "runtime/tensor_names.h"
#include "runtime/utf8.h"
#include "tools/convert/llama2c_import.h"
#include "tools/convert/synthetic.h"
#include "tools/util/files.h"

namespace ember::testing {
namespace {

bool CollectToken(void* user, int32_t id, std::string_view text) {
  auto* out = static_cast<Generated*>(user);
  out->ids.push_back(id);
  out->text.append(text);
  return true;
}

}  // namespace

Generated GenerateGreedy(const Model& model, const ThreadPool* pool, size_t n,
                         const SessionOptions& options) {
  Generated out;
  auto session = Session::Create(model, options, pool);
  EXPECT_TRUE(session.ok()) << session.status().message();
  if (!session.ok()) return out;
  SamplerOptions greedy;
  greedy.temperature = 0.0f;
  Sampler sampler(greedy, model.config().vocab_size, session->sampler_scratch());
  const int32_t bos = model.tokenizer().bos_id();
  GenerateResult result;
  Status s = Generate(*session, sampler, &bos, 1, n, &CollectToken, &out, &result);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

std::string ModelsDir() {
  const char* env = getenv("EMBER_MODELS");
  return env && *env ? env : EMBER_DEFAULT_MODELS_DIR;
}

bool HaveModel(const std::string& relative) {
  const std::string path = ModelsDir() + "/" + relative;
  if (access(path.c_str(), R_OK) == 0) return true;
  const char* require = getenv("EMBER_REQUIRE_MODELS");
  const std::string message = "test model " + path +
                              " not found: set EMBER_MODELS to the directory holding "
                              "shared/models (see README)";
  if (require && std::string(require) == "1") {
    ADD_FAILURE() << message;
  } else {
    [&] { GTEST_SKIP_(message.c_str()); }();  // marks the test skipped
  }
  return false;
}

std::string Stories260KPath() {
  // Never destroyed: the atexit handler below runs after static destructors would.
  static const std::string& path = *new std::string([] {
    const std::string dir = ModelsDir() + "/llama2c/stories260K/";
    const char* tmp = getenv("TMPDIR");
    const std::string out = std::string(tmp && *tmp ? tmp : "/tmp") +
                            "/ember_stories260K_" + std::to_string(getpid()) + ".ember";
    ModelSpec spec;
    Status s = tools::ImportLlama2c(dir + "stories260K.bin", dir + "tok512.bin", &spec);
    if (s.ok()) s = WriteModel(spec, out);
    if (!s.ok()) {
      ADD_FAILURE() << "converting stories260K: " << s.message();
      return std::string();
    }
    atexit([] { unlink(Stories260KPath().c_str()); });
    return out;
  }());
  return path;
}

const std::vector<int32_t>& Stories260KGolden() {
  // karpathy/llama2.c doc/stories260K.md: run.c, temperature 0, 256 steps, empty prompt.
  static const std::vector<int32_t> ids = {
      403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338,
      401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385,
      328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426, 338, 391, 266, 267,
      337, 335, 312, 432, 398, 312, 286, 267, 414, 270, 333, 415, 426, 13,  438, 310,
      439, 419, 357, 336, 432, 313, 438, 310, 432, 278, 316, 439, 419, 298, 414, 267,
      265, 282, 295, 433, 426, 436, 317, 286, 296, 418, 269, 279, 292, 416, 439, 413,
      409, 416, 327, 263, 415, 294, 267, 400, 426, 338, 336, 432, 313, 442, 391, 267,
      337, 335, 364, 420, 268, 388, 432, 398, 359, 280, 303, 439, 413, 272, 417, 264,
      312, 426, 436, 13,  438, 310, 286, 296, 418, 269, 279, 292, 416, 439, 413, 409,
      416, 327, 263, 415, 294, 267, 400, 426, 338, 336, 432, 313, 442, 439, 423, 262,
      304, 420, 422, 432, 317, 426, 359, 279, 292, 416, 439, 413, 409, 416, 327, 263,
      415, 294, 267, 400, 426, 436, 13,  438, 310, 279, 292, 416, 439, 413, 391, 267,
      281, 421, 427, 311, 357, 432, 384, 358, 336, 432, 313, 442, 439, 423, 262, 304,
      420, 422, 432, 357, 426, 359, 279, 292, 416, 439, 413, 409, 416, 327, 263, 415,
      294, 267, 400, 426, 436, 320, 285, 357, 336, 432, 313, 455, 289, 439, 413, 263,
      304, 420, 422, 432, 317, 426, 410, 448, 411, 280, 303, 281, 421, 427, 364, 426};
  return ids;
}

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

  spec.tokenizer = tools::SyntheticTokenizer(vocab);  // byte fallback, then filler
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

std::string RandomText(const Tokenizer& tok, size_t bytes, std::mt19937* rng) {
  static const char* const kChars[] = {"\xc3\xa9",
                                       "\xe2\x82\xac",
                                       "\xf0\x9f\x98\x80",
                                       "\xe4\xb8\xad",
                                       "\xe3\x80\x80",
                                       "\t",
                                       "\n",
                                       ",",
                                       "'s",
                                       "'ll",
                                       "'",
                                       "7",
                                       "42",
                                       "3.14",
                                       "!!",
                                       "\x01"};
  auto pick = [&](size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(*rng);
  };
  std::string text;
  while (text.size() < bytes) {
    switch (pick(6)) {
      case 0:
      case 1: {  // a piece (whole pieces make long merges)
        const uint32_t id = static_cast<uint32_t>(pick(tok.vocab_size()));
        size_t bad;
        if (tok.type(id) == TokenType::kNormal && ValidUtf8(tok.piece(id), &bad)) {
          text.append(tok.piece(id));
        }
        break;
      }
      case 2:
        text.append(1 + pick(3), ' ');
        break;
      case 3:
        text.append(kChars[pick(sizeof(kChars) / sizeof(kChars[0]))]);
        break;
      case 4:
        text.append(1 + pick(pick(8) == 0 ? 400 : 12), "aeo tx"[pick(6)]);
        break;
      default:
        for (size_t i = 1 + pick(pick(8) == 0 ? 300 : 6); i > 0; --i) {
          text.push_back(" \n\t"[pick(3)]);
        }
    }
  }
  return text;
}

ScratchDir::ScratchDir(const char* prefix) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern << ": " << strerror(errno);
  } else {
    path_ = pattern;
  }
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  for (const std::string& name : Entries()) unlink((path_ + "/" + name).c_str());
  rmdir(path_.c_str());
}

std::vector<std::string> ScratchDir::Entries() const {
  std::vector<std::string> names;
  DIR* d = path_.empty() ? nullptr : opendir(path_.c_str());
  if (!d) return names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string Utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

std::vector<VocabCase> ReadVocabCases(const std::string& base) {
  std::vector<uint8_t> bytes;
  EXPECT_TRUE(tools::ReadFile(base + ".inp", &bytes).ok());
  const std::string inp(bytes.begin(), bytes.end());
  EXPECT_TRUE(tools::ReadFile(base + ".out", &bytes).ok());
  const std::string out(bytes.begin(), bytes.end());

  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<VocabCase> cases;
  for (size_t pos = 0; pos <= inp.size();) {
    size_t end = inp.find(separator, pos);
    if (end == std::string::npos) end = inp.size();
    cases.push_back({inp.substr(pos, end - pos), {}});
    pos = end + separator.size();
  }
  std::istringstream lines(out);
  std::string line;
  size_t i = 0;
  while (std::getline(lines, line) && i < cases.size()) {
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) cases[i].ids.push_back(id);
    ++i;
  }
  // The text after the last separator is empty, and so is its (missing) last line.
  EXPECT_EQ(cases.size(), 47u) << base;
  return cases;
}

std::string JoinIds(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

}  // namespace ember::testing
