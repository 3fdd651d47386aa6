// The tokenizer of synthetic and test models (see synthetic_tokenizer.h).
#include "runtime/model/synthetic_tokenizer.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace ember {
namespace {

constexpr uint32_t kSpecialPieces = 3;  // <unk>, <s>, </s>
constexpr uint32_t kBytePieces = 256;
static_assert(kSyntheticTokenizerMinVocab == kSpecialPieces + kBytePieces);

// Appends every string of `length` characters over `alphabet`, in order, until `pieces`
// holds `vocab` entries.
void AppendStrings(const std::string& alphabet, size_t length, uint32_t vocab,
                   std::vector<std::string>* pieces) {
  std::vector<size_t> digits(length, 0);
  while (pieces->size() < vocab) {
    std::string piece(length, ' ');
    for (size_t i = 0; i < length; ++i) piece[i] = alphabet[digits[i]];
    pieces->push_back(std::move(piece));
    size_t i = length;
    while (i > 0 && ++digits[i - 1] == alphabet.size()) digits[--i] = 0;
    if (i == 0) return;  // every string of this length is in
  }
}

}  // namespace

TokenizerSpec SyntheticTokenizer(uint32_t vocab) {
  TokenizerSpec tok;
  tok.kind = TokenizerKind::kSentencePieceBpe;
  tok.pieces = {"<unk>", "<s>", "</s>"};
  tok.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (uint32_t b = 0; b < kBytePieces; ++b) {
    char piece[8];
    snprintf(piece, sizeof(piece), "<0x%02X>", b);
    tok.pieces.push_back(piece);
    tok.types.push_back(TokenType::kByte);
  }
  std::string printable;
  for (char c = ' '; c <= '~'; ++c) printable.push_back(c);
  AppendStrings(printable, 1, vocab, &tok.pieces);
  for (size_t length = 2; tok.pieces.size() < vocab; ++length) {
    AppendStrings(" abcdefghijklmnopqrstuvwxyz", length, vocab, &tok.pieces);
  }
  tok.types.resize(vocab, TokenType::kNormal);
  // SentencePiece BPE merges the highest score first: shorter (earlier) pieces win.
  tok.scores.assign(vocab, 0.0f);
  for (uint32_t i = kSpecialPieces + kBytePieces; i < vocab; ++i) {
    tok.scores[i] = -static_cast<float>(i - kSpecialPieces - kBytePieces);
  }
  tok.unk_id = 0;
  tok.bos_id = 1;
  tok.eos_id = 2;
  tok.add_bos = true;
  tok.add_dummy_prefix = true;
  return tok;
}

}  // namespace ember
