// Shared test helpers: where the real models are ($EMBER_MODELS or ../shared/models),
// small random models built in memory with the writer, and files and texts for tests.
// Nothing here needs tools/ (stories260K converted by the llama2.c importer is
// tests/stories260k.h).
#ifndef EMBER_TESTING_TESTING_H_
#define EMBER_TESTING_TESTING_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/model/config.h"
#include "runtime/model/model.h"
#include "runtime/model/model_writer.h"
#include "runtime/session_plan.h"
#include "runtime/text/tokenizer.h"

namespace ember {
class ThreadPool;
}  // namespace ember

namespace ember::testing {

// $EMBER_MODELS, else the directory CMake was told (../shared/models).
std::string ModelsDir();

// True if `relative` exists under ModelsDir(). Otherwise the calling test should stop:
// with EMBER_REQUIRE_MODELS=1 (as CI sets) this records a failure, else a skip message.
// Use: if (!HaveModel("llama2c/tokenizer.bin")) return;  (GTEST_SKIP inside helpers does
// not return from the caller).
bool HaveModel(const std::string& relative);

// Greedy generation of n tokens from BOS (pool may be null): the ids and their text.
struct Generated {
  std::vector<int32_t> ids;
  std::string text;
};
Generated GenerateGreedy(const Model& model, const ThreadPool* pool, size_t n,
                         const SessionOptions& options = SessionOptions());

// Runs `tokens` through sessions with these options at 1, 2 and 3 threads, each as one
// prefill (in steps of max_batch) and one token at a time, and expects the last logits of
// all six bitwise equal (gtest failures name `what` and the first that differs).
void ExpectPrefillDecodeAndThreadsAgreeBitwise(const Model& model,
                                               const SessionOptions& options,
                                               const std::vector<int32_t>& tokens,
                                               const char* what = "");

// llama2.c's published greedy output for stories260K from an empty prompt (256 ids).
const std::vector<int32_t>& Stories260KGolden();

// A small Llama-style model with seeded random weights and a byte-fallback tokenizer of
// `vocab` pieces (vocab >= 259), for tests that need any valid model.
ModelSpec TinyModelSpec(uint32_t d_model = 32, uint32_t n_layers = 2,
                        uint32_t n_heads = 4, uint32_t n_kv_heads = 2,
                        uint32_t ffn_dim = 48, uint32_t vocab = 300,
                        uint32_t context = 64, uint32_t seed = 1);

// TinyModelSpec with every feature of the current families on (schema/model.fbs's
// appended Config block): 3 layers (sliding over `window` positions, global, sliding)
// with the sliding ones on their own RoPE base, YaRN scaling on the global one, 4 heads
// of 16 over 2 KV heads (q_dim 64 != d_model 48), qk-norm, post-norms, an embedding
// scale, an attention scale, and attention and final soft-capping (for tests of the
// forward pass that need no reference: consistency across paths and thread counts).
ModelSpec FamiliesModelSpec(uint32_t window = 6, uint32_t context = 96,
                            uint32_t seed = 5);
// Adds a tiny vision tower to `spec` (seeded random f32 weights): a SigLIP-style ViT of
// 2 layers, d 32 in 2 heads, ffn 72, over 32 x 32 tiles of 8 x 8 patches (16), and the
// connector with factor 2 (4 image rows of the text d_model per tile); its image token
// is the vocabulary's size + 7, and Gemma 3's bidirectional blocks go with the average
// pool.
void AddVisionTower(ModelSpec* spec, ImageConnector connector, uint32_t seed = 11);
// The same with a tower of SiglipTestConfig's other sizes.
void AddVisionTower(ModelSpec* spec, VisionConfig tower, uint32_t seed);
// TinyModelSpec with AddVisionTower's tower (4 rows a 32 x 32 tile) whose image token is
// a special token of the tokenizer, and Gemma 3's kind of image prompt in small:
// "<boi>" (id 297) becomes "\n<boi>", "<img>" (299) per row, "<eoi>" (298) "\n".
ModelSpec VisionPromptModelSpec(ImageConnector connector = ImageConnector::kAveragePool);
// The config of such a tower (a SigLIP ViT: pre-LN, LayerNorm eps 1e-6, tanh GELU,
// biases, post_layernorm) of other sizes; its image token unset (-1).
VisionConfig SiglipTestConfig(uint32_t d, uint32_t heads, uint32_t ffn, uint32_t layers,
                              uint32_t image, uint32_t patch, ImageConnector connector,
                              uint32_t factor);
// Options of a session over FamiliesModelSpec's model: `context` positions in steps of
// max_batch tokens (short steps give its sliding layers a ring), a `type` cache, and
// with `shift` a context shift that keeps 4 positions.
SessionOptions FamiliesSessionOptions(uint32_t context, uint32_t max_batch, KvType type,
                                      bool shift);
// Bytes of a plan's KV cache rows: its arrays (q8's scales too), not the layer table
// nor the token history (arena buffers of the same kind).
size_t KvRowsBytes(const SessionPlan& plan);
// n token ids spread over [3, 293): 3 + (i * step) % 290.
std::vector<int32_t> SpreadTokens(size_t n, size_t step = 53);

// Serialized bytes of TinyModelSpec(). Only as aligned as malloc: wrap them in
// AlignedBytes before Model::FromMemory.
std::vector<uint8_t> TinyModelBytes();

// A copy of model bytes at a 64-byte aligned address, as Model::FromMemory needs (a
// std::vector<uint8_t> is only malloc-aligned: 8 bytes on 32-bit Arm).
class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(const std::vector<uint8_t>& bytes);
  // Moves keep the heap buffer, so pointers into it (a Model's) stay valid.
  AlignedBytes(AlignedBytes&&) = default;
  AlignedBytes& operator=(AlignedBytes&&) = default;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::vector<uint8_t> storage_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// A model serialized from `spec` and loaded from memory, with the bytes it lives in
// (model is null, and the test has failed, when the spec does not make a valid model).
struct LoadedModel {
  AlignedBytes bytes;
  std::unique_ptr<Model> model;
};
LoadedModel LoadSpec(const ModelSpec& spec);

// A tiny random model (d_model 8, one layer) around `tokenizer`, for tests of a
// vocabulary.
ModelSpec ModelSpecAroundTokenizer(const TokenizerSpec& tokenizer);
// The same written to a temporary file (removed at exit) whose path is returned.
std::string WriteModelAroundTokenizer(const TokenizerSpec& tokenizer,
                                      const std::string& name);

// Random valid UTF-8 text of about `bytes` bytes for tokenizer tests: pieces of the
// vocabulary, spaces, characters of 2 to 4 bytes (most with no piece), contractions,
// digits, punctuation, runs of one letter or of white space (long chunks and merges).
std::string RandomText(const Tokenizer& tok, size_t bytes, std::mt19937* rng);

// UTF-8 of a code point (any up to U+10FFFF; surrogates too, for tests of invalid text).
std::string Utf8(uint32_t code_point);

// A fresh directory under $TMPDIR (or /tmp), removed with its files at the end of the
// test (it holds no subdirectories).
class ScratchDir {
 public:
  explicit ScratchDir(const char* prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  // The names of the files in it, sorted.
  std::vector<std::string> Entries() const;

 private:
  std::string path_;
};

// llama.cpp's tokenizer test vectors (models/ggml-vocab-*.gguf.{inp,out}): BASE.inp holds
// the texts, each followed by "\n__ggml_vocab_test__\n"; BASE.out one line of
// space-separated ids per text (47 cases in each of ../shared/models/gguf-vocab).
struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};
std::vector<VocabCase> ReadVocabCases(const std::string& base);

// Token ids as "1 2 3" (for messages that compare two lists).
std::string JoinIds(const std::vector<int32_t>& ids);

// Reads the whole file at `path` into *bytes: false (and a test failure) if it cannot be
// opened.
bool ReadFileBytes(const std::string& path, std::vector<uint8_t>* bytes);

}  // namespace ember::testing

#endif  // EMBER_TESTING_TESTING_H_
