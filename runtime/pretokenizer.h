// GPT-2's pre-tokenizer: splits text into the chunks byte-level BPE merges within, as
// the pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// does (alternatives tried in order at each position, as a backtracking regex engine
// would), without a regex engine and without allocating.
#ifndef EMBER_RUNTIME_PRETOKENIZER_H_
#define EMBER_RUNTIME_PRETOKENIZER_H_

#include <cstddef>
#include <string_view>

namespace ember {

// The end of the chunk that starts at text[pos]. `text` must be valid UTF-8 and
// pos < text.size(); the result is > pos and on a code point boundary.
size_t Gpt2ChunkEnd(std::string_view text, size_t pos);

}  // namespace ember

#endif  // EMBER_RUNTIME_PRETOKENIZER_H_
