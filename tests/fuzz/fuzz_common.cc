// Shared fuzzing helpers (see fuzz_common.h).
#include "tests/fuzz/fuzz_common.h"

#include <cstdlib>
#include <cstring>
#include <map>

#include "nlohmann/json.hpp"
#include "runtime/model/tensor_names.h"
#include "testing/testing.h"
#include "tools/convert/hf/hf_tokenizer.h"

namespace ember::fuzz {
namespace {

using Json = nlohmann::json;

void AppendBytes(std::vector<uint8_t>* out, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  out->insert(out->end(), b, b + n);
}

const TensorSpec& FindTensor(const ModelSpec& spec, const std::string& name) {
  for (const TensorSpec& t : spec.tensors) {
    if (t.name == name) return t;
  }
  static const TensorSpec kMissing;
  return kMissing;  // an empty tensor: the seed is then simply malformed
}

}  // namespace

std::vector<std::string_view> SplitParts(const uint8_t* data, size_t size,
                                         size_t max_parts) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const size_t at = rest.find(kPartSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(rest.substr(0, at));
    rest.remove_prefix(at + kPartSeparator.size());
  }
  parts.push_back(rest);
  parts.resize(max_parts);
  return parts;
}

std::string JoinParts(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += kPartSeparator;
    out += parts[i];
  }
  return out;
}

AlignedCopy::AlignedCopy(const void* data, size_t size) : size_(size) {
  // Exactly `size` bytes (at least one), so ASan reports any read past the input.
  void* p = nullptr;
  if (posix_memalign(&p, 64, size ? size : 1) != 0) abort();
  data_ = static_cast<uint8_t*>(p);
  if (size) memcpy(data_, data, size);
}

AlignedCopy::~AlignedCopy() { free(data_); }

ModelSpec SmallModelSpec() {
  return testing::TinyModelSpec(/*d_model=*/8, /*n_layers=*/1, /*n_heads=*/2,
                                /*n_kv_heads=*/1, /*ffn_dim=*/8, /*vocab=*/260,
                                /*context=*/16, /*seed=*/7);
}

ModelSpec ModelAroundTokenizer(const TokenizerSpec& tokenizer) {
  ModelSpec spec = SmallModelSpec();
  const uint32_t vocab = static_cast<uint32_t>(tokenizer.pieces.size());
  spec.config.vocab_size = vocab;
  spec.tokenizer = tokenizer;
  for (TensorSpec& t : spec.tensors) {
    if (t.name == names::kTokEmbedding) {
      t.shape[0] = vocab;
      t.values.resize(size_t{vocab} * t.shape[1]);
      for (size_t i = 0; i < t.values.size(); ++i) t.values[i] = 0.01f * (i % 13);
    }
  }
  return spec;
}

std::vector<uint8_t> Llama2cCheckpoint(const ModelSpec& spec) {
  const ModelConfig& c = spec.config;
  const int32_t header[7] = {
      static_cast<int32_t>(c.d_model),
      static_cast<int32_t>(c.ffn_dim),
      static_cast<int32_t>(c.n_layers),
      static_cast<int32_t>(c.n_heads),
      static_cast<int32_t>(c.n_kv_heads),
      static_cast<int32_t>(c.vocab_size) * (c.tied_classifier ? 1 : -1),
      static_cast<int32_t>(c.max_context)};
  std::vector<uint8_t> out;
  AppendBytes(&out, header, sizeof(header));
  auto put = [&](const std::string& name) {
    const TensorSpec& t = FindTensor(spec, name);
    AppendBytes(&out, t.values.data(), t.values.size() * sizeof(float));
  };
  auto put_layers = [&](const char* format) {
    for (uint32_t i = 0; i < c.n_layers; ++i) put(names::LayerName(format, i));
  };
  // run.c's memory_map_weights order.
  put(names::kTokEmbedding);
  for (const char* f :
       {names::kAttnNorm, names::kAttnQ, names::kAttnK, names::kAttnV, names::kAttnOut,
        names::kFfnNorm, names::kFfnGate, names::kFfnDown, names::kFfnUp}) {
    put_layers(f);
  }
  put(names::kOutputNorm);
  const std::vector<float> rope(size_t{c.max_context} * c.head_dim, 0.5f);  // real + imag
  AppendBytes(&out, rope.data(), rope.size() * sizeof(float));
  if (!c.tied_classifier) put(names::kOutput);
  return out;
}

std::vector<uint8_t> Llama2cTokenizer(const TokenizerSpec& tokenizer) {
  std::vector<uint8_t> out;
  int32_t max_len = 0;
  for (const std::string& p : tokenizer.pieces) {
    max_len = std::max(max_len, static_cast<int32_t>(p.size()));
  }
  AppendBytes(&out, &max_len, 4);
  for (size_t i = 0; i < tokenizer.pieces.size(); ++i) {
    const float score = i < tokenizer.scores.size() ? tokenizer.scores[i] : 0.0f;
    const int32_t len = static_cast<int32_t>(tokenizer.pieces[i].size());
    AppendBytes(&out, &score, 4);
    AppendBytes(&out, &len, 4);
    AppendBytes(&out, tokenizer.pieces[i].data(), tokenizer.pieces[i].size());
  }
  return out;
}

std::string Safetensors(const std::vector<NamedTensor>& tensors) {
  Json header = Json::object();
  std::string data;
  for (const NamedTensor& t : tensors) {
    const size_t begin = data.size();
    data.append(reinterpret_cast<const char*>(t.values->data()), t.values->size() * 4);
    header[t.name] = {
        {"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  header["__metadata__"] = {{"format", "pt"}};
  const std::string text = header.dump();
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i)
    file[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  return file + text + data;
}

std::vector<std::string> HfLlamaFiles(bool json_tokenizer) {
  const ModelSpec spec = SmallModelSpec();
  const ModelConfig& c = spec.config;
  // A byte-level vocabulary: the 256 bytes, two merges, end of text; padded by the
  // importer with control tokens up to vocab_size.
  Json vocab = Json::object();
  for (uint32_t b = 0; b < 256; ++b)
    vocab[tools::ByteLevelEncode(std::string(1, char(b)))] = b;
  vocab[tools::ByteLevelEncode(" t")] = 256;
  vocab[tools::ByteLevelEncode("he")] = 257;
  vocab["<|endoftext|>"] = 258;
  const std::vector<std::string> merges = {tools::ByteLevelEncode(" ") + " " + "t",
                                           "h e"};
  Json config = {{"model_type", "llama"},
                 {"architectures", {"LlamaForCausalLM"}},
                 {"hidden_size", c.d_model},
                 {"intermediate_size", c.ffn_dim},
                 {"num_hidden_layers", c.n_layers},
                 {"num_attention_heads", c.n_heads},
                 {"num_key_value_heads", c.n_kv_heads},
                 {"max_position_embeddings", c.max_context},
                 {"vocab_size", c.vocab_size},
                 {"rms_norm_eps", 1e-5},
                 {"tie_word_embeddings", true},
                 {"bos_token_id", 258},
                 {"eos_token_id", 258}};
  // HF names of the tensors SmallModelSpec() has.
  std::vector<NamedTensor> tensors;
  std::map<std::string, std::string> hf_names = {
      {names::kTokEmbedding, "model.embed_tokens.weight"},
      {names::kOutputNorm, "model.norm.weight"}};
  const std::pair<const char*, const char*> layer_names[] = {
      {names::kAttnNorm, "input_layernorm.weight"},
      {names::kAttnQ, "self_attn.q_proj.weight"},
      {names::kAttnK, "self_attn.k_proj.weight"},
      {names::kAttnV, "self_attn.v_proj.weight"},
      {names::kAttnOut, "self_attn.o_proj.weight"},
      {names::kFfnNorm, "post_attention_layernorm.weight"},
      {names::kFfnGate, "mlp.gate_proj.weight"},
      {names::kFfnUp, "mlp.up_proj.weight"},
      {names::kFfnDown, "mlp.down_proj.weight"}};
  for (uint32_t i = 0; i < c.n_layers; ++i) {
    for (const auto& [ember_name, hf_name] : layer_names) {
      hf_names[names::LayerName(ember_name, i)] =
          "model.layers." + std::to_string(i) + "." + hf_name;
    }
  }
  for (const TensorSpec& t : spec.tensors) {
    tensors.push_back({hf_names.at(t.name), t.shape, &t.values});
  }
  std::vector<std::string> files(kNumHfFiles);
  files[0] = config.dump(1);
  files[1] = Safetensors(tensors);
  if (json_tokenizer) {
    Json tok = {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}}},
                {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
                {"added_tokens",
                 {{{"id", 258}, {"content", "<|endoftext|>"}, {"special", true}}}}};
    files[2] = tok.dump(1);
  } else {
    files[3] = vocab.dump();
    files[4] = "#version: 0.2\n" + merges[0] + "\n" + merges[1] + "\n";
  }
  files[5] = Json{{"add_bos_token", false}}.dump();
  return files;
}

}  // namespace ember::fuzz
