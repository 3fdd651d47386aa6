// ModelWriter: builds a .ember file from a config, a tokenizer and f32 tensors,
// converting each tensor to the dtype asked for. Every importer and `convert --synthetic`
// ends here.
#ifndef EMBER_RUNTIME_MODEL_MODEL_WRITER_H_
#define EMBER_RUNTIME_MODEL_MODEL_WRITER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/model/config.h"
#include "runtime/status.h"
#include "runtime/text/tokenizer.h"

namespace ember {

// A chat template compiled to bytecode (runtime/chat/chat_template_format.h) by
// tools/template, with what rendering and chatting need from the tokenizer.
struct ChatProgramSpec {
  std::vector<uint8_t> code;
  std::vector<std::string> strings;  // string constants
  std::vector<double> floats;        // float constants
  uint32_t num_slots = 0, max_stack = 0, max_loops = 0;
  // The texts of the special tokens the template may write (tokenizer_config.json's).
  std::string bos_token, eos_token, unk_token, pad_token;
  // Tokens that end an assistant's turn (Llama 3's <|eot_id|>, ChatML's <|im_end|>).
  std::vector<int32_t> end_of_turn_ids;
  bool empty() const { return code.empty(); }
};

struct TokenizerSpec {
  TokenizerKind kind = TokenizerKind::kSentencePieceBpe;
  std::vector<std::string> pieces;  // raw bytes as they decode
  std::vector<float> scores;        // SentencePiece: one per piece; else empty
  std::vector<TokenType> types;     // one per piece
  struct Merge {
    uint32_t left, right, result, rank;
  };
  std::vector<Merge> merges;  // byte-level BPE
  int32_t bos_id = -1, eos_id = -1, unk_id = -1;
  bool add_bos = true;
  bool add_dummy_prefix = true;
  // Ids that end generation; empty: EOS alone (if there is one).
  std::vector<int32_t> stop_ids;
  std::string chat_template;  // Jinja source; empty: none
  // kDefault: GPT-2's pattern for byte-level BPE, none for SentencePiece.
  PreTokenizerKind pre_tokenizer = PreTokenizerKind::kDefault;
  Normalization normalizer = Normalization::kNone;
  bool ignore_merges = false;
  bool metaspace_is_space = false;
  DummyPrefix dummy_prefix = DummyPrefix::kEverySection;
  // Tokens matched in the text as written (any order: the writer sorts them).
  struct Added {
    uint32_t id;
    std::string text;
    uint8_t flags = 0;  // kAddedLstrip | kAddedRstrip | kAddedNormalized
  };
  std::vector<Added> added;
  ChatProgramSpec chat_program;  // the compiled template; empty: none
  // WordPiece (TokenizerKind::kWordPiece; pieces as they decode: " word", "ing").
  BertNormalizerOptions bert;      // with normalizer kBert
  std::string wordpiece_prefix;    // the source's "##", informational
  uint32_t max_input_chars_per_word = 100;
  bool append_eos = false;         // [CLS] text [SEP] when encoding with BOS
  int32_t pad_id = -1;
  int32_t end_id = -1;  // appended after an embedded text (Qwen3-Embedding), -1: none
  // A reranker's prompt, with {query}, {document} and {instruction}, and the default
  // instruction (Qwen3-Reranker); empty: the post-processor's pair.
  std::string pair_format, pair_instruction;
  // Named prompts (name, text) put before an embedded text, and the index of the one a
  // text gets when none is named (-1: none).
  std::vector<std::pair<std::string, std::string>> prompts;
  int32_t default_prompt = -1;
};

struct TensorSpec {
  std::string name;
  std::vector<uint64_t> shape;  // PyTorch order
  std::vector<float> values;    // row-major f32 source
  DType dtype = DType::kF32;    // what to store
  // Or the bytes exactly as the file stores `dtype` (its layout for that dtype, e.g. q8
  // panels packed from an imported file's own blocks, value for value): written as they
  // are. Set either values or encoded, not both.
  std::vector<uint8_t> encoded;
};

// A baked prompt: a session's saved state after a fixed prefix
// (runtime/chat/prompt_state.h).
struct BakedPromptSpec {
  std::string text;
  std::vector<int32_t> tokens;
  std::vector<uint8_t> state;
  bool empty() const { return state.empty(); }
};

struct ModelSpec {
  ModelConfig config;
  TokenizerSpec tokenizer;
  std::vector<TensorSpec> tensors;
  std::string description;
  BakedPromptSpec baked_prompt;  // empty: none
  std::optional<VisionConfig> vision;  // a vision tower ("v." and "mm." tensors); none
};

// Serializes the model into `out` (the exact bytes of a .ember file).
Status SerializeModel(const ModelSpec& spec, std::vector<uint8_t>* out);
// Serializes, checks the bytes as the loader does (Model::FromMemory) and writes them to
// `path` atomically (runtime/model/atomic_file.h). A model the loader would refuse fails
// with the loader's message and nothing is written. *bytes_written (if given) receives
// the file size.
Status WriteModel(const ModelSpec& spec, const std::string& path,
                  uint64_t* bytes_written = nullptr);

// The tokenizer's sorted_ids: ids of Normal/UserDefined pieces in byte order.
std::vector<uint32_t> SortedPieceIds(const TokenizerSpec& tokenizer);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_MODEL_WRITER_H_
