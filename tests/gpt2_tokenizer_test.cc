// Byte-level BPE on OpenAI's GPT-2 vocabulary (encoder.json and vocab.bpe, read by the
// Hugging Face importer): the O(m log m) merge against the quadratic one written from
// Hugging Face's definition (testing/bpe_reference.h) on random and long texts.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/text/tokenizer.h"
#include "testing/bpe_reference.h"
#include "testing/testing.h"
#include "tools/convert/hf/hf_tokenizer.h"

namespace ember {
namespace {

using testing::EncodeExact;
using testing::ReferenceEncodeByteLevel;

// OpenAI's GPT-2 vocabulary, read once for the tests below (null when it is missing).
const Tokenizer* Gpt2() {
  static std::unique_ptr<Model> model = [] {
    std::unique_ptr<Model> m;
    if (!testing::HaveModel("gpt2-bpe/encoder.json")) return m;
    const std::string dir = testing::ModelsDir() + "/gpt2-bpe/";
    tools::SpecialTokens specials;
    specials.bos_id = specials.eos_id = 50256;
    TokenizerSpec spec;
    const Status s = tools::ReadVocabAndMerges(dir + "encoder.json", dir + "vocab.bpe",
                                               specials, &spec);
    EXPECT_TRUE(s.ok()) << s.message();
    auto opened =
        Model::Open(testing::WriteModelAroundTokenizer(spec, "gpt2_vocab").c_str());
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    if (opened.ok()) m = std::move(*opened);
    return m;
  }();
  return model ? &model->tokenizer() : nullptr;
}

TEST(ByteLevelBpeGpt2Test, MatchesTheQuadraticMergeOnRandomTexts) {
  const Tokenizer* tok = Gpt2();
  if (!tok) return;
  std::mt19937 rng(5);
  for (int i = 0; i < 300; ++i) {
    const size_t bytes =
        std::uniform_int_distribution<size_t>(0, i < 290 ? 600 : 4000)(rng);
    const std::string text = testing::RandomText(*tok, bytes, &rng);
    ASSERT_EQ(EncodeExact(*tok, text, false), ReferenceEncodeByteLevel(*tok, text))
        << "text " << i << ": '" << text << "'";
  }
  for (const std::string unit : {"a", "ab", " ", "\n", " \n", "\xe4\xb8\xad", "!", "7"}) {
    std::string text;
    while (text.size() < 3000) text += unit;
    EXPECT_EQ(EncodeExact(*tok, text, false), ReferenceEncodeByteLevel(*tok, text)) << unit;
  }
}

// Long prompts, each one chunk or many (the benchmark tools/bench/tokenize_bench
// measures 1 MiB): they decode back to the text, and the story's words merge (GPT-2 has
// no merge of two spaces).
TEST(ByteLevelBpeGpt2Test, EncodesLongTexts) {
  const Tokenizer* tok = Gpt2();
  if (!tok) return;
  const size_t kBytes = 256 * 1024;
  std::string story;
  while (story.size() < kBytes) {
    story +=
        "Once upon a time, there was a little girl named Lily. She loved to play "
        "outside in the sunshine. One day, she saw a big, red ball in the park.\n";
  }
  for (const std::string& text : {story, std::string(kBytes, 'a'),
                                  std::string(kBytes, ' '), std::string(kBytes, '\n')}) {
    const std::vector<int32_t> ids = EncodeExact(*tok, text, false);
    ASSERT_GT(ids.size(), 0u);
    if (text == story) {
      EXPECT_LT(ids.size(), text.size() / 3) << "merged far too little";
    }
    std::string decoded;
    for (size_t i = 0; i < ids.size(); ++i) {
      decoded.append(tok->Decode(i ? ids[i - 1] : -1, ids[i]));
    }
    EXPECT_EQ(decoded, text) << text.substr(0, 20);
  }
}

}  // namespace
}  // namespace ember
