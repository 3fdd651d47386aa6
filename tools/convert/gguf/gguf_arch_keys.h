// The internals gguf_arch.cc shares with the architectures in files of their own
// (gguf_bert.cc): the {arch}.* keys of one architecture, the vocabulary's size.
#ifndef EMBER_TOOLS_CONVERT_GGUF_GGUF_ARCH_KEYS_H_
#define EMBER_TOOLS_CONVERT_GGUF_GGUF_ARCH_KEYS_H_

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "runtime/model/config.h"
#include "runtime/status.h"
#include "tools/convert/gguf/gguf_arch.h"
#include "tools/convert/gguf/gguf_reader.h"

namespace ember::tools {

// The {arch}.* keys of one architecture.
class ArchKeys {
 public:
  ArchKeys(const GgufFile& file, std::string arch) : f_(file), arch_(std::move(arch)) {}

  std::string Key(const char* suffix) const { return arch_ + "." + suffix; }
  bool Has(const char* suffix) const { return f_.Find(Key(suffix)) != nullptr; }

  Status Dim(const char* suffix, bool required, int64_t fallback, int64_t max,
             uint32_t* out) const {
    int64_t v;
    EMBER_RETURN_IF_ERROR(f_.GetInt(Key(suffix), required, fallback, 1, max, &v));
    *out = static_cast<uint32_t>(v);
    return Status::Ok();
  }

  Status Float(const char* suffix, double fallback, double min, double max,
               float* out) const {
    double v;
    EMBER_RETURN_IF_ERROR(f_.GetFloat(Key(suffix), false, fallback, &v));
    if (v < min || v > max) {
      return InvalidModel("GGUF: %s is %g (%g to %g allowed)", Key(suffix).c_str(), v,
                          min, max);
    }
    *out = static_cast<float>(v);
    return Status::Ok();
  }

  // Refuses every {arch}.* key not in `known`: a key ember does not read may change the
  // arithmetic (a scale, a soft cap, a window), and ignoring it would run a different
  // model without a word.
  Status CheckAllKnown(std::initializer_list<const char*> known,
                       std::initializer_list<const char*> extra = {}) const {
    const std::string prefix = arch_ + ".";
    for (const GgufKv& kv : f_.metadata()) {
      if (kv.key.substr(0, prefix.size()) != prefix) continue;
      const std::string_view suffix = kv.key.substr(prefix.size());
      bool found = false;
      for (const char* k : known) found = found || suffix == k;
      for (const char* k : extra) found = found || suffix == k;
      if (!found) {
        return Unimplemented("GGUF: %s is a %s setting ember does not support",
                             GgufQuote(kv.key).c_str(), arch_.c_str());
      }
    }
    return Status::Ok();
  }

  // RoPE scaling: llama.cpp's type (linear when absent) and factor (or the older
  // rope.scale_linear); "none", and a factor of 0 or 1, change nothing. Linear is read;
  // others are refused (Llama 3's scaling comes as the rope_freqs tensor).
  Status RopeScaling(ModelConfig* c) const {
    std::string_view type;
    double factor, linear;
    EMBER_RETURN_IF_ERROR(f_.GetString(Key("rope.scaling.type"), false, &type));
    EMBER_RETURN_IF_ERROR(f_.GetFloat(Key("rope.scaling.factor"), false, 0.0, &factor));
    EMBER_RETURN_IF_ERROR(f_.GetFloat(Key("rope.scale_linear"), false, 0.0, &linear));
    if (factor == 0.0) factor = linear;
    if (factor == 0.0 || factor == 1.0) return Status::Ok();
    if ((type.empty() || type == "linear") && factor > 1.0 && factor < 1e6) {
      c->rope_scaling = RopeScaling::kLinear;
      c->rope_scaling_factor = static_cast<float>(factor);
      return Status::Ok();
    }
    return Unimplemented("GGUF: RoPE scaling (%s '%.20s', factor %g) is not supported",
                         Key("rope.scaling.type").c_str(),
                         type.empty() ? "linear" : std::string(type).c_str(), factor);
  }

 private:
  const GgufFile& f_;
  std::string arch_;
};

// The vocabulary: token_embd's rows, which {arch}.vocab_size must equal when present.
Status VocabSize(const GgufFile& f, const ArchKeys& keys, uint32_t* vocab);

// bert (BERT-style sentence encoders and cross-encoders, llama.cpp's names): post-LN,
// learned positions, segment embeddings, the embeddings' LayerNorm, bidirectional;
// {arch}.pooling_type as the pooling (rank: a reranker's head, cls.* tensors).
Status BertConfig(const GgufFile& f, ModelConfig* c);
// bert's tensors under ember's names: attn_output_norm is the post-attention norm
// (attn_norm), layer_output_norm the post-FFN one (ffn_norm).
void RenameBertTensors(std::vector<GgufTensorSource>* tensors);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_GGUF_GGUF_ARCH_KEYS_H_
