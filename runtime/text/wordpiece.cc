// WordPiece (BERT), as Hugging Face tokenizers runs it: BertNormalizer, BertPreTokenizer,
// then each word greedily from its start, the longest piece first, continuations after
// the first; a word that cannot be split that way, or longer than
// max_input_chars_per_word code points, is [UNK]. Pieces are found by the sorted_ids
// binary search (Tokenizer::Find): a word-start piece is stored " word", a continuation
// "ing" (the source's "##ing"), so both are found by their bytes as they decode.
#include <cstring>

#include "runtime/text/bert_normalizer.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/tokenizer_internal.h"
#include "runtime/text/utf8.h"

namespace ember {
namespace {

using tokenizer_internal::kMaxPieceBytes;

// Longest continuing-subword prefix a file may name ("##" in every BERT vocabulary).
constexpr size_t kMaxPrefixBytes = 16;

bool IsContinuationByte(char c) { return (static_cast<uint8_t>(c) & 0xC0) == 0x80; }

}  // namespace

Status Tokenizer::InitWordPiece() const {
  const TokenizerTables& t = t_;
  const bool bert_options = t.bert.clean_text || t.bert.handle_chinese_chars ||
                            t.bert.strip_accents || t.bert.lowercase;
  if (t.kind != TokenizerKind::kWordPiece) {
    if (t.pre_tokenizer == PreTokenizerKind::kBert ||
        t.normalizer == Normalization::kBert || bert_options) {
      return InvalidModel(
          "tokenizer: the BERT normalizer or pre-tokenizer without WordPiece");
    }
    return Status::Ok();
  }
  if (t.unk_id < 0) return InvalidModel("tokenizer: WordPiece without an unknown token");
  if (t_.pre_tokenizer != PreTokenizerKind::kBert) {
    return InvalidModel("tokenizer: WordPiece with the %s pre-tokenizer",
                        PreTokenizerName(t_.pre_tokenizer));
  }
  if (t.normalizer == Normalization::kNfc ||
      (bert_options && t.normalizer != Normalization::kBert)) {
    return InvalidModel(
        "tokenizer: WordPiece with NFC, or BERT options without BERT's "
        "normalizer");
  }
  if (t.num_merges != 0) return InvalidModel("tokenizer: WordPiece with merges");
  if (t.wordpiece_prefix_bytes > kMaxPrefixBytes || !t.wordpiece_prefix) {
    return InvalidModel("tokenizer: the WordPiece prefix is longer than %zu bytes",
                        kMaxPrefixBytes);
  }
  size_t bad = 0;
  if (!ValidUtf8({t.wordpiece_prefix, t.wordpiece_prefix_bytes}, &bad)) {
    return InvalidModel("tokenizer: the WordPiece prefix is not valid UTF-8");
  }
  if (t.max_input_chars_per_word == 0 || t.max_input_chars_per_word > kMaxTextBytes) {
    return InvalidModel("tokenizer: max_input_chars_per_word %u is not in [1, %zu]",
                        t.max_input_chars_per_word, kMaxTextBytes);
  }
  return Status::Ok();
}

// Normalizes the section into the end of the buffer (kBertMaxGrowth bytes per byte),
// then writes each word's pieces from ids[*count] on. An id written for a piece is at
// most one per normalized code point before the piece's end, so it stays below the
// bytes still to be read when capacity >= EncodeCapacity (tokenizer.h).
void Tokenizer::EncodeWordPiece(std::string_view text, int32_t* ids, size_t capacity,
                                size_t* count) const {
  if (t_.normalizer == Normalization::kBert) {
    char* work = reinterpret_cast<char*>(ids + capacity) - kBertMaxGrowth * text.size();
    text = std::string_view(work, BertNormalize(text, t_.bert, work));
  }
  uint32_t cp = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = BertChunkEnd(text, pos);
    if (DecodeUtf8(text, pos, &cp) > 0 && !IsBertSpace(cp)) {
      EncodeWord(text.substr(pos, end - pos), ids, count);
    }
    pos = end;
  }
}

// Greedy longest-match-first: from each start, the longest piece that is a prefix of the
// rest of the word (with its leading space at the word's start), then on from its end.
void Tokenizer::EncodeWord(std::string_view word, int32_t* ids, size_t* count) const {
  size_t chars = 0;
  for (char c : word) chars += !IsContinuationByte(c);
  const size_t first = *count;
  if (chars <= t_.max_input_chars_per_word) {
    char key[kMaxPieceBytes + 1];
    key[0] = ' ';
    for (size_t start = 0; start < word.size();) {
      // The longest candidate a piece can be (max_piece_bytes, less the space).
      const size_t limit = t_.max_piece_bytes;
      const size_t room = start > 0 ? limit : limit > 0 ? limit - 1 : 0;
      size_t end = word.size() - start > room ? start + room : word.size();
      while (end > start && end < word.size() && IsContinuationByte(word[end])) --end;
      int32_t id = -1;
      for (; end > start; --end) {
        if (end < word.size() && IsContinuationByte(word[end])) continue;
        if (start == 0) {
          memcpy(key + 1, word.data(), end);
          id = Find(std::string_view(key, end + 1));
        } else {
          id = Find(word.substr(start, end - start));
        }
        if (id >= 0) break;
      }
      if (id < 0) {  // no piece fits here: the whole word is unknown
        *count = first;
        break;
      }
      ids[(*count)++] = id;
      start = end;
    }
    if (*count > first) return;
  }
  ids[(*count)++] = t_.unk_id;
}

}  // namespace ember
