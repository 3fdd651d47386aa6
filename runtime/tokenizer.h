// Tokenizer: encodes text to token ids and decodes ids to bytes, reading its tables in
// place from the model file (no hash tables, no copies, no allocation).
#ifndef EMBER_RUNTIME_TOKENIZER_H_
#define EMBER_RUNTIME_TOKENIZER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/status.h"

namespace ember {

enum class TokenizerKind : uint8_t { kSentencePieceBpe = 0, kByteLevelBpe = 1 };
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
};

class Tokenizer {
 public:
  // Checks every table (sizes, offsets, ordering, id ranges) and binds to it.
  Status Init(const TokenizerTables& tables);

  TokenizerKind kind() const { return t_.kind; }
  uint32_t vocab_size() const { return t_.vocab_size; }
  int32_t bos_id() const { return t_.bos_id; }
  int32_t eos_id() const { return t_.eos_id; }
  bool add_bos() const { return t_.add_bos; }
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

  // Longest text Encode takes (256 MiB): symbols are numbered in int32, and
  // EncodeCapacity cannot overflow a 32-bit size_t.
  static constexpr size_t kMaxTextBytes = size_t{1} << 28;
  // Token ids (int32) a work buffer must hold to encode `text_bytes` bytes of text: 5 per
  // byte, i.e. 20 bytes of memory per prompt byte, plus 6 (SIZE_MAX past kMaxTextBytes).
  // Merging runs in the buffer in O(n log n). After BOS come, for m symbols (at most one
  // a byte, plus the dummy-prefix space; byte-level BPE merges one pre-tokenized chunk
  // at a time, its arrays right after the ids so far): the symbols' ids, which become
  // the output (m); their list links (m); their places in the heap (m); the heap of
  // (symbol, piece or merge) entries (2m). See bpe_merge.h.
  static size_t EncodeCapacity(size_t text_bytes) {
    return text_bytes > kMaxTextBytes ? SIZE_MAX : 5 * text_bytes + 6;
  }
  // Encodes UTF-8 text (BOS first when add_bos) into ids[0, *n). `ids` is also the work
  // buffer: capacity must be at least EncodeCapacity(text.size()). Invalid UTF-8 and
  // text longer than kMaxTextBytes are errors, found before any merging.
  Status Encode(std::string_view text, bool add_bos, int32_t* ids, size_t capacity,
                size_t* n) const;

  // The bytes token `id` adds to the text when it follows `prev_id` (-1 at the start):
  // a byte token gives its byte, a control token nothing, and after BOS a SentencePiece
  // piece loses its leading (dummy-prefix) space. `id` must be < vocab_size.
  std::string_view Decode(int32_t prev_id, int32_t id) const;

 private:
  Status EncodeSentencePiece(std::string_view text, int32_t* ids, size_t* n) const;
  Status EncodeByteLevel(std::string_view text, int32_t* ids, size_t* n) const;
  int32_t Join(int32_t left, int32_t right) const;
  size_t MergeSentencePiece(int32_t* sym, int32_t num_symbols) const;
  int32_t FindMerge(int32_t left, int32_t right) const;
  size_t MergeByteLevel(int32_t* sym, int32_t num_symbols) const;

  TokenizerTables t_;
  // byte -> its <0xNN> token (SentencePiece) or its one-byte piece (byte-level), or -1
  int32_t byte_ids_[256];
};

}  // namespace ember

#endif  // EMBER_RUNTIME_TOKENIZER_H_
