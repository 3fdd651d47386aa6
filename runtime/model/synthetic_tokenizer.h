// The tokenizer of synthetic and test models: a SentencePiece-style vocabulary of any
// size with byte fallback, so that a model of any shape encodes every text. Part of the
// writer (ember_writer): `ember convert --synthetic` and the tests' tiny models use it.
#ifndef EMBER_RUNTIME_MODEL_SYNTHETIC_TOKENIZER_H_
#define EMBER_RUNTIME_MODEL_SYNTHETIC_TOKENIZER_H_

#include <cstdint>

#include "runtime/model/model_writer.h"

namespace ember {

// <unk>, <s>, </s> and the 256 byte pieces: the smallest vocabulary it makes.
inline constexpr uint32_t kSyntheticTokenizerMinVocab = 3 + 256;

// <unk>, <s>, </s>, the 256 byte pieces <0x00>..<0xFF>, then filler pieces: single
// printable ASCII characters, then strings of ' ' and 'a'-'z' of growing length, each
// distinct, scored so shorter pieces merge first.
TokenizerSpec SyntheticTokenizer(uint32_t vocab);

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_SYNTHETIC_TOKENIZER_H_
