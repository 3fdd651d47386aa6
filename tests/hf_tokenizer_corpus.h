// The texts the Hugging Face tokenizer oracle test encodes
// (tests/hf_tokenizer_oracle_test): every Unicode general category, digit and white-space
// runs, CRLF, tabs, CJK, emoji sequences, contractions in both cases, code, text that NFC
// changes, special-token text, and random valid UTF-8 from a fixed seed.
#ifndef EMBER_TESTS_HF_TOKENIZER_CORPUS_H_
#define EMBER_TESTS_HF_TOKENIZER_CORPUS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::testing {

// Code points the corpus leaves out: U+0085 and U+FEFF, where transformers.js' regular
// expressions (JavaScript's \s) disagree with Hugging Face's (Oniguruma's White_Space),
// which ember follows; pretokenizer_test pins ember's reading of them.
bool LeftOutOfCorpus(uint32_t code_point);

// `unicode_data` is UnicodeData.txt (Debian's unicode-data): the categories and the
// assigned code points random text draws from. `num_random` random texts end the list.
std::vector<std::string> HfTokenizerCorpus(const std::string& unicode_data,
                                           size_t num_random);

}  // namespace ember::testing

#endif  // EMBER_TESTS_HF_TOKENIZER_CORPUS_H_
