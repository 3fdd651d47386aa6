// Tokenizer::Encode: added tokens split the text into sections; each is normalized,
// pre-tokenized and merged by SentencePiece-style BPE (by score as llama2.c, or by rank
// as Hugging Face) or byte-level BPE, all in the caller's buffer (bpe_merge.h), or split
// into word pieces (wordpiece.cc).
#include <cstring>

#include "runtime/text/bpe_merge.h"
#include "runtime/text/normalizer.h"
#include "runtime/text/pretokenizer.h"
#include "runtime/text/tokenizer.h"
#include "runtime/text/tokenizer_internal.h"
#include "runtime/text/utf8.h"

namespace ember {
namespace {

using tokenizer_internal::kMaxPieceBytes;

constexpr char kMetaspace[] = "\xE2\x96\x81";  // U+2581

bool StartsWithSpace(std::string_view text, bool metaspace_is_space) {
  return !text.empty() &&
         (text[0] == ' ' || (metaspace_is_space && text.substr(0, 3) == kMetaspace));
}

}  // namespace

Status Tokenizer::Encode(std::string_view text, const EncodeOptions& options,
                         int32_t* ids, size_t capacity, size_t* n) const {
  *n = 0;
  if (text.size() > max_text_bytes()) {
    return InvalidArgument("text of %zu bytes is longer than the %zu Encode takes",
                           text.size(), max_text_bytes());
  }
  if (capacity < EncodeCapacity(text.size())) {
    return ResourceExhausted("text of %zu bytes needs a token buffer of %zu, got %zu",
                             text.size(), EncodeCapacity(text.size()), capacity);
  }
  size_t bad = 0;
  if (!ValidUtf8(text, &bad)) {
    return InvalidArgument("text is not valid UTF-8 (byte %zu of %zu)", bad, text.size());
  }
  size_t count = 0;
  if (options.add_bos) {
    if (t_.bos_id < 0) return InvalidArgument("this model's tokenizer has no BOS token");
    ids[count++] = t_.bos_id;
  }
  // A section starts the text or follows an added token matched outside normalization
  // (a "normalized" one is found inside the normalized text, so no dummy prefix
  // restarts after it: Hugging Face's AddedVocabulary).
  bool section_start = true;
  for (size_t pos = 0;;) {
    const AddedMatch m = FindAdded(text, pos, options.parse_special);
    const std::string_view section = text.substr(pos, m.begin - pos);
    bool prefix = t_.kind == TokenizerKind::kSentencePieceBpe && t_.add_dummy_prefix &&
                  section_start && !section.empty();
    if (prefix && t_.dummy_prefix != DummyPrefix::kEverySection) {
      prefix = !StartsWithSpace(section, t_.metaspace_is_space) &&
               (t_.dummy_prefix == DummyPrefix::kEveryUnlessSpace || pos == 0);
    }
    EMBER_RETURN_IF_ERROR(EncodeSection(section, prefix, ids, capacity, &count));
    if (m.id < 0) break;
    ids[count++] = m.id;
    section_start = !(m.flags & kAddedNormalized);
    pos = m.end;
  }
  if (options.add_bos && t_.append_eos) ids[count++] = t_.eos_id;  // Init: eos_id >= 0
  if (options.append_end && t_.end_id >= 0) ids[count++] = t_.end_id;
  *n = count;
  return Status::Ok();
}

// Normalizes the section when it is not NFC already: the normalized text goes to the end
// of the buffer, out of the way of the ids and the merge arrays growing from the front
// (EncodeCapacity's budget).
Status Tokenizer::EncodeSection(std::string_view text, bool prefix, int32_t* ids,
                                size_t capacity, size_t* count) const {
  if (text.empty()) return Status::Ok();
  if (t_.kind == TokenizerKind::kWordPiece) {
    EncodeWordPiece(text, ids, capacity, count);
    return Status::Ok();
  }
  if (t_.normalizer == Normalization::kNfc && !IsNfcQuick(text)) {
    char* work = reinterpret_cast<char*>(ids + *count);
    const size_t bytes = ToNfc(text, work);
    char* end = reinterpret_cast<char*>(ids + capacity);
    memmove(end - bytes, work, bytes);
    text = std::string_view(end - bytes, bytes);
  }
  size_t encoded = 0;
  if (t_.kind == TokenizerKind::kSentencePieceBpe) {
    EMBER_RETURN_IF_ERROR(EncodeSentencePiece(text, prefix, ids + *count, &encoded));
  } else {
    EncodeByteLevel(text, ids + *count, &encoded);
  }
  *count += encoded;
  return Status::Ok();
}

// SentencePiece-style BPE: the dummy-prefix space, one symbol per UTF-8 character (the
// character's byte tokens when it is not a piece, <unk> when those are missing too),
// then merges by score (llama2.c) or by rank (Hugging Face).
Status Tokenizer::EncodeSentencePiece(std::string_view text, bool prefix, int32_t* ids,
                                      size_t* n) const {
  size_t count = 0;
  if (prefix) {
    const int32_t space = Find(" ");
    if (space < 0) return InvalidModel("tokenizer: no ' ' piece for the dummy prefix");
    ids[count++] = space;
  }
  uint32_t cp = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = DecodeUtf8(text, pos, &cp);  // > 0: the text was validated
    const std::string_view character = t_.metaspace_is_space && cp == 0x2581
                                           ? std::string_view(" ")
                                           : text.substr(pos, len);
    const int32_t id = Find(character);
    pos += len;
    if (id >= 0) {
      ids[count++] = id;
      continue;
    }
    // Its bytes: Hugging Face takes all or none (then <unk>); llama2.c each it has,
    // then <unk> for the first it has not.
    const uint8_t* bytes = reinterpret_cast<const uint8_t*>(text.data()) + pos - len;
    size_t have = 0;
    while (have < len && byte_ids_[bytes[have]] >= 0) ++have;
    if (have < len && !t_.scores) have = 0;
    for (size_t i = 0; i < have; ++i) ids[count++] = byte_ids_[bytes[i]];
    if (have == len) continue;
    if (t_.unk_id < 0) {
      return InvalidArgument("character U+%04X has no token and there is no <unk>", cp);
    }
    ids[count++] = t_.unk_id;
  }
  // count <= 3 * max_text_bytes() + 1: it fits in int32.
  const int32_t m = static_cast<int32_t>(count);
  *n = t_.scores ? MergeByScore(ids, m) : MergeByRank(ids, m);
  return Status::Ok();
}

// The normal piece whose bytes are piece(left) + piece(right), or -1.
int32_t Tokenizer::Join(int32_t left, int32_t right) const {
  const std::string_view a = piece(left), b = piece(right);
  if (a.size() + b.size() > t_.max_piece_bytes) return -1;  // cannot be a piece
  char buf[2 * kMaxPieceBytes];
  memcpy(buf, a.data(), a.size());
  memcpy(buf + a.size(), b.data(), b.size());
  return Find(std::string_view(buf, a.size() + b.size()));
}

// llama2.c merges, until none is left, the adjacent pair whose concatenation is the
// highest-scoring piece, leftmost first on equal scores: a scan of every pair per merge,
// O(n^2). Here a heap holds each pair that makes a piece, ordered by (score, position),
// and a merge looks up only the two pairs it changes: the same merges in O(n log n).
// The symbols sym[0, m) are followed by room for 4m int32 (Tokenizer::EncodeCapacity);
// the merged ids end up in sym[0, returned count).
size_t Tokenizer::MergeByScore(int32_t* sym, int32_t m) const {
  const float* const scores = t_.scores;
  // Keys are the pieces the pairs make.
  auto before = [scores](MergeEntry a, MergeEntry b) {
    const float score_a = scores[a.key], score_b = scores[b.key];
    return score_a != score_b ? score_a > score_b : a.symbol < b.symbol;  // no NaN: Init
  };
  return MergeSymbols(
      sym, m, [this](int32_t left, int32_t right) { return Join(left, right); }, before,
      [](int32_t piece) { return piece; });
}

// The index of the merge (left, right) in the table, or -1: binary search over the
// merges sorted by (left, right).
int32_t Tokenizer::FindMerge(int32_t left, int32_t right) const {
  const uint32_t l = static_cast<uint32_t>(left), r = static_cast<uint32_t>(right);
  size_t lo = 0, hi = t_.num_merges;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const uint32_t* m = t_.merges + 4 * mid;
    if (m[0] < l || (m[0] == l && m[1] < r)) {
      lo = mid + 1;
    } else if (m[0] == l && m[1] == r) {
      return static_cast<int32_t>(mid);
    } else {
      hi = mid;
    }
  }
  return -1;
}

// BPE by rank as Hugging Face tokenizers (and llama.cpp, and transformers.js) do it:
// merge the adjacent pair of lowest rank, the leftmost of equals, then look up the pairs
// the merge makes with its neighbours, which compete at once (even when their rank is
// lower: Llama 3's and Gemma 3's merge lists use pieces that later merges make). A heap
// holds each pair that has a merge, ordered by (rank, position): O(m log m). The
// symbols sym[0, m) are followed by room for 4m int32; returns the number left.
size_t Tokenizer::MergeByRank(int32_t* sym, int32_t m) const {
  const uint32_t* const merges = t_.merges;
  // Keys are indices into the merge table.
  auto before = [merges](MergeEntry a, MergeEntry b) {
    const uint32_t rank_a = merges[4 * a.key + 3], rank_b = merges[4 * b.key + 3];
    return rank_a != rank_b ? rank_a < rank_b : a.symbol < b.symbol;
  };
  return MergeSymbols(
      sym, m, [this](int32_t left, int32_t right) { return FindMerge(left, right); },
      before,
      [merges](int32_t merge) { return static_cast<int32_t>(merges[4 * merge + 2]); });
}

// Byte-level BPE: split the text with the pre-tokenizer, start each chunk from one token
// per byte and merge by rank (a chunk that is a piece stays whole with ignore_merges).
// The chunk's symbols sit where its ids will be written, its work arrays right after
// them: the ids so far are no more than the bytes before the chunk, so all fits in
// EncodeCapacity.
void Tokenizer::EncodeByteLevel(std::string_view text, int32_t* ids, size_t* n) const {
  size_t count = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = ChunkEnd(t_.pre_tokenizer, text, pos);
    const size_t len = end - pos;
    int32_t* sym = ids + count;
    const int32_t whole = t_.ignore_merges && len > 1 ? Find(text.substr(pos, len)) : -1;
    if (whole >= 0) {
      sym[0] = whole;
      count += 1;
    } else {
      for (size_t i = 0; i < len; ++i) {
        sym[i] = byte_ids_[static_cast<uint8_t>(text[pos + i])];
      }
      count += MergeByRank(sym, static_cast<int32_t>(len));  // len < 2^31
    }
    pos = end;
  }
  *n = count;
}

}  // namespace ember
