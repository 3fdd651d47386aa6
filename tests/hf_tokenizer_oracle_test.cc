// Oracle: Hugging Face's tokenizers as transformers.js ports them (the npm package
// @lenml/tokenizers, pinned and installed by tools/scripts/setup.sh all, run by node)
// against ember's import of the same tokenizer.json, on the tokenizers of Llama 3, Qwen3
// and Gemma 3 (../shared/models/hf-tokenizers), and on tokenizer.json files written here
// from GPT-2's and Llama 2's vocabularies in GPT-2's, SmolLM's and Llama 2's shapes
// (tests/hf_tokenizer_files.h), and on WordPiece tokenizers with a generated vocabulary
// in four BertNormalizer variants (tests/wordpiece_tokenizer_files.h): every id equal on
// a corpus the test builds (tests/hf_tokenizer_corpus.h), with and without special-token
// parsing, and BOS (and [SEP] after WordPiece's text) as encode(add_special_tokens) adds
// it. Without node or the package the test skips, or
// fails under EMBER_REQUIRE_MODELS=1 (CI).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/testing.h"
#include "tests/hf_tokenizer_corpus.h"
#include "tests/hf_tokenizer_files.h"
#include "tests/wordpiece_tokenizer_files.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/util/json_util.h"

namespace ember {
namespace {

// Random texts after the fixed ones: enough to meet most code paths, few enough that
// the three tokenizers take well under a minute.
constexpr size_t kRandomTexts = 2500;

bool Readable(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// node and the package, or a skip (a failure under EMBER_REQUIRE_MODELS=1).
bool HaveNode() {
  std::string missing;
  if (!Readable(EMBER_NODE)) missing = "node (" EMBER_NODE ")";
  if (!Readable(EMBER_NODE_MODULES "/@lenml/tokenizers/package.json")) {
    missing += std::string(missing.empty() ? "" : " and ") +
               "@lenml/tokenizers in " EMBER_NODE_MODULES;
  }
  if (missing.empty()) return true;
  const std::string message =
      missing +
      " not found: run tools/scripts/setup.sh all (or configure with "
      "-DEMBER_NODE= and -DEMBER_NODE_MODULES=)";
  const char* require = getenv("EMBER_REQUIRE_MODELS");
  if (require && std::string(require) == "1") {
    ADD_FAILURE() << message;
  } else {
    [&] { GTEST_SKIP_(message.c_str()); }();
  }
  return false;
}

std::string Quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string Printable(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    char buf[8];
    snprintf(buf, sizeof(buf), c < 0x20 || c == 0x7F ? "\\x%02x" : "%c", c);
    out += buf;
  }
  return out;
}

std::string Join(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

// A tokenizer directory: a real one under hf-tokenizers/, or one written here.
struct Case {
  const char* name;
  const char* needs;  // the model file it is made of (under ModelsDir()); null: none
  Status (*write)(const std::string& models, const std::string& dir);
  bool wordpiece = false;  // add testing::WordPieceCorpus() to the texts
};

// The generated WordPiece tokenizers (tests/wordpiece_tokenizer_files.h).
template <bool kLower, int kStrip, bool kChinese, bool kClean, bool kBertProcessing,
          int kMaxChars>
Status WriteWordPiece(const std::string&, const std::string& dir) {
  testing::WordPieceVariant v;
  v.lowercase = kLower;
  v.strip_accents = kStrip;
  v.handle_chinese_chars = kChinese;
  v.clean_text = kClean;
  v.bert_processing = kBertProcessing;
  v.max_input_chars_per_word = kMaxChars;
  return testing::WriteWordPieceTokenizer(v, dir);
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class HfTokenizerOracleTest : public ::testing::TestWithParam<Case> {};

TEST_P(HfTokenizerOracleTest, EveryIdEqual) {
  const Case& c = GetParam();
  const std::string name = c.name;
  if ((c.needs && !testing::HaveModel(c.needs)) || !HaveNode()) return;
  testing::ScratchDir scratch("hf_oracle");
  std::string dir = testing::ModelsDir() + "/hf-tokenizers/" + name;
  if (c.write) {
    dir = scratch.path();
    const Status written = c.write(testing::ModelsDir(), dir);
    ASSERT_TRUE(written.ok()) << written.message();
  }
  std::vector<std::string> texts =
      testing::HfTokenizerCorpus(EMBER_UNICODE_DATA_DIR "/UnicodeData.txt", kRandomTexts);
  if (c.wordpiece) {
    const std::vector<std::string> more = testing::WordPieceCorpus();
    texts.insert(texts.begin(), more.begin(), more.end());
    texts.erase(std::remove_if(texts.begin(), texts.end(),
                               testing::HasRecategorizedCodePoint),
                texts.end());
  }

  const std::string texts_path = scratch.path() + "/texts.json";
  const std::string out_path = scratch.path() + "/ids.json";
  const std::string json = tools::Json(texts).dump();
  std::ofstream(texts_path, std::ios::binary) << json;
  const std::string command = std::string(EMBER_NODE) + " " +
                              Quoted(EMBER_ORACLE_SCRIPT) + " " +
                              Quoted(EMBER_NODE_MODULES) + " " + Quoted(dir) + " " +
                              Quoted(texts_path) + " " + Quoted(out_path);
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  tools::Json oracle;
  ASSERT_TRUE(tools::ReadJsonFile(out_path, &oracle).ok());

  LoadedTokenizer loaded;
  const Status s = tools::LoadHfTokenizer(dir, &loaded);
  ASSERT_TRUE(s.ok()) << s.message();
  const Tokenizer& tok = loaded.tokenizer;
  size_t compared = 0, differ = 0;
  const auto check = [&](const std::string& text, const EncodeOptions& options,
                         const tools::Json& want_json, const char* mode) {
    std::vector<int32_t> ids(tok.EncodeCapacity(text.size()) + 1, -7);
    size_t n = 0;
    const Status e = tok.Encode(text, options, ids.data(), ids.size() - 1, &n);
    ASSERT_TRUE(e.ok()) << e.message();
    ASSERT_EQ(ids.back(), -7) << "wrote past EncodeCapacity";
    ids.resize(n);
    const std::vector<int32_t> want = want_json.get<std::vector<int32_t>>();
    ++compared;
    if (ids != want && ++differ <= 10) {
      ADD_FAILURE() << name << " " << mode << ": '" << Printable(text) << "'\n  ember  "
                    << Join(ids) << "\n  oracle " << Join(want);
    }
  };
  ASSERT_EQ(oracle["parse"].size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    EncodeOptions options;
    options.parse_special = true;
    check(texts[i], options, oracle["parse"][i], "parsing special tokens");
    options.parse_special = false;
    check(texts[i], options, oracle["no_parse"][i], "special tokens as text");
  }
  for (size_t i = 0; i < oracle["bos"].size(); ++i) {  // add_special_tokens: BOS or not
    EncodeOptions options;
    options.parse_special = true;
    options.add_bos = tok.add_bos();
    check(texts[i], options, oracle["bos"][i], "with the template's BOS");
  }
  EXPECT_EQ(differ, 0u);
  printf("%s: %zu of %zu encodings equal (%zu texts, %zu bytes)\n", name.c_str(),
         compared - differ, compared, texts.size(), json.size());
}

INSTANTIATE_TEST_SUITE_P(
    Tokenizers, HfTokenizerOracleTest,
    ::testing::Values(Case{"llama3", "hf-tokenizers/llama3/tokenizer.json", nullptr},
                      Case{"qwen3", "hf-tokenizers/qwen3/tokenizer.json", nullptr},
                      Case{"gemma3", "hf-tokenizers/gemma3/tokenizer.json", nullptr},
                      Case{"gpt2_style", "gpt2-bpe/vocab.bpe",
                           [](const std::string& models, const std::string& dir) {
                             return testing::WriteGpt2StyleTokenizer(models, false, dir);
                           }},
                      Case{"smollm_style", "gpt2-bpe/vocab.bpe",
                           [](const std::string& models, const std::string& dir) {
                             return testing::WriteGpt2StyleTokenizer(models, true, dir);
                           }},
                      Case{"llama2_style", "llama2c/tokenizer.bin",
                           testing::WriteLlama2StyleTokenizer},
                      // BERT uncased: lowercase, strip_accents null (so stripped).
                      Case{"wordpiece_uncased", nullptr,
                           WriteWordPiece<true, -1, true, true, false, 100>, true},
                      // Cased: strip_accents null follows lowercase (false).
                      Case{"wordpiece_cased", nullptr,
                           WriteWordPiece<false, -1, true, true, true, 100>, true},
                      // Accents stripped without lowercasing, CJK not spaced.
                      Case{"wordpiece_strip_no_cjk", nullptr,
                           WriteWordPiece<false, 1, false, true, false, 100>, true},
                      // Lowercase keeping accents, no cleaning, short words.
                      Case{"wordpiece_lower_raw", nullptr,
                           WriteWordPiece<true, 0, true, false, false, 12>, true}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return std::string(info.param.name);
    });

}  // namespace
}  // namespace ember
