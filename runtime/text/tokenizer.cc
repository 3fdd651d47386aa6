// Tokenizer: table checks, piece lookup and decoding (encoding: tokenizer_encode.cc,
// added tokens: tokenizer_added.cc).
#include "runtime/text/tokenizer.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "runtime/text/tokenizer_internal.h"
#include "runtime/text/utf8.h"

namespace ember {
namespace {

using tokenizer_internal::CompareBytes;
using tokenizer_internal::kMaxPieceBytes;

// All 256 byte values, so a byte token can decode to a view of one of them.
struct ByteTable {
  char bytes[256];
  constexpr ByteTable() : bytes() {
    for (int i = 0; i < 256; ++i) bytes[i] = static_cast<char>(i);
  }
};
constexpr ByteTable kByteTable;

// Parses "<0xNN>" (SentencePiece's byte-fallback piece); -1 if it is not one.
int ParseBytePiece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  int value = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = piece[i];
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                             : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

bool Searchable(TokenType type) {
  return type == TokenType::kNormal || type == TokenType::kUserDefined;
}

// A merge rank is the merge's line in a merges list: one this large means a corrupt file.
constexpr uint32_t kMaxRank = INT32_MAX;

}  // namespace

const char* PreTokenizerName(PreTokenizerKind kind) {
  switch (kind) {
    case PreTokenizerKind::kDefault:
      return "default";
    case PreTokenizerKind::kNone:
      return "none";
    case PreTokenizerKind::kGpt2:
      return "gpt-2";
    case PreTokenizerKind::kLlama3:
      return "llama3";
    case PreTokenizerKind::kQwen2:
      return "qwen2";
    case PreTokenizerKind::kSmolLm:
      return "smollm";
    case PreTokenizerKind::kBert:
      return "bert";
  }
  return "unknown";
}

Status Tokenizer::Init(const TokenizerTables& t) {
  const uint32_t n = t.vocab_size;
  if (n == 0) return InvalidModel("tokenizer: empty vocabulary");
  if (t.kind != TokenizerKind::kSentencePieceBpe &&
      t.kind != TokenizerKind::kByteLevelBpe && t.kind != TokenizerKind::kWordPiece) {
    return InvalidModel("tokenizer: unknown kind %u", static_cast<unsigned>(t.kind));
  }
  if (!t.piece_offsets || !t.types || !t.sorted_ids) {
    return InvalidModel("tokenizer: piece offsets, types or sorted ids missing");
  }
  if (t.max_piece_bytes > kMaxPieceBytes) {
    return InvalidModel("tokenizer: max_piece_bytes %u exceeds %zu", t.max_piece_bytes,
                        kMaxPieceBytes);
  }
  if (t.piece_offsets[0] != 0)
    return InvalidModel("tokenizer: first piece offset is not 0");
  for (uint32_t i = 0; i < n; ++i) {
    if (t.piece_offsets[i + 1] < t.piece_offsets[i]) {
      return InvalidModel("tokenizer: piece offsets decrease at token %u", i);
    }
    if (t.piece_offsets[i + 1] - t.piece_offsets[i] > t.max_piece_bytes) {
      return InvalidModel("tokenizer: piece %u is longer than max_piece_bytes %u", i,
                          t.max_piece_bytes);
    }
    if (t.types[i] > static_cast<uint8_t>(TokenType::kUserDefined)) {
      return InvalidModel("tokenizer: token %u has unknown type %u", i, t.types[i]);
    }
  }
  if (t.piece_offsets[n] != t.piece_bytes_size) {
    return InvalidModel(
        "tokenizer: piece offsets end at %u but there are %zu piece bytes",
        t.piece_offsets[n], t.piece_bytes_size);
  }
  // Merging orders pairs by score: NaN has no place in that order.
  for (uint32_t i = 0; t.scores && i < n; ++i) {
    if (std::isnan(t.scores[i])) return InvalidModel("tokenizer: score %u is NaN", i);
  }
  if (!t.merges && t.num_merges != 0) return InvalidModel("tokenizer: merges missing");
  if (static_cast<uint8_t>(t.pre_tokenizer) >
          static_cast<uint8_t>(PreTokenizerKind::kBert) ||
      static_cast<uint8_t>(t.normalizer) > static_cast<uint8_t>(Normalization::kBert) ||
      static_cast<uint8_t>(t.dummy_prefix) >
          static_cast<uint8_t>(DummyPrefix::kEveryUnlessSpace)) {
    return InvalidModel(
        "tokenizer: unknown pre-tokenizer %u, normalizer %u or dummy prefix %u",
        static_cast<unsigned>(t.pre_tokenizer), static_cast<unsigned>(t.normalizer),
        static_cast<unsigned>(t.dummy_prefix));
  }
  if (t.kind == TokenizerKind::kSentencePieceBpe &&
      t.pre_tokenizer != PreTokenizerKind::kDefault &&
      t.pre_tokenizer != PreTokenizerKind::kNone) {
    return InvalidModel("tokenizer: SentencePiece BPE with the %s pre-tokenizer",
                        PreTokenizerName(t.pre_tokenizer));
  }
  for (int32_t id : {t.bos_id, t.eos_id, t.unk_id, t.pad_id, t.end_id}) {
    if (id < -1 || id >= static_cast<int64_t>(n)) {
      return InvalidModel("tokenizer: special token id %d outside the vocabulary of %u",
                          id, n);
    }
  }
  if (!t.pair_format.empty() &&
      (t.pair_format.find("{query}") == std::string_view::npos ||
       t.pair_format.find("{document}") == std::string_view::npos ||
       t.pair_format.size() > kMaxPairFormatBytes ||
       t.pair_instruction.size() > kMaxPairFormatBytes)) {
    return InvalidModel(
        "tokenizer: a reranker's prompt of %zu bytes (instruction %zu) "
        "needs {query} and {document} and at most %zu bytes each",
        t.pair_format.size(), t.pair_instruction.size(), kMaxPairFormatBytes);
  }
  // Named prompts: an odd number of offsets, from 0, rising, ending at the bytes' end.
  if (t.num_prompt_offsets > 0) {
    bool ok = t.num_prompt_offsets % 2 == 1 && t.prompt_offsets != nullptr &&
              t.num_prompt_offsets / 2 <= kMaxPrompts && t.prompt_offsets[0] == 0 &&
              t.prompt_offsets[t.num_prompt_offsets - 1] == t.prompt_bytes_size;
    for (size_t j = 1; ok && j < t.num_prompt_offsets; ++j) {
      ok = t.prompt_offsets[j] >= t.prompt_offsets[j - 1] &&
           t.prompt_offsets[j] - t.prompt_offsets[j - 1] <= kMaxPairFormatBytes;
    }
    if (!ok) {
      return InvalidModel(
          "tokenizer: %zu named-prompt offsets over %zu bytes do not "
          "describe at most %zu prompts of at most %zu bytes",
          t.num_prompt_offsets, t.prompt_bytes_size, kMaxPrompts, kMaxPairFormatBytes);
    }
  }
  if (t.default_prompt < -1 ||
      t.default_prompt >= static_cast<int64_t>(t.num_prompt_offsets / 2)) {
    return InvalidModel("tokenizer: default prompt %d of %zu", t.default_prompt,
                        t.num_prompt_offsets / 2);
  }
  for (size_t i = 0; i < t.num_stop_ids; ++i) {
    if (t.stop_ids[i] < 0 || t.stop_ids[i] >= static_cast<int64_t>(n)) {
      return InvalidModel("tokenizer: stop id %d outside the vocabulary of %u",
                          t.stop_ids[i], n);
    }
  }
  t_ = t;  // piece() and type() below read the tables through t_
  if (t_.pre_tokenizer == PreTokenizerKind::kDefault) {  // files older than the field
    t_.pre_tokenizer = t.kind == TokenizerKind::kByteLevelBpe ? PreTokenizerKind::kGpt2
                       : t.kind == TokenizerKind::kWordPiece  ? PreTokenizerKind::kBert
                                                              : PreTokenizerKind::kNone;
  }
  if (t_.append_eos && t_.eos_id < 0) {
    return InvalidModel("tokenizer: append_eos without an EOS token");
  }
  EMBER_RETURN_IF_ERROR(InitWordPiece());
  const bool pre_tokenizes = t_.pre_tokenizer != PreTokenizerKind::kNone;
  if (!HfTextBuiltIn() && (pre_tokenizes || t_.normalizer != Normalization::kNone)) {
    return Unimplemented("tokenizer: the %s %s is left out of this build "
                         "(EMBER_WITH_HF_TEXT=OFF)",
                         pre_tokenizes ? PreTokenizerName(t_.pre_tokenizer)
                         : t_.normalizer == Normalization::kNfc ? "NFC"
                                                                : "BERT",
                         pre_tokenizes ? "pre-tokenizer" : "normalizer");
  }

  // sorted_ids: every searchable piece exactly once, strictly increasing.
  size_t searchable = 0;
  for (uint32_t i = 0; i < n; ++i) searchable += Searchable(type(i));
  if (t.num_sorted != searchable) {
    return InvalidModel("tokenizer: %zu sorted ids for %zu searchable pieces",
                        t.num_sorted, searchable);
  }
  for (size_t i = 0; i < t.num_sorted; ++i) {
    const uint32_t id = t.sorted_ids[i];
    if (id >= n || !Searchable(type(id))) {
      return InvalidModel("tokenizer: sorted id %u is out of range or not a normal piece",
                          id);
    }
    if (i > 0 && !(piece(t.sorted_ids[i - 1]) < piece(id))) {
      return InvalidModel("tokenizer: sorted ids out of order (or duplicate) at %zu", i);
    }
  }
  for (size_t i = 0; i < t.num_merges; ++i) {
    const uint32_t* m = t.merges + 4 * i;
    if (m[0] >= n || m[1] >= n || m[2] >= n) {
      return InvalidModel("tokenizer: merge %zu names a token outside the vocabulary", i);
    }
    if (m[3] >= kMaxRank) {
      return InvalidModel("tokenizer: merge %zu has rank %u (too large)", i, m[3]);
    }
    if (i > 0) {
      const uint32_t* p = m - 4;
      if (p[0] > m[0] || (p[0] == m[0] && p[1] >= m[1])) {
        return InvalidModel("tokenizer: merges out of order (or duplicate) at %zu", i);
      }
    }
    // The result's bytes are the pair's, so decoding agrees with encoding.
    const std::string_view left = piece(m[0]), right = piece(m[1]), result = piece(m[2]);
    if (result.size() != left.size() + right.size() ||
        result.substr(0, left.size()) != left || result.substr(left.size()) != right) {
      return InvalidModel("tokenizer: merge %zu: token %u is not tokens %u + %u", i, m[2],
                          m[0], m[1]);
    }
  }
  EMBER_RETURN_IF_ERROR(InitAdded());
  for (int32_t& id : byte_ids_) id = -1;
  if (t.kind == TokenizerKind::kByteLevelBpe) {
    // Byte-level BPE starts from one piece per byte: all 256 must exist.
    for (int b = 0; b < 256; ++b) {
      const char c = static_cast<char>(b);
      byte_ids_[b] = Find(std::string_view(&c, 1));
      if (byte_ids_[b] < 0) {
        return InvalidModel("tokenizer: byte-level BPE has no piece for byte 0x%02x", b);
      }
    }
    return Status::Ok();
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (type(i) != TokenType::kByte) continue;
    const int value = ParseBytePiece(piece(i));
    if (value < 0) return InvalidModel("tokenizer: byte token %u is not <0xNN>", i);
    byte_ids_[value] = static_cast<int32_t>(i);
  }
  return Status::Ok();
}

int32_t Tokenizer::Find(std::string_view bytes) const {
  size_t lo = 0, hi = t_.num_sorted;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int order = CompareBytes(piece(t_.sorted_ids[mid]), bytes);
    if (order < 0) {
      lo = mid + 1;
    } else if (order > 0) {
      hi = mid;
    } else {
      return static_cast<int32_t>(t_.sorted_ids[mid]);
    }
  }
  return -1;
}

std::string_view Tokenizer::Decode(int32_t prev_id, int32_t id) const {
  const TokenType token_type = type(static_cast<uint32_t>(id));
  if (token_type == TokenType::kControl || token_type == TokenType::kUnknown) return {};
  std::string_view p = piece(static_cast<uint32_t>(id));
  if (token_type == TokenType::kByte) {
    const int value = ParseBytePiece(p);
    return {kByteTable.bytes + value, 1};
  }
  // The space before a word: none at the start (WordPiece) or after BOS.
  const bool starts = prev_id == t_.bos_id ||
                      (t_.kind == TokenizerKind::kWordPiece && prev_id < 0);
  const bool spaced =
      t_.kind == TokenizerKind::kWordPiece ||
      (t_.kind == TokenizerKind::kSentencePieceBpe && t_.add_dummy_prefix);
  if (spaced && starts && !p.empty() && p[0] == ' ') {
    p.remove_prefix(1);
  }
  return p;
}

}  // namespace ember
