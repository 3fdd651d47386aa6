// WordPiece (BERT-style) tokenizer.json files the Hugging Face tokenizer oracle test
// writes, with a vocabulary generated here (no BERT vocabulary is in ../shared/models):
// Latin words and subwords in both cases, accented letters, Greek and Cyrillic, CJK
// ideographs, Hangul and its jamo, digits, ASCII and Unicode punctuation, long words;
// and the texts that exercise them.
#ifndef EMBER_TESTS_WORDPIECE_TOKENIZER_FILES_H_
#define EMBER_TESTS_WORDPIECE_TOKENIZER_FILES_H_

#include <string>
#include <vector>

#include "runtime/status.h"

namespace ember::testing {

struct WordPieceVariant {
  bool lowercase = true;
  int strip_accents = -1;  // -1: null (follow lowercase), 0 false, 1 true
  bool handle_chinese_chars = true;
  bool clean_text = true;
  bool bert_processing = false;  // BertProcessing instead of TemplateProcessing
  int max_input_chars_per_word = 100;
};

// dir/tokenizer.json and dir/tokenizer_config.json.
Status WriteWordPieceTokenizer(const WordPieceVariant& variant, const std::string& dir);

// Texts for WordPiece: sentences of the vocabulary's words in both cases, words at and
// past max_input_chars_per_word, accents, final sigma, U+0130, CJK runs, control
// characters, the special tokens' text.
std::vector<std::string> WordPieceCorpus();

// Whether `text` holds a code point whose general category changed after Debian's
// Unicode (15.0, which ember's tables follow) in node's (17.0): U+1171E, Mn in 15.0 and
// Mc since 16.0, which strip_accents drops in one and keeps in the other.
bool HasRecategorizedCodePoint(const std::string& text);

}  // namespace ember::testing

#endif  // EMBER_TESTS_WORDPIECE_TOKENIZER_FILES_H_
