// Oracle: llama.cpp's tokenizer test vectors (models/ggml-vocab-*.gguf.{inp,out}, checked
// by llama.cpp against Hugging Face tokenizers). The GPT-2 cases run with OpenAI's GPT-2
// vocabulary (encoder.json + vocab.bpe, imported as a Hugging Face vocab.json +
// merges.txt), the Llama SentencePiece cases with llama2.c's Llama 2 tokenizer.bin, and
// both again with the tokenizer imported from the .gguf files themselves.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "testing/testing.h"
#include "tools/convert/gguf/gguf_tokenizer.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/convert/llama2c/llama2c_import.h"
#include "tools/util/files.h"

namespace ember {
namespace {

std::string Join(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

// Encodes every case and expects the oracle's ids; returns the number that matched.
size_t CheckAll(const Model& model, const std::vector<testing::VocabCase>& cases) {
  size_t matched = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const testing::VocabCase& c = cases[i];
    std::vector<int32_t> ids(model.tokenizer().EncodeCapacity(c.text.size()));
    size_t n = 0;
    const Status s = model.tokenizer().Encode(c.text, false, ids.data(), ids.size(), &n);
    EXPECT_TRUE(s.ok()) << "case " << i << ": " << s.message();
    ids.resize(n);
    EXPECT_EQ(Join(ids), Join(c.ids)) << "case " << i << ": '" << c.text << "'";
    matched += ids == c.ids;
  }
  size_t total_ids = 0;
  for (const testing::VocabCase& c : cases) total_ids += c.ids.size();
  printf("%zu of %zu cases (%zu ids) match\n", matched, cases.size(), total_ids);
  return matched;
}

TEST(TokenizerVectorsTest, Gpt2MatchesLlamaCpp) {
  if (!testing::HaveModel("gpt2-bpe/encoder.json") ||
      !testing::HaveModel("gguf-vocab/ggml-vocab-gpt-2.gguf.inp")) {
    return;
  }
  const std::string dir = testing::ModelsDir();
  tools::SpecialTokens specials;
  specials.bos_id = specials.eos_id =
      50256;  // <|endoftext|>, as GPT-2's config.json says
  TokenizerSpec tok;
  const Status s = tools::ReadVocabAndMerges(dir + "/gpt2-bpe/encoder.json",
                                             dir + "/gpt2-bpe/vocab.bpe", specials, &tok);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(tok.pieces.size(), 50257u);
  ASSERT_EQ(tok.merges.size(), 50000u);
  auto model = Model::Open(testing::WriteModelAroundTokenizer(tok, "gpt2_vocab").c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const auto cases = testing::ReadVocabCases(dir + "/gguf-vocab/ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(CheckAll(**model, cases), cases.size());
}

TEST(TokenizerVectorsTest, LlamaSentencePieceMatchesLlamaCpp) {
  if (!testing::HaveModel("llama2c/tokenizer.bin") ||
      !testing::HaveModel("gguf-vocab/ggml-vocab-llama-spm.gguf.inp")) {
    return;
  }
  const std::string dir = testing::ModelsDir();
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(tools::ReadFile(dir + "/llama2c/tokenizer.bin", &bytes).ok());
  TokenizerSpec tok;
  const Status s = tools::ParseLlama2cTokenizer(bytes, 32000, &tok);
  ASSERT_TRUE(s.ok()) << s.message();
  auto model =
      Model::Open(testing::WriteModelAroundTokenizer(tok, "llama_vocab").c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const auto cases =
      testing::ReadVocabCases(dir + "/gguf-vocab/ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(CheckAll(**model, cases), cases.size());
}

// The tokenizer as `ember convert --gguf` imports it from the vocabulary-only file.
void CheckGgufVocabulary(const std::string& name, TokenizerKind kind) {
  const std::string base =
      testing::ModelsDir() + "/gguf-vocab/ggml-vocab-" + name + ".gguf";
  auto file = tools::GgufFile::Open(base);
  ASSERT_TRUE(file.ok()) << file.status().message();
  TokenizerSpec tok;
  const Status s = tools::ReadGgufTokenizer(**file, 0, &tok);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(tok.kind, kind);
  auto model =
      Model::Open(testing::WriteModelAroundTokenizer(tok, "gguf_" + name).c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  const auto cases = testing::ReadVocabCases(base);
  EXPECT_EQ(CheckAll(**model, cases), cases.size());
}

TEST(TokenizerVectorsTest, Gpt2FromGgufMatchesLlamaCpp) {
  if (!testing::HaveModel("gguf-vocab/ggml-vocab-gpt-2.gguf")) return;
  CheckGgufVocabulary("gpt-2", TokenizerKind::kByteLevelBpe);
}

TEST(TokenizerVectorsTest, LlamaSentencePieceFromGgufMatchesLlamaCpp) {
  if (!testing::HaveModel("gguf-vocab/ggml-vocab-llama-spm.gguf")) return;
  CheckGgufVocabulary("llama-spm", TokenizerKind::kSentencePieceBpe);
}

}  // namespace
}  // namespace ember
