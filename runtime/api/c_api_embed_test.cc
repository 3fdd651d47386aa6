// The C API's embeddings (ember_embed.h) on a model built in memory: one text, a batch
// whose rows equal one-text calls, token ids, the options' checks and the refusals.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "gtest/gtest.h"
#include "testing/testing.h"

namespace ember {
namespace {

// A model of `spec` in memory (its bytes kept for it) and a session of it.
struct InMemory {
  testing::AlignedBytes bytes;
  cpp::Model model;
  cpp::Session session;
};
void Open(const ModelSpec& spec, InMemory* m) {
  std::vector<uint8_t> raw;
  ASSERT_TRUE(SerializeModel(spec, &raw).ok());
  m->bytes = testing::AlignedBytes(raw);
  ASSERT_EQ(m->model.FromMemory(m->bytes.data(), m->bytes.size()), EMBER_OK)
      << cpp::LastError();
  ASSERT_EQ(m->session.Create(m->model), EMBER_OK) << cpp::LastError();
}

class CApiEmbedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ModelSpec spec = testing::TinyModelSpec();
    spec.config.pooling = Pooling::kMean;
    spec.config.normalize = true;
    std::vector<uint8_t> raw;
    ASSERT_TRUE(SerializeModel(spec, &raw).ok());
    bytes_ = testing::AlignedBytes(raw);
    ASSERT_EQ(model_.FromMemory(bytes_.data(), bytes_.size()), EMBER_OK)
        << cpp::LastError();
    ASSERT_EQ(session_.Create(model_), EMBER_OK) << cpp::LastError();
    dims_ = ember_model_embedding_dims(model_.get());
  }

  testing::AlignedBytes bytes_;
  cpp::Model model_;
  cpp::Session session_;
  size_t dims_ = 0;
};

TEST_F(CApiEmbedTest, ABatchIsItsTextsOneByOne) {
  ASSERT_EQ(dims_, 32u);
  const std::vector<std::string> texts = {"hello there", "a", "some longer text here"};
  std::vector<float> batch(texts.size() * dims_);
  const char* pointers[3];
  size_t lengths[3];
  for (size_t i = 0; i < 3; ++i) {
    pointers[i] = texts[i].data();
    lengths[i] = texts[i].size();
  }
  ASSERT_EQ(ember_embed_batch(session_.get(), pointers, lengths, 3, nullptr, batch.data(),
                              batch.size()),
            EMBER_OK)
      << cpp::LastError();
  for (size_t i = 0; i < 3; ++i) {
    std::vector<float> one(dims_);
    ASSERT_EQ(ember_embed(session_.get(), texts[i].data(), texts[i].size(), nullptr,
                          one.data(), one.size()),
              EMBER_OK);
    double norm = 0;
    for (size_t j = 0; j < dims_; ++j) {
      EXPECT_EQ(one[j], batch[i * dims_ + j]) << "text " << i << " value " << j;
      norm += double(one[j]) * one[j];
    }
    EXPECT_NEAR(norm, 1.0, 1e-5);  // the model normalizes
  }
  // Texts differ, so do their vectors.
  EXPECT_NE(batch[0], batch[dims_]);
  // No texts: nothing to write, and no error (Java's and Python's empty lists).
  EXPECT_EQ(ember_embed_batch(session_.get(), pointers, lengths, 0, nullptr, nullptr, 0),
            EMBER_OK)
      << cpp::LastError();
}

TEST_F(CApiEmbedTest, OptionsTruncateAndLeaveUnnormalized) {
  ember_embed_options options;
  ember_embed_options_default(&options);
  EXPECT_EQ(options.struct_size, sizeof(options));
  EXPECT_EQ(options.dims, 0u);
  EXPECT_EQ(options.normalize, -1);
  const int32_t ids[] = {5, 9, 40, 7};
  std::vector<float> raw(dims_), cut(8);
  options.normalize = 0;
  ASSERT_EQ(ember_embed_tokens(session_.get(), ids, nullptr, 4, &options, raw.data(),
                               raw.size()),
            EMBER_OK);
  options.normalize = 1;
  options.dims = 8;
  ASSERT_EQ(ember_embed_tokens(session_.get(), ids, nullptr, 4, &options, cut.data(), 8),
            EMBER_OK);
  double len = 0;
  for (size_t j = 0; j < 8; ++j) len += double(raw[j]) * raw[j];
  for (size_t j = 0; j < 8; ++j) EXPECT_NEAR(cut[j], raw[j] / std::sqrt(len), 1e-5);

  options.struct_size = 2;  // not a size this struct ever had
  EXPECT_EQ(ember_embed_tokens(session_.get(), ids, nullptr, 4, &options, cut.data(), 8),
            EMBER_INVALID_ARGUMENT);
  ember_embed_options_default(&options);
  options.dims = static_cast<uint32_t>(dims_ + 1);
  EXPECT_EQ(ember_embed_tokens(session_.get(), ids, nullptr, 4, &options, raw.data(),
                               raw.size()),
            EMBER_INVALID_ARGUMENT);
}

TEST_F(CApiEmbedTest, RefusalsNameTheProblem) {
  std::vector<float> out(dims_ * 2);
  EXPECT_EQ(ember_embed(nullptr, "a", 1, nullptr, out.data(), out.size()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_embed(session_.get(), "a", 1, nullptr, out.data(), dims_ - 1),
            EMBER_RESOURCE_EXHAUSTED);
  const char* texts[] = {"a", nullptr, "c"};
  const size_t lengths[] = {1, 3, 1};
  EXPECT_EQ(ember_embed_batch(session_.get(), texts, lengths, 3, nullptr, out.data(),
                              out.size()),
            EMBER_RESOURCE_EXHAUSTED);  // 3 rows in room for 2
  std::vector<float> three(dims_ * 3);
  EXPECT_EQ(ember_embed_batch(session_.get(), texts, lengths, 3, nullptr, three.data(),
                              three.size()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("text 1"), std::string::npos) << cpp::LastError();
  const int32_t ids[] = {5, 9};
  const uint8_t types[] = {0, 1};  // the model has no segment embeddings
  EXPECT_EQ(ember_embed_tokens(session_.get(), ids, types, 2, nullptr, out.data(),
                               out.size()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("token type 1"), std::string::npos) << cpp::LastError();

  // A language model has no embedding.
  ModelSpec spec = testing::TinyModelSpec();
  InMemory lm;
  ASSERT_NO_FATAL_FAILURE(Open(spec, &lm));
  EXPECT_EQ(ember_model_embedding_dims(lm.model.get()), 0u);
  EXPECT_EQ(ember_embed(lm.session.get(), "a", 1, nullptr, out.data(), out.size()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("not embeddings"), std::string::npos)
      << cpp::LastError();
}

// A reranker with a prompt (Qwen3-Reranker's kind; tests/oracles/qwen_rerank_oracle.py
// checks the real one against PyTorch): each pair scores as the prompt written out by
// hand, tokenized with control tokens and scored as tokens; the instruction replaces the
// default; a model without a prompt refuses one.
TEST_F(CApiEmbedTest, ARerankerWithAPromptScoresThePromptWrittenOut) {
  ModelSpec spec = testing::TinyModelSpec();
  spec.config.pooling = Pooling::kLast;
  spec.config.labels = 1;
  TensorSpec head, bias;
  head.name = "cls.output.weight";
  head.shape = {1, spec.config.d_model};
  for (uint32_t j = 0; j < spec.config.d_model; ++j) {
    head.values.push_back(std::sin(0.7f * static_cast<float>(j)));
  }
  bias.name = "cls.output.bias";
  bias.shape = {1};
  bias.values = {0.25f};
  spec.tensors.push_back(head);
  spec.tensors.push_back(bias);
  spec.tokenizer.pair_format = "judge {instruction}: {query} | {document} {other}";
  spec.tokenizer.pair_instruction = "the default";
  InMemory reranker;
  ASSERT_NO_FATAL_FAILURE(Open(spec, &reranker));
  cpp::Session& s = reranker.session;

  const char* docs[] = {"one doc", "", "a {query} in it"};
  const size_t lengths[] = {7, 0, 15};
  const auto written_out = [&](const std::string& instruction, const std::string& doc) {
    const std::string text = "judge " + instruction + ": who | " + doc + " {other}";
    ember_tokenize_options options{sizeof(ember_tokenize_options), -1, 1};
    std::vector<int32_t> ids(256);
    size_t n = 0;
    EXPECT_EQ(ember_tokenize_with_options(s.get(), text.data(), text.size(), &options,
                                          ids.data(), ids.size(), &n),
              EMBER_OK);
    float score = 0;
    EXPECT_EQ(ember_score_tokens(s.get(), ids.data(), nullptr, n, &score, 1), EMBER_OK)
        << cpp::LastError();
    return score;
  };
  float plain[3], instructed[3];
  ASSERT_EQ(ember_rerank(s.get(), "who", 3, docs, lengths, 3, plain), EMBER_OK)
      << cpp::LastError();
  ASSERT_EQ(ember_rerank_instructed(s.get(), "find it", 7, "who", 3, docs, lengths, 3,
                                    instructed),
            EMBER_OK)
      << cpp::LastError();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(plain[i], written_out("the default", docs[i])) << i;
    EXPECT_EQ(instructed[i], written_out("find it", docs[i])) << i;
    EXPECT_NE(plain[i], instructed[i]) << i;
  }
  // An instruction to a cross-encoder without a prompt is refused.
  spec.tokenizer.pair_format.clear();
  spec.tokenizer.pair_instruction.clear();
  InMemory cross;
  ASSERT_NO_FATAL_FAILURE(Open(spec, &cross));
  cpp::Session& cs = cross.session;
  float score;
  EXPECT_EQ(ember_rerank(cs.get(), "q", 1, docs, lengths, 1, &score), EMBER_OK);
  EXPECT_EQ(ember_rerank_instructed(cs.get(), "x", 1, "q", 1, docs, lengths, 1, &score),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("instruction"), std::string::npos) << cpp::LastError();
}

// Named prompts (sentence-transformers' "prompts"): a text embedded under a name is the
// prompt's text, then the text; NULL takes the default prompt, "" none; an unknown
// name is refused by name.
TEST_F(CApiEmbedTest, ANamedPromptGoesBeforeTheText) {
  ModelSpec spec = testing::TinyModelSpec();
  spec.config.pooling = Pooling::kMean;
  spec.tokenizer.prompts = {{"query", "search query: "}, {"document", "a doc: "}};
  spec.tokenizer.default_prompt = 1;
  InMemory m;
  ASSERT_NO_FATAL_FAILURE(Open(spec, &m));
  cpp::Session& s = m.session;
  const size_t dims = ember_model_embedding_dims(m.model.get());
  const auto embed = [&](const std::string& text, const char* name) {
    ember_embed_options options;
    ember_embed_options_default(&options);
    options.prompt_name = name;
    std::vector<float> out(dims);
    EXPECT_EQ(
        ember_embed(s.get(), text.data(), text.size(), &options, out.data(), out.size()),
        EMBER_OK)
        << cpp::LastError();
    return out;
  };
  EXPECT_EQ(embed("cats", "query"), embed("search query: cats", ""));
  EXPECT_EQ(embed("cats", nullptr), embed("a doc: cats", ""));  // the default
  EXPECT_NE(embed("cats", ""), embed("a doc: cats", ""));
  // Options of an older ember.h (without prompt_name) get the default.
  ember_embed_options old;
  ember_embed_options_default(&old);
  old.struct_size = offsetof(ember_embed_options, prompt_name);
  std::vector<float> out(dims);
  ASSERT_EQ(ember_embed(s.get(), "cats", 4, &old, out.data(), out.size()), EMBER_OK);
  EXPECT_EQ(out, embed("a doc: cats", ""));
  ember_embed_options unknown;
  ember_embed_options_default(&unknown);
  unknown.prompt_name = "passage";
  EXPECT_EQ(ember_embed(s.get(), "cats", 4, &unknown, out.data(), out.size()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("'passage'"), std::string::npos) << cpp::LastError();
}

// An embedding model's session plans no logits (nor sampling scratch): its arena is the
// language model's less them, ember_logits is NULL and a prefill is refused, naming why.
TEST_F(CApiEmbedTest, AnEmbeddingSessionHasNoLogits) {
  EXPECT_EQ(ember_logits(session_.get()), nullptr);
  const int32_t ids[] = {5, 9};
  EXPECT_EQ(ember_prefill(session_.get(), ids, 2), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("embedding model"), std::string::npos)
      << cpp::LastError();
  std::vector<float> out(dims_);
  EXPECT_EQ(ember_embed(session_.get(), "a b", 3, nullptr, out.data(), out.size()),
            EMBER_OK);  // the session still embeds
  ModelSpec spec = testing::TinyModelSpec();
  InMemory lm;
  ASSERT_NO_FATAL_FAILURE(Open(spec, &lm));
  EXPECT_NE(ember_logits(lm.session.get()), nullptr);
  EXPECT_LT(ember_arena_bytes(model_.get(), nullptr),
            ember_arena_bytes(lm.model.get(), nullptr));
}

}  // namespace
}  // namespace ember
