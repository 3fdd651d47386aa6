// The C API's embeddings (ember_embed.h) on a model built in memory: one text, a batch
// whose rows equal one-text calls, token ids, the options' checks and the refusals.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "gtest/gtest.h"
#include "testing/testing.h"

namespace ember {
namespace {

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
  std::vector<uint8_t> raw;
  ASSERT_TRUE(SerializeModel(spec, &raw).ok());
  const testing::AlignedBytes bytes(raw);
  cpp::Model lm;
  ASSERT_EQ(lm.FromMemory(bytes.data(), bytes.size()), EMBER_OK);
  EXPECT_EQ(ember_model_embedding_dims(lm.get()), 0u);
  cpp::Session s;
  ASSERT_EQ(s.Create(lm), EMBER_OK);
  EXPECT_EQ(ember_embed(s.get(), "a", 1, nullptr, out.data(), out.size()),
            EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("not embeddings"), std::string::npos)
      << cpp::LastError();
}

}  // namespace
}  // namespace ember
