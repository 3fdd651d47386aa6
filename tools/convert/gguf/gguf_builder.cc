// GGUF files for tests (see gguf_builder.h).
#include "tools/convert/gguf/gguf_builder.h"

#include <cmath>
#include <cstring>

#include "kernels/half.h"
#include "runtime/model/tensor_names.h"

namespace ember::testing {

GgufBuilder& GgufBuilder::Raw(const std::string& key, uint32_t type,
                              const std::string& value) {
  kvs_.emplace_back(key, String(key) + Pod(type) + value);
  return *this;
}

GgufBuilder& GgufBuilder::Remove(const std::string& name) {
  std::vector<std::pair<std::string, std::string>> kvs;
  for (auto& kv : kvs_) {
    if (kv.first != name) kvs.push_back(std::move(kv));
  }
  kvs_ = std::move(kvs);
  std::vector<TensorEntry> tensors;
  for (auto& t : tensors_) {
    if (t.name != name) tensors.push_back(std::move(t));
  }
  tensors_ = std::move(tensors);
  return *this;
}

GgufBuilder& GgufBuilder::Strings(const std::string& key,
                                  const std::vector<std::string>& v) {
  std::string elements;
  for (const std::string& s : v) elements += String(s);
  return Raw(key, kArray, Array(kString, v.size(), elements));
}

GgufBuilder& GgufBuilder::F32s(const std::string& key, const std::vector<float>& v) {
  return Raw(key, kArray,
             Array(kF32, v.size(),
                   std::string(reinterpret_cast<const char*>(v.data()), 4 * v.size())));
}

GgufBuilder& GgufBuilder::I32s(const std::string& key, const std::vector<int32_t>& v) {
  return Raw(key, kArray,
             Array(kI32, v.size(),
                   std::string(reinterpret_cast<const char*>(v.data()), 4 * v.size())));
}

GgufBuilder& GgufBuilder::Tensor(const std::string& name, const std::vector<uint64_t>& ne,
                                 uint32_t type, const std::string& bytes,
                                 int64_t offset) {
  tensors_.push_back({name, ne, type, bytes, offset});
  return *this;
}

GgufBuilder& GgufBuilder::Alignment(uint32_t alignment) {
  alignment_ = alignment;
  return U32("general.alignment", alignment);
}

std::string GgufBuilder::Build() const {
  std::string out = "GGUF" + Pod(version_) + Pod<uint64_t>(tensors_.size()) +
                    Pod<uint64_t>(kvs_.size());
  for (const auto& kv : kvs_) out += kv.second;
  std::string data;
  for (const TensorEntry& t : tensors_) {
    uint64_t offset = t.offset >= 0
                          ? static_cast<uint64_t>(t.offset)
                          : (data.size() + alignment_ - 1) / alignment_ * alignment_;
    if (t.offset < 0) data.resize(offset, '\0');
    if (data.size() < offset + t.bytes.size()) data.resize(offset + t.bytes.size(), '\0');
    data.replace(offset, t.bytes.size(), t.bytes);
    out += String(t.name) + Pod<uint32_t>(t.ne.size());
    for (uint64_t d : t.ne) out += Pod(d);
    out += Pod(t.type) + Pod(offset);
  }
  if (!tensors_.empty())
    out.resize((out.size() + alignment_ - 1) / alignment_ * alignment_, '\0');
  return out + data;
}

std::string F32Bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), 4 * values.size());
}

std::string QuantizeQ8_0(const std::vector<float>& values) {
  std::string out;
  for (size_t b = 0; b + 32 <= values.size(); b += 32) {
    float amax = 0.0f;
    for (size_t i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(values[b + i]));
    const float d = amax / 127.0f, inverse = d != 0.0f ? 1.0f / d : 0.0f;
    out += GgufBuilder::Pod(kernels::FloatToHalf(d));
    for (size_t i = 0; i < 32; ++i) {
      out += static_cast<char>(static_cast<int8_t>(std::lround(values[b + i] * inverse)));
    }
  }
  return out;
}

std::string QuantizeQ4_0(const std::vector<float>& values) {
  std::string out;
  for (size_t b = 0; b + 32 <= values.size(); b += 32) {
    float extreme = 0.0f;
    for (size_t i = 0; i < 32; ++i) {
      if (std::fabs(values[b + i]) > std::fabs(extreme)) extreme = values[b + i];
    }
    const float d = extreme / -8.0f, inverse = d != 0.0f ? 1.0f / d : 0.0f;
    out += GgufBuilder::Pod(kernels::FloatToHalf(d));
    for (size_t j = 0; j < 16; ++j) {
      int q[2];
      for (int h = 0; h < 2; ++h) {
        const int v = static_cast<int>(values[b + j + 16 * h] * inverse + 8.5f);
        q[h] = v < 0 ? 0 : v > 15 ? 15 : v;
      }
      out += static_cast<char>(q[0] | q[1] << 4);
    }
  }
  return out;
}

void AddSentencePieceTokenizer(const TokenizerSpec& tok, GgufBuilder* b) {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (size_t i = 0; i < tok.pieces.size(); ++i) {
    std::string piece = tok.pieces[i];
    for (size_t pos = 0; (pos = piece.find(' ', pos)) != std::string::npos; pos += 3) {
      piece.replace(pos, 1, "\xE2\x96\x81");
    }
    tokens.push_back(piece);
    // GGUF: 1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte.
    static const int32_t kGgufType[] = {1, 2, 3, 6, 4};
    types.push_back(kGgufType[static_cast<int>(tok.types[i])]);
  }
  b->Str("tokenizer.ggml.model", "llama")
      .Strings("tokenizer.ggml.tokens", tokens)
      .F32s("tokenizer.ggml.scores", tok.scores)
      .I32s("tokenizer.ggml.token_type", types);
  if (tok.bos_id >= 0) b->U32("tokenizer.ggml.bos_token_id", tok.bos_id);
  if (tok.eos_id >= 0) b->U32("tokenizer.ggml.eos_token_id", tok.eos_id);
  if (tok.unk_id >= 0) b->U32("tokenizer.ggml.unknown_token_id", tok.unk_id);
}

GgufBuilder LlamaGgufBuilder(const ModelSpec& spec, uint32_t matrix_type,
                             const std::string& arch) {
  const ModelConfig& c = spec.config;
  GgufBuilder b;
  b.Str("general.architecture", arch)
      .U32(arch + ".context_length", c.max_context)
      .U32(arch + ".embedding_length", c.d_model)
      .U32(arch + ".block_count", c.n_layers)
      .U32(arch + ".feed_forward_length", c.ffn_dim)
      .U32(arch + ".attention.head_count", c.n_heads)
      .U32(arch + ".attention.head_count_kv", c.n_kv_heads)
      .U32(arch + ".rope.dimension_count", c.head_dim)
      .F32(arch + ".attention.layer_norm_rms_epsilon", c.norm_eps)
      .F32(arch + ".rope.freq_base", c.rope_theta);
  AddSentencePieceTokenizer(spec.tokenizer, &b);
  for (const TensorSpec& t : spec.tensors) {
    std::vector<uint64_t> ne(t.shape.rbegin(), t.shape.rend());
    if (t.shape.size() == 2 && matrix_type == 8) {
      b.Tensor(t.name, ne, 8, QuantizeQ8_0(t.values));
    } else if (t.shape.size() == 2 && matrix_type == 2) {
      b.Tensor(t.name, ne, 2, QuantizeQ4_0(t.values));
    } else {
      b.Tensor(t.name, ne, 0, F32Bytes(t.values));
    }
  }
  return b;
}

}  // namespace ember::testing
