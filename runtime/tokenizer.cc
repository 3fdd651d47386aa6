// Tokenizer: table checks, SentencePiece-style BPE encoding (as llama2.c does it),
// GPT-2 byte-level BPE encoding, and decoding.
#include "runtime/tokenizer.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "runtime/bpe_merge.h"
#include "runtime/pretokenizer.h"
#include "runtime/utf8.h"

namespace ember {
namespace {

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

// Longest piece a vocabulary may hold (merging looks up concatenations of two pieces).
constexpr size_t kMaxPieceBytes = 256;

// std::string_view's order (bytes as unsigned), three-way, inline: Find runs it
// millions of times on a long prompt, on pieces of a few bytes, where calling memcmp
// (twice, for < and >) cost more than the comparing.
int CompareBytes(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) {
      return static_cast<uint8_t>(a[i]) < static_cast<uint8_t>(b[i]) ? -1 : 1;
    }
  }
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

bool Searchable(TokenType type) {
  return type == TokenType::kNormal || type == TokenType::kUserDefined;
}

// A merge rank is the merge's line in a merges list: one this large means a corrupt file.
constexpr uint32_t kMaxRank = INT32_MAX;

}  // namespace

Status Tokenizer::Init(const TokenizerTables& t) {
  const uint32_t n = t.vocab_size;
  if (n == 0) return InvalidModel("tokenizer: empty vocabulary");
  if (t.kind != TokenizerKind::kSentencePieceBpe &&
      t.kind != TokenizerKind::kByteLevelBpe) {
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
  if (t.kind == TokenizerKind::kSentencePieceBpe && !t.scores) {
    return InvalidModel("tokenizer: SentencePiece BPE needs scores");
  }
  // Merging orders pairs by score: NaN has no place in that order.
  for (uint32_t i = 0; t.scores && i < n; ++i) {
    if (std::isnan(t.scores[i])) return InvalidModel("tokenizer: score %u is NaN", i);
  }
  if (t.kind == TokenizerKind::kByteLevelBpe && !t.merges && t.num_merges != 0) {
    return InvalidModel("tokenizer: merges missing");
  }
  for (int32_t id : {t.bos_id, t.eos_id, t.unk_id}) {
    if (id < -1 || id >= static_cast<int64_t>(n)) {
      return InvalidModel("tokenizer: special token id %d outside the vocabulary of %u",
                          id, n);
    }
  }
  for (size_t i = 0; i < t.num_stop_ids; ++i) {
    if (t.stop_ids[i] < 0 || t.stop_ids[i] >= static_cast<int64_t>(n)) {
      return InvalidModel("tokenizer: stop id %d outside the vocabulary of %u",
                          t.stop_ids[i], n);
    }
  }
  t_ = t;  // piece() and type() below read the tables through t_

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

Status Tokenizer::Encode(std::string_view text, bool add_bos, int32_t* ids,
                         size_t capacity, size_t* n) const {
  *n = 0;
  if (text.size() > kMaxTextBytes) {
    return InvalidArgument("text of %zu bytes is longer than the %zu Encode takes",
                           text.size(), kMaxTextBytes);
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
  if (add_bos) {
    if (t_.bos_id < 0) return InvalidArgument("this model's tokenizer has no BOS token");
    ids[count++] = t_.bos_id;
  }
  size_t encoded = 0;
  EMBER_RETURN_IF_ERROR(t_.kind == TokenizerKind::kSentencePieceBpe
                            ? EncodeSentencePiece(text, ids + count, &encoded)
                            : EncodeByteLevel(text, ids + count, &encoded));
  *n = count + encoded;
  return Status::Ok();
}

// llama2.c's encoder: a dummy-prefix space, one symbol per UTF-8 character (its bytes as
// byte tokens when the character is not a piece), then merge pairs by score.
Status Tokenizer::EncodeSentencePiece(std::string_view text, int32_t* ids,
                                      size_t* n) const {
  size_t count = 0;
  if (!text.empty() && t_.add_dummy_prefix) {
    const int32_t space = Find(" ");
    if (space < 0) return InvalidModel("tokenizer: no ' ' piece for the dummy prefix");
    ids[count++] = space;
  }
  uint32_t cp;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = DecodeUtf8(text, pos, &cp);  // > 0: the text was validated
    const int32_t id = Find(text.substr(pos, len));
    if (id >= 0) {
      ids[count++] = id;
    } else {
      for (size_t i = 0; i < len; ++i) {
        const int32_t byte_id = byte_ids_[static_cast<uint8_t>(text[pos + i])];
        if (byte_id >= 0) {
          ids[count++] = byte_id;
        } else if (t_.unk_id >= 0) {
          ids[count++] = t_.unk_id;
          break;
        } else {
          return InvalidArgument("byte 0x%02x has no token and there is no <unk>",
                                 static_cast<uint8_t>(text[pos + i]));
        }
      }
    }
    pos += len;
  }
  // count <= text.size() + 1 <= kMaxTextBytes + 1: it fits in int32.
  *n = MergeSentencePiece(ids, static_cast<int32_t>(count));
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
size_t Tokenizer::MergeSentencePiece(int32_t* sym, int32_t m) const {
  if (m < 2) return static_cast<size_t>(m);
  SymbolList list(sym + m, m);  // then the heap's slots (m) and entries (2m)
  const float* const scores = t_.scores;
  // Keys are the pieces the pairs make.
  auto before = [scores](MergeEntry a, MergeEntry b) {
    const float score_a = scores[a.key], score_b = scores[b.key];
    return score_a != score_b ? score_a > score_b : a.symbol < b.symbol;  // no NaN: Init
  };
  MergeHeap<decltype(before)> heap(sym + 3 * m, sym + 2 * m, m, before);
  // Symbol i's pair changed: look it up again.
  auto update = [&](int32_t i) {
    const int32_t next = list.Next(i);
    const int32_t joined = next == SymbolList::kNone ? -1 : Join(sym[i], sym[next]);
    if (joined >= 0) {
      heap.Update(i, joined);
    } else {
      heap.Remove(i);
    }
  };
  for (int32_t i = 0; i < m; ++i) update(i);
  while (!heap.empty()) {
    const MergeEntry best = heap.top();
    const int32_t i = best.symbol;
    heap.Remove(list.Next(i));  // its pair is gone with it
    sym[i] = best.key;
    list.MergeWithNext(i);
    update(i);  // i stays in the heap if it can merge again: one sift, not two
    const int32_t prev = list.Prev(i);
    if (prev != SymbolList::kNone) update(prev);
  }
  // Compact the live symbols; the k-th sits at index >= k, so nothing is overwritten
  // before it is read.
  size_t count = 0;
  for (int32_t i = 0; i != SymbolList::kNone; i = list.Next(i)) sym[count++] = sym[i];
  return count;
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

// BPE over one pre-tokenized chunk, as GPT-2's encoder does it: take the adjacent pair
// with the lowest merge rank (the leftmost if several have it), merge every occurrence
// of that pair left to right in one pass, repeat until no pair has a merge. Rescanning
// after each pass is O(m^2); here a heap holds each pair that has a merge, ordered by
// (rank, position), and a pass pops the pair's occurrences in order. The pairs a pass
// creates are deferred until it ends, as GPT-2's pass would not see them even when
// their rank is lower; pairs of the same rank but another merge (no converted table has
// those) wait too. The symbols sym[0, m) are followed by room for 4m int32; returns
// the number of symbols left in sym.
size_t Tokenizer::MergeByteLevel(int32_t* sym, int32_t m) const {
  if (m < 2) return static_cast<size_t>(m);
  SymbolList list(sym + m, m);  // then the heap's slots (m) and entries (2m)
  const uint32_t* const merges = t_.merges;
  // Keys are indices into the merge table.
  auto rank = [merges](int32_t merge_idx) { return merges[4 * merge_idx + 3]; };
  auto before = [rank](MergeEntry a, MergeEntry b) {
    const uint32_t rank_a = rank(a.key), rank_b = rank(b.key);
    return rank_a != rank_b ? rank_a < rank_b : a.symbol < b.symbol;
  };
  MergeHeap<decltype(before)> heap(sym + 3 * m, sym + 2 * m, m, before);
  auto look_up = [&](int32_t i) {
    const int32_t next = list.Next(i);
    const int32_t merge = next == SymbolList::kNone ? -1 : FindMerge(sym[i], sym[next]);
    if (merge >= 0) heap.Push(i, merge);
  };
  for (int32_t i = 0; i < m; ++i) look_up(i);
  while (!heap.empty()) {
    const int32_t pass_merge = heap.top().key;
    const uint32_t pass_rank = rank(pass_merge);
    while (!heap.empty() && rank(heap.top().key) == pass_rank) {
      const MergeEntry e = heap.top();
      heap.Defer(e.symbol);
      if (e.key != pass_merge) continue;
      heap.Remove(list.Next(e.symbol));
      sym[e.symbol] = static_cast<int32_t>(merges[4 * pass_merge + 2]);
      list.MergeWithNext(e.symbol);
      const int32_t prev = list.Prev(e.symbol);
      if (prev != SymbolList::kNone) heap.Defer(prev);
    }
    heap.ForEachDeferred(look_up);
  }
  size_t count = 0;
  for (int32_t i = 0; i != SymbolList::kNone; i = list.Next(i)) sym[count++] = sym[i];
  return count;
}

// GPT-2 byte-level BPE: split the text with GPT-2's pre-tokenizer, start each chunk from
// one token per byte and merge by rank. The chunk's symbols sit where its ids will be
// written, its work arrays right after them: the ids so far are no more than the bytes
// before the chunk, so all fits in EncodeCapacity.
Status Tokenizer::EncodeByteLevel(std::string_view text, int32_t* ids, size_t* n) const {
  size_t count = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = Gpt2ChunkEnd(text, pos);
    const size_t len = end - pos;
    int32_t* sym = ids + count;
    for (size_t i = 0; i < len; ++i) {
      sym[i] = byte_ids_[static_cast<uint8_t>(text[pos + i])];
    }
    count += MergeByteLevel(sym, static_cast<int32_t>(len));  // len <= kMaxTextBytes
    pos = end;
  }
  *n = count;
  return Status::Ok();
}

std::string_view Tokenizer::Decode(int32_t prev_id, int32_t id) const {
  const TokenType token_type = type(static_cast<uint32_t>(id));
  if (token_type == TokenType::kControl || token_type == TokenType::kUnknown) return {};
  std::string_view p = piece(static_cast<uint32_t>(id));
  if (token_type == TokenType::kByte) {
    const int value = ParseBytePiece(p);
    return {kByteTable.bytes + value, 1};
  }
  if (t_.kind == TokenizerKind::kSentencePieceBpe && t_.add_dummy_prefix &&
      prev_id == t_.bos_id && !p.empty() && p[0] == ' ') {
    p.remove_prefix(1);
  }
  return p;
}

}  // namespace ember
