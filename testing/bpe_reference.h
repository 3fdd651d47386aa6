// Quadratic references of the tokenizers' merges, each written from its algorithm's
// definition through the public API only (the oracles the O(n log n) merges are checked
// against), and an Encode into exactly EncodeCapacity ids.
#ifndef EMBER_TESTING_BPE_REFERENCE_H_
#define EMBER_TESTING_BPE_REFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/text/tokenizer.h"

namespace ember::testing {

// llama2.c's encoder as it was written here before the heap (one scan of every pair per
// merge, O(n^2)): SentencePiece BPE by score, bytes for characters without a piece.
std::vector<int32_t> ReferenceEncodeSentencePiece(const Tokenizer& tok,
                                                  const std::string& text, bool bos);

// BPE as Hugging Face tokenizers defines it, one merge at a time with a rescan of every
// pair (O(m^2) per chunk of GPT-2's pre-tokenizer).
std::vector<int32_t> ReferenceEncodeByteLevel(const Tokenizer& tok,
                                              const std::string& text);

// Encodes with exactly EncodeCapacity ids of buffer, and a canary after them (a failure
// if the tokenizer wrote past the capacity or refused the text).
std::vector<int32_t> EncodeExact(const Tokenizer& tok, const std::string& text, bool bos);

}  // namespace ember::testing

#endif  // EMBER_TESTING_BPE_REFERENCE_H_
