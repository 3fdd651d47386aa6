// The Hugging Face text in a build without it (EMBER_WITH_HF_TEXT=OFF: microcontrollers,
// firmware): replaces the pre-tokenizers (pretokenizer.cc), NFC (normalizer.cc), BERT's
// text (bert_normalizer.cc) and the Unicode tables (unicode.cc). Tokenizer::Init refuses
// a tokenizer that needs them (a pre-tokenizer other than none, NFC, an added token that
// strips white space), so
// SentencePiece-style tokenizers (llama2.c, Llama 2, Gemma) are all that reach these.
#include "runtime/text/bert_normalizer.h"
#include "runtime/text/normalizer.h"
#include "runtime/text/pretokenizer.h"
#include "runtime/text/unicode.h"

#include <cstring>

namespace ember {

bool HfTextBuiltIn() { return false; }

// Without a pre-tokenizer the whole text is one chunk.
size_t ChunkEnd(PreTokenizerKind, std::string_view text, size_t) { return text.size(); }
size_t Gpt2ChunkEnd(std::string_view text, size_t) { return text.size(); }

// Never asked (no tokenizer with NFC loads): the text as it is.
bool IsNfcQuick(std::string_view) { return true; }
size_t ToNfc(std::string_view text, char* work) {
  memcpy(work, text.data(), text.size());
  return text.size();
}

// ASCII only; never asked about more (no added token that strips white space loads).
CharClass ClassifyCodePoint(uint32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ? CharClass::kLetter
         : c >= '0' && c <= '9'                           ? CharClass::kNumber
         : c == ' ' || (c >= '\t' && c <= '\r')           ? CharClass::kSpace
                                                          : CharClass::kOther;
}

// Never asked (no WordPiece tokenizer loads): the text as it is, one chunk.
size_t BertNormalize(std::string_view text, const BertNormalizerOptions&, char* out) {
  memcpy(out, text.data(), text.size());
  return text.size();
}
bool IsBertChineseChar(uint32_t) { return false; }
bool IsBertPunctuation(uint32_t) { return false; }
bool IsBertSpace(uint32_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
size_t BertChunkEnd(std::string_view text, size_t) { return text.size(); }
size_t CanonicalDecomposition(uint32_t code_point, uint32_t* out) {
  out[0] = code_point;
  return 1;
}

const char* UnicodeTableVersion() { return "none (EMBER_WITH_HF_TEXT=OFF)"; }

}  // namespace ember
