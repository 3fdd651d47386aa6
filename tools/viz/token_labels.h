// Token labels: short readable UTF-8 names for the tokens of a prompt, for the axes of
// attention heatmaps and CSV exports.
#ifndef EMBER_TOOLS_VIZ_TOKEN_LABELS_H_
#define EMBER_TOOLS_VIZ_TOKEN_LABELS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/text/tokenizer.h"
#include "tools/viz/svg_text.h"  // DisplayColumns

namespace ember::tools {

// One label per id, from the bytes each token adds to the text:
// - control and unknown tokens by their piece without surrounding whitespace ("<s>",
//   "<|endoftext|>");
// - a character whose bytes several tokens share (SentencePiece byte fallback, or a
//   byte-level BPE piece ending inside a character) on each of them, with the token's
//   share: "中1/3", "中2/3", "中3/3"; bytes that form no valid UTF-8 as "<E4>";
// - spaces trimmed at both ends, except that a label of only whitespace shows it as
//   "␣" (space), "↵" (newline), "⇥" (tab); other control bytes as "<0A>" style hex;
// - cut to `max_columns` display columns (CJK counts 2) with "…".
std::vector<std::string> TokenLabels(const Tokenizer& tokenizer,
                                     const std::vector<int32_t>& ids,
                                     size_t max_columns = 14);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_VIZ_TOKEN_LABELS_H_
