// GGUF tokenizers of current models against their Hugging Face originals: Llama 3's and
// Qwen3's tokenizer.json (../shared/models/hf-tokenizers), written into a GGUF as
// llama.cpp's converter writes them (tokenizer.ggml.pre "llama-bpe" and "qwen2"), encode
// every text through the GGUF importer exactly as through the tokenizer.json importer
// (which hf_tokenizer_oracle_test checks against transformers.js): the pre-tokenizer and
// ignore_merges each name selects, Qwen's NFC, control and user-defined tokens with and
// without special-token parsing. Native only: it is tokenizer logic, the same on every
// CPU, and two 130,000-token vocabularies take a minute under qemu.
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/loaded_tokenizer.h"
#include "runtime/text/tokenizer.h"
#include "testing/testing.h"
#include "tests/hf_tokenizer_corpus.h"
#include "tools/convert/gguf/gguf_builder.h"
#include "tools/convert/gguf/gguf_reader.h"
#include "tools/convert/gguf/gguf_tokenizer.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/util/json_util.h"

namespace ember {
namespace {

// A tokenizer.json's BPE vocabulary as llama.cpp's converter writes it into a GGUF:
// tokens by id (vocabulary pieces as spelled, added tokens' text), types (control for
// special added tokens, user-defined for the others), merges as "left right", and
// tokenizer.ggml.pre naming the pre-tokenizer.
std::string GgufOfTokenizerJson(const std::string& path, const char* pre) {
  tools::Json j;
  EXPECT_TRUE(tools::ReadJsonFile(path, &j).ok()) << path;
  const tools::Json& vocab = j["model"]["vocab"];
  std::vector<std::string> tokens(vocab.size() + j["added_tokens"].size());
  std::vector<int32_t> types(tokens.size(), 1);
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    tokens[it.value().get<size_t>()] = it.key();
  }
  for (const tools::Json& added : j["added_tokens"]) {
    const size_t id = added["id"].get<size_t>();
    tokens[id] = added["content"].get<std::string>();
    types[id] = added["special"].get<bool>() ? 3 : 4;
  }
  std::vector<std::string> merges;
  for (const tools::Json& m : j["model"]["merges"]) {
    merges.push_back(m.is_string()
                         ? m.get<std::string>()
                         : m[0].get<std::string>() + " " + m[1].get<std::string>());
  }
  testing::GgufBuilder b;
  b.Str("tokenizer.ggml.model", "gpt2")
      .Str("tokenizer.ggml.pre", pre)
      .Strings("tokenizer.ggml.tokens", tokens)
      .I32s("tokenizer.ggml.token_type", types)
      .Strings("tokenizer.ggml.merges", merges);
  return b.Build();
}

TEST(GgufVocabTest, Llama3AndQwen3EncodeAsTheirTokenizerJson) {
  const struct {
    const char* dir;
    const char* pre;
    const char* specials;  // control and user-defined tokens written in the text
  } kModels[] = {{"llama3", "llama-bpe", "<|begin_of_text|>x<|eot_id|>"},
                 {"qwen3", "qwen2", "<|im_start|>user<|im_end|><think>A\u0301</think>"}};
  for (const auto& m : kModels) {
    const std::string dir = "hf-tokenizers/" + std::string(m.dir);
    if (!testing::HaveModel(dir + "/tokenizer.json")) return;
    SCOPED_TRACE(m.dir);
    LoadedTokenizer hf, gguf;
    ASSERT_TRUE(tools::LoadHfTokenizer(testing::ModelsDir() + "/" + dir, &hf).ok());
    const std::string bytes =
        GgufOfTokenizerJson(testing::ModelsDir() + "/" + dir + "/tokenizer.json", m.pre);
    auto file = tools::GgufFile::Parse(reinterpret_cast<const uint8_t*>(bytes.data()),
                                       bytes.size());
    ASSERT_TRUE(file.ok()) << file.status().message();
    TokenizerSpec spec;
    const Status s = tools::ReadGgufTokenizer(**file, 0, &spec);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(LoadTokenizerSpec(spec, "gguf", &gguf).ok());
    // The Hugging Face oracle's corpus (every general category, NFC, digits, white
    // space, code, special-token text, random UTF-8), the special tokens written in
    // text, and llama.cpp's 47 cases.
    std::vector<std::string> texts =
        testing::HfTokenizerCorpus(EMBER_UNICODE_DATA_DIR "/UnicodeData.txt", 20);
    texts.push_back(m.specials);
    for (const testing::VocabCase& c : testing::ReadVocabCases(
             testing::ModelsDir() + "/gguf-vocab/ggml-vocab-gpt-2.gguf")) {
      texts.push_back(c.text);
    }
    size_t ids = 0;
    for (const std::string& text : texts) {
      for (bool parse_special : {false, true}) {
        EncodeOptions options;
        options.parse_special = parse_special;
        std::vector<int32_t> want(hf.tokenizer.EncodeCapacity(text.size()));
        std::vector<int32_t> got(gguf.tokenizer.EncodeCapacity(text.size()));
        size_t nw = 0, ng = 0;
        ASSERT_TRUE(
            hf.tokenizer.Encode(text, options, want.data(), want.size(), &nw).ok());
        ASSERT_TRUE(
            gguf.tokenizer.Encode(text, options, got.data(), got.size(), &ng).ok());
        want.resize(nw);
        got.resize(ng);
        ASSERT_EQ(testing::JoinIds(got), testing::JoinIds(want))
            << "'" << text << "' parse_special " << parse_special;
        ids += ng;
      }
    }
    printf("%s: %zu texts (%zu ids) encode the same through GGUF\n", m.dir, texts.size(),
           ids);
  }
}

}  // namespace
}  // namespace ember
