// BERT's text steps as Hugging Face tokenizers runs them: BertNormalizer (clean text, CJK
// ideographs spaced, accents stripped, lowercase) and BertPreTokenizer (white space
// splits, each punctuation code point is a chunk), in the caller's memory, from tables
// generated at build time (gen_unicode_bert.py) from Debian's unicode-data.
#ifndef EMBER_RUNTIME_TEXT_BERT_NORMALIZER_H_
#define EMBER_RUNTIME_TEXT_BERT_NORMALIZER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ember {

// BertNormalizer's options (schema: Tokenizer.bert_*). strip_accents is resolved: the
// file's null ("follow lowercase") is stored as lowercase's value.
struct BertNormalizerOptions {
  bool clean_text = false;            // drop U+0000, U+FFFD, Cc/Cf/Co but \t\n\r;
                                      // white space becomes ' '
  bool handle_chinese_chars = false;  // ' ' before and after each CJK ideograph
  bool strip_accents = false;         // canonical decomposition, Mn marks dropped
  bool lowercase = false;             // Rust's char::to_lowercase per code point
};

// The normalized text is at most this many times longer in UTF-8 than the text
// (gen_unicode_bert.py checks the bound on the tables).
inline constexpr size_t kBertMaxGrowth = 3;

// Writes the normalized form of `text` (valid UTF-8) to out[0, returned size); `out`
// holds kBertMaxGrowth * text.size() bytes and must not overlap `text`. As Hugging
// Face's order: clean text, CJK, strip accents, lowercase; each code point on its own,
// so the canonical reordering of NFD is not applied (it only moves marks that
// strip_accents keeps past one another: a few Mc code points, never in practice).
size_t BertNormalize(std::string_view text, const BertNormalizerOptions& options,
                     char* out);

// Hugging Face's BertNormalizer CJK ranges (its Rust code's: U+2B820..U+2B91F, the
// start of extension E, is not among them).
bool IsBertChineseChar(uint32_t code_point);
// General category P*, or ASCII 33-47, 58-64, 91-96, 123-126.
bool IsBertPunctuation(uint32_t code_point);
// White space as BERT splits on it: \t, \n, \r and the White_Space property.
bool IsBertSpace(uint32_t code_point);

// BertPreTokenizer: the end of the chunk at text[pos] (valid UTF-8, pos < size): a run
// of white space (which the caller skips), one punctuation code point, or a run of
// anything else.
size_t BertChunkEnd(std::string_view text, size_t pos);

}  // namespace ember

#endif  // EMBER_RUNTIME_TEXT_BERT_NORMALIZER_H_
