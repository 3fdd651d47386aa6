// GgufBuilder: writes GGUF files for tests and fuzz seeds (metadata of every type,
// tensors with their raw bytes, aligned as general.alignment says), with the hooks the
// broken-file corpus needs (explicit offsets, raw entries, a forced version); and
// GGML block encoders (Q8_0, Q4_0) written from the format's definition.
#ifndef EMBER_TOOLS_CONVERT_GGUF_GGUF_BUILDER_H_
#define EMBER_TOOLS_CONVERT_GGUF_GGUF_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/model/model_writer.h"

namespace ember::testing {

class GgufBuilder {
 public:
  // GGUF value types, as the file numbers them.
  enum Type : uint32_t {
    kU8 = 0,
    kI8 = 1,
    kU16 = 2,
    kI16 = 3,
    kU32 = 4,
    kI32 = 5,
    kF32 = 6,
    kBool = 7,
    kString = 8,
    kArray = 9,
    kU64 = 10,
    kI64 = 11,
    kF64 = 12,
  };

  explicit GgufBuilder(uint32_t version = 3) : version_(version) {}

  // A metadata entry whose value bytes are given as the file holds them.
  GgufBuilder& Raw(const std::string& key, uint32_t type, const std::string& value);
  GgufBuilder& U32(const std::string& key, uint32_t v) { return Raw(key, kU32, Pod(v)); }
  GgufBuilder& I32(const std::string& key, int32_t v) { return Raw(key, kI32, Pod(v)); }
  GgufBuilder& U64(const std::string& key, uint64_t v) { return Raw(key, kU64, Pod(v)); }
  GgufBuilder& F32(const std::string& key, float v) { return Raw(key, kF32, Pod(v)); }
  GgufBuilder& Bool(const std::string& key, bool v) {
    return Raw(key, kBool, std::string(1, v ? 1 : 0));
  }
  GgufBuilder& Str(const std::string& key, const std::string& v) {
    return Raw(key, kString, String(v));
  }
  GgufBuilder& Strings(const std::string& key, const std::vector<std::string>& v);
  GgufBuilder& F32s(const std::string& key, const std::vector<float>& v);
  GgufBuilder& I32s(const std::string& key, const std::vector<int32_t>& v);

  // A tensor of GGML type `type` with dims ne (ne[0] fastest) and its bytes; its offset
  // is the next aligned one unless `offset` is given.
  GgufBuilder& Tensor(const std::string& name, const std::vector<uint64_t>& ne,
                      uint32_t type, const std::string& bytes, int64_t offset = -1);
  // Alignment of the data section and the offsets (written as general.alignment).
  GgufBuilder& Alignment(uint32_t alignment);
  // Removes the metadata entries and tensors named `name`.
  GgufBuilder& Remove(const std::string& name);

  std::string Build() const;

  // Encoders for raw values.
  template <typename T>
  static std::string Pod(T v) {
    return std::string(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  static std::string String(const std::string& s) { return Pod<uint64_t>(s.size()) + s; }
  static std::string Array(uint32_t element_type, uint64_t count,
                           const std::string& elements) {
    return Pod(element_type) + Pod(count) + elements;
  }

 private:
  struct TensorEntry {
    std::string name;
    std::vector<uint64_t> ne;
    uint32_t type;
    std::string bytes;
    int64_t offset;
  };
  uint32_t version_;
  uint32_t alignment_ = 32;
  std::vector<std::pair<std::string, std::string>> kvs_;  // key, encoded entry
  std::vector<TensorEntry> tensors_;
};

// GGML blocks of a row-major (rows, cols) matrix, cols a multiple of 32, quantized the
// way llama.cpp's reference quantizers do: Q8_0 d = absmax / 127, q = round(x / d);
// Q4_0 d = -(signed absmax) / 8, q = clamp(round(x / d) + 8, 0, 15).
std::string QuantizeQ8_0(const std::vector<float>& values);
std::string QuantizeQ4_0(const std::vector<float>& values);
std::string F32Bytes(const std::vector<float>& values);

// A GGUF of a Llama-architecture spec (RMSNorm, SwiGLU, RoPE with interleaved pairs, as
// llama.cpp's files store them) with its SentencePiece tokenizer; every matrix in
// `matrix_type` (0 f32, 8 q8_0 or 2 q4_0), vectors f32. `arch` names the architecture
// and its keys (qwen2: the same keys, RoPE on halves).
GgufBuilder LlamaGgufBuilder(const ModelSpec& spec, uint32_t matrix_type,
                             const std::string& arch = "llama");
inline std::string LlamaGguf(const ModelSpec& spec, uint32_t matrix_type) {
  return LlamaGgufBuilder(spec, matrix_type).Build();
}

// Element i of a row of GGML type `type` (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q4_K,
// Q5_K, Q6_K) as the format defines it, found element by element (where its block, its
// scale and its bits are), independently of the importer's block decoders.
float GgmlReferenceValue(uint32_t type, const uint8_t* row, size_t i);
// `blocks` random blocks of `type` with finite scales of moderate size.
std::string RandomGgmlBlocks(uint32_t type, size_t blocks, uint32_t seed);

// A handcrafted broken file and the message it must be refused with: by the reader
// (GgufFile::Parse), or, a readable file, by the importer (ImportGgufFile).
struct BrokenGguf {
  std::string name;
  std::string bytes;
  std::string message;  // a part of the error message
  bool importer;
};
std::vector<BrokenGguf> BrokenGgufCorpus();
// Adds a SentencePiece-style tokenizer's metadata (tokens with "▁", scores, types, ids).
void AddSentencePieceTokenizer(const TokenizerSpec& tokenizer, GgufBuilder* builder);

// Vision models as llama.cpp's pair of files (gguf_vision_builder.cc). VisionGgufSpec: a
// small synthetic text model (64 wide, 320 pieces) with the "tiny" tower under Gemma 3's
// average pool, or with `shuffle` Idefics3's pixel shuffle by 2 and its projection; its
// tokenizer holds both families' image tokens.
Status VisionGgufSpec(bool shuffle, ModelSpec* spec);
// The text model of a spec alone (its vision tensors left out), as LlamaGguf writes it.
std::string TextGgufOf(const ModelSpec& spec);
// A spec's tower as convert_hf_to_gguf.py --mmproj writes it: clip.* keys, llama.cpp's
// names, the Gemma 3 projection as Hugging Face's (tower, text) matrix, matrices of
// `matrix_type` (0 f32, 1 f16) and vectors f32; `legacy_ffn`: fc1 named ffn_down and
// fc2 ffn_up, as older files name them.
GgufBuilder MmprojGgufBuilder(const ModelSpec& spec, uint32_t matrix_type,
                              bool legacy_ffn = false);

}  // namespace ember::testing

#endif  // EMBER_TOOLS_CONVERT_GGUF_GGUF_BUILDER_H_
