// Tokenizer: encodes text to token ids and decodes ids to bytes, reading its tables in
// place from the model file (no hash tables, no copies, no allocation).
#ifndef EMBER_RUNTIME_TEXT_TOKENIZER_H_
#define EMBER_RUNTIME_TEXT_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/status.h"
#include "runtime/text/bert_normalizer.h"
#include "runtime/text/pretokenizer.h"

namespace ember {

enum class TokenizerKind : uint8_t {
  kSentencePieceBpe = 0,
  kByteLevelBpe = 1,
  kWordPiece = 2
};
// Unicode normalization before pre-tokenizing (schema: Normalizer).
enum class Normalization : uint8_t { kNone = 0, kNfc = 1, kBert = 2 };
// Which sections get SentencePiece's dummy-prefix space (schema: DummyPrefix).
enum class DummyPrefix : uint8_t {
  kEverySection = 0,
  kFirstUnlessSpace = 1,
  kEveryUnlessSpace = 2
};
// Bits of TokenizerTables::added_flags.
inline constexpr uint8_t kAddedLstrip = 1, kAddedRstrip = 2, kAddedNormalized = 4;
enum class TokenType : uint8_t {
  kNormal = 0,
  kUnknown = 1,
  kControl = 2,
  kByte = 3,
  kUserDefined = 4
};

// The tokenizer tables as they lie in the model file (see schema/model.fbs).
struct TokenizerTables {
  TokenizerKind kind = TokenizerKind::kSentencePieceBpe;
  uint32_t vocab_size = 0;
  const uint8_t* piece_bytes = nullptr;
  size_t piece_bytes_size = 0;
  const uint32_t* piece_offsets = nullptr;  // vocab_size + 1
  const float* scores = nullptr;            // vocab_size, or null (byte-level BPE)
  const uint8_t* types = nullptr;           // vocab_size TokenType values
  const uint32_t* sorted_ids = nullptr;     // ids in piece byte order
  size_t num_sorted = 0;
  const uint32_t* merges = nullptr;  // (left, right, result, rank) quadruples
  size_t num_merges = 0;
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t unk_id = -1;
  bool add_bos = true;
  bool add_dummy_prefix = true;
  uint32_t max_piece_bytes = 0;
  const int32_t* stop_ids = nullptr;  // num_stop_ids ids ending generation
  size_t num_stop_ids = 0;
  bool has_stop_ids = false;  // false (older files): EOS and BOS end it
  const char* chat_template = "";  // Jinja source, chat_template_bytes long ("" if none)
  size_t chat_template_bytes = 0;
  // kDefault (older files) is resolved by Init: kGpt2 for byte-level BPE, else kNone.
  PreTokenizerKind pre_tokenizer = PreTokenizerKind::kDefault;
  Normalization normalizer = Normalization::kNone;
  bool ignore_merges = false;       // byte-level: a chunk that is a piece is that piece
  bool metaspace_is_space = false;  // SentencePiece: U+2581 in the text is a space
  DummyPrefix dummy_prefix = DummyPrefix::kEverySection;
  // Added tokens matched in the text: ids sorted by their text, which is
  // added_text[added_offsets[i], added_offsets[i + 1]); flags kAdded*.
  const uint32_t* added_ids = nullptr;
  size_t num_added = 0;
  const uint32_t* added_offsets = nullptr;  // num_added + 1
  const uint8_t* added_text = nullptr;
  size_t added_text_size = 0;
  const uint8_t* added_flags = nullptr;  // num_added
  // WordPiece: BertNormalizer's options (normalizer kBert), the source's continuing
  // prefix (informational: pieces are stored without it), the longest word in code
  // points (longer: unk_id), [SEP] after the text when encoding with BOS, padding.
  BertNormalizerOptions bert;
  const char* wordpiece_prefix = "";
  size_t wordpiece_prefix_bytes = 0;
  uint32_t max_input_chars_per_word = 100;
  bool append_eos = false;
  int32_t pad_id = -1;
  int32_t end_id = -1;  // appended with EncodeOptions::append_end (-1: none)
  // A reranker's prompt with {query}, {document} and {instruction}, and the default
  // instruction (empty: the post-processor's pair).
  std::string_view pair_format, pair_instruction;
  // Named prompts: entry 2i is prompt i's name, 2i + 1 its text, entry j the bytes
  // prompt_bytes[prompt_offsets[j], prompt_offsets[j + 1]) (num_prompt_offsets: 0, or
  // 2 x prompts + 1); default_prompt: the one a text gets when none is named (-1: none).
  const uint32_t* prompt_offsets = nullptr;
  size_t num_prompt_offsets = 0;
  const uint8_t* prompt_bytes = nullptr;
  size_t prompt_bytes_size = 0;
  int32_t default_prompt = -1;
};

// The longest reranker prompt and default instruction a file may hold (bytes each).
inline constexpr size_t kMaxPairFormatBytes = size_t{1} << 16;
// The most named prompts (sentence-transformers' "prompts") a file may hold; each name
// and text at most kMaxPairFormatBytes.
inline constexpr size_t kMaxPrompts = 64;

struct EncodeOptions {
  bool add_bos = false;  // BOS first (the tokenizer's own add_bos() is the caller's hint)
  // Control tokens written in the text (<|eot_id|>, <start_of_turn>) become their ids, as
  // chat templates need; otherwise they are text like any other. Other added tokens are
  // always matched.
  bool parse_special = false;
  // The tokenizer's end_id after the text, as its post-processor appends it to a text it
  // embeds (Qwen3-Embedding's <|endoftext|>; nothing without one).
  bool append_end = false;
};

class Tokenizer {
 public:
  // Checks every table (sizes, offsets, ordering, id ranges) and binds to it.
  Status Init(const TokenizerTables& tables);

  TokenizerKind kind() const { return t_.kind; }
  uint32_t vocab_size() const { return t_.vocab_size; }
  int32_t bos_id() const { return t_.bos_id; }
  int32_t eos_id() const { return t_.eos_id; }
  int32_t unk_id() const { return t_.unk_id; }
  int32_t pad_id() const { return t_.pad_id; }  // -1: none
  bool add_bos() const { return t_.add_bos; }
  // Whether Encode with add_bos also ends the ids with eos_id (BERT: [CLS] ... [SEP]).
  bool append_eos() const { return t_.append_eos; }
  // The token an embedded text ends with (Qwen3-Embedding's <|endoftext|>), or -1.
  int32_t end_id() const { return t_.end_id; }
  // A reranker's prompt (Qwen3-Reranker's), with {query}, {document} and {instruction},
  // and its default instruction; empty: a pair is the post-processor's.
  std::string_view pair_format() const { return t_.pair_format; }
  std::string_view pair_instruction() const { return t_.pair_instruction; }
  // sentence-transformers' named prompts, put before a text embedded under their name.
  size_t num_prompts() const { return t_.num_prompt_offsets / 2; }
  std::string_view prompt_name(size_t i) const { return PromptPart(2 * i); }
  std::string_view prompt_text(size_t i) const { return PromptPart(2 * i + 1); }
  int32_t default_prompt() const { return t_.default_prompt; }  // -1: none
  // Whether sampling `id` ends generation (the file's stop ids).
  bool IsStop(int32_t id) const {
    if (!t_.has_stop_ids) return id >= 0 && (id == t_.eos_id || id == t_.bos_id);
    for (size_t i = 0; i < t_.num_stop_ids; ++i) {
      if (t_.stop_ids[i] == id) return true;
    }
    return false;
  }
  TokenType type(uint32_t id) const { return static_cast<TokenType>(t_.types[id]); }
  float score(uint32_t id) const { return t_.scores ? t_.scores[id] : 0.0f; }
  const TokenizerTables& tables() const { return t_; }
  // The chat template's Jinja source as stored in the file (empty when there is none).
  std::string_view chat_template() const {
    return {t_.chat_template, t_.chat_template_bytes};
  }

  // The stored bytes of piece `id` (id < vocab_size).
  std::string_view piece(uint32_t id) const {
    return {reinterpret_cast<const char*>(t_.piece_bytes) + t_.piece_offsets[id],
            t_.piece_offsets[id + 1] - t_.piece_offsets[id]};
  }
  // The id of the normal piece with exactly these bytes, or -1.
  int32_t Find(std::string_view bytes) const;

  // Longest text Encode takes (256 MiB; 64 MiB with NFC): symbols are numbered in
  // int32, and EncodeCapacity cannot overflow a 32-bit size_t.
  static constexpr size_t kMaxTextBytes = size_t{1} << 28;
  static constexpr size_t kMaxNfcTextBytes = size_t{1} << 26;
  // Longest word-piece lookup: a word-start piece is looked up with its leading space.
  static constexpr size_t kMaxWordPieceBytes = 256;
  size_t max_text_bytes() const {
    return t_.normalizer == Normalization::kNfc ? kMaxNfcTextBytes : kMaxTextBytes;
  }
  // Token ids (int32) a work buffer must hold to encode `text_bytes` bytes of text
  // (SIZE_MAX past max_text_bytes()): 5 per byte plus 6, i.e. 20 bytes of memory per
  // prompt byte; with NFC 16 per byte plus 8. Merging runs in the buffer in O(n log n).
  // After BOS and the ids so far come, for m symbols (one per byte or character, and
  // the dummy-prefix space; byte-level BPE merges one pre-tokenized chunk at a time):
  // the symbols' ids, which become the output (m); their list links (m); their places
  // in the heap (m); the heap of (symbol, piece or merge) entries (2m). See
  // bpe_merge.h. The ids so far are at most 2 per byte before the section (a byte and a
  // dummy prefix). NFC text, up to 3 times longer, lies at the end of the buffer while
  // it is merged: 5.25 ints per normalized byte. WordPiece: 4 per byte plus 8: at most
  // one id per normalized code point, up to kBertMaxGrowth (3) per byte, with the
  // section's normalized text (as many bytes) at the end of the buffer, BOS and EOS.
  size_t EncodeCapacity(size_t text_bytes) const {
    if (text_bytes > max_text_bytes()) return SIZE_MAX;
    if (t_.kind == TokenizerKind::kWordPiece) return 4 * text_bytes + 8;
    return t_.normalizer == Normalization::kNfc ? 16 * text_bytes + 8
                                                : 5 * text_bytes + 6;
  }
  // Encodes UTF-8 text into ids[0, *n): BOS first when asked, then each section of the
  // text between added tokens (normalized, pre-tokenized, merged) and the added
  // tokens, then EOS when asked for BOS and the tokenizer has append_eos. `ids` is also
  // the work buffer: capacity must be at least EncodeCapacity(text.size()). Invalid
  // UTF-8 and text longer than max_text_bytes() are errors, found before any merging.
  Status Encode(std::string_view text, const EncodeOptions& options, int32_t* ids,
                size_t capacity, size_t* n) const;
  Status Encode(std::string_view text, bool add_bos, int32_t* ids, size_t capacity,
                size_t* n) const {
    EncodeOptions options;
    options.add_bos = add_bos;
    return Encode(text, options, ids, capacity, n);
  }

  // The bytes token `id` adds to the text when it follows `prev_id` (-1 at the start):
  // a byte token gives its byte, a control token nothing, and after BOS a SentencePiece
  // piece loses its leading (dummy-prefix) space, as a WordPiece word-start piece does
  // at the start and after BOS (a continuation joins: "##ing" is stored "ing"). `id`
  // must be < vocab_size.
  std::string_view Decode(int32_t prev_id, int32_t id) const;

 private:
  std::string_view PromptPart(size_t j) const {
    return {reinterpret_cast<const char*>(t_.prompt_bytes) + t_.prompt_offsets[j],
            t_.prompt_offsets[j + 1] - t_.prompt_offsets[j]};
  }
  struct AddedMatch {
    size_t begin;  // where the text before it ends (without white space lstrip took)
    size_t end;    // where the text after it starts (after white space rstrip took)
    int32_t id;    // -1: none (begin = end = the text's size)
    uint8_t flags;
  };
  // The first added token matched at or after pos, or none (begin = text.size()).
  AddedMatch FindAdded(std::string_view text, size_t pos, bool parse_special) const;
  int32_t LongestAddedAt(std::string_view text, size_t pos, bool parse_special) const;
  Status InitAdded();
  Status EncodeSection(std::string_view text, bool prefix, int32_t* ids, size_t capacity,
                       size_t* count) const;
  Status EncodeSentencePiece(std::string_view text, bool prefix, int32_t* ids,
                             size_t* n) const;
  void EncodeByteLevel(std::string_view text, int32_t* ids, size_t* n) const;
  Status InitWordPiece() const;
  void EncodeWordPiece(std::string_view text, int32_t* ids, size_t capacity,
                       size_t* count) const;
  void EncodeWord(std::string_view word, int32_t* ids, size_t* count) const;
  int32_t Join(int32_t left, int32_t right) const;
  size_t MergeByScore(int32_t* sym, int32_t num_symbols) const;
  int32_t FindMerge(int32_t left, int32_t right) const;
  size_t MergeByRank(int32_t* sym, int32_t num_symbols) const;
  std::string_view added_text(size_t i) const {
    return {reinterpret_cast<const char*>(t_.added_text) + t_.added_offsets[i],
            t_.added_offsets[i + 1] - t_.added_offsets[i]};
  }

  TokenizerTables t_;
  // byte -> its <0xNN> token (SentencePiece) or its one-byte piece (byte-level), or -1
  int32_t byte_ids_[256];
  // Bytes an added token may start with: [0] those always matched, [1] all of them.
  uint32_t added_first_bytes_[2][8] = {};
  size_t max_added_bytes_ = 0;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_TEXT_TOKENIZER_H_
