// Tests of embed.h: pooling over a pass's steps, truncation and normalization, the
// embedding against the logits of the same pass, and the checks of the inputs.
#include "runtime/embed/embed.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/tensor_names.h"
#include "testing/testing.h"

namespace ember {
namespace {

using testing::LoadedModel;
using testing::LoadSpec;
using testing::SpreadTokens;
using testing::TinyModelSpec;

TEST(PoolTest, MeanOverStepsIsTheMeanOfTheRows) {
  // Three rows of d = 3 in two steps (2 rows, then 1), the first two values kept.
  const float rows[] = {1, 2, 100, 3, 4, 100, 5, 9, 100};
  std::vector<float> acc(2, 0.0f);
  PoolRows(Pooling::kMean, rows, 3, 0, 2, 3, acc.data(), 2);
  PoolRows(Pooling::kMean, rows + 6, 3, 2, 1, 3, acc.data(), 2);
  FinishEmbedding(Pooling::kMean, 3, false, acc.data(), 2);
  EXPECT_FLOAT_EQ(acc[0], 3.0f);
  EXPECT_FLOAT_EQ(acc[1], 5.0f);
}

TEST(PoolTest, ClsTakesTheFirstRowAndLastTheLast) {
  const float rows[] = {1, 2, 3, 4, 5, 6};
  std::vector<float> cls(2, 0.0f), last(2, 0.0f);
  for (size_t step = 0; step < 3; ++step) {  // one row per step
    PoolRows(Pooling::kCls, rows + 2 * step, 2, step, 1, 3, cls.data(), 2);
    PoolRows(Pooling::kLast, rows + 2 * step, 2, step, 1, 3, last.data(), 2);
  }
  EXPECT_EQ(cls, (std::vector<float>{1, 2}));
  EXPECT_EQ(last, (std::vector<float>{5, 6}));
}

TEST(PoolTest, NormalizeScalesToUnitLengthAndKeepsZero) {
  std::vector<float> v = {3, 4};
  FinishEmbedding(Pooling::kCls, 1, true, v.data(), 2);
  EXPECT_FLOAT_EQ(v[0], 0.6f);
  EXPECT_FLOAT_EQ(v[1], 0.8f);
  std::vector<float> zero = {0, 0};
  FinishEmbedding(Pooling::kMean, 4, true, zero.data(), 2);
  EXPECT_EQ(zero, (std::vector<float>{0, 0}));
}

ModelSpec EmbedderSpec(Pooling pooling, bool normalize) {
  ModelSpec spec = TinyModelSpec();
  spec.config.pooling = pooling;
  spec.config.normalize = normalize;
  return spec;
}

// The status of loading `spec` (its serialization checked as the loader checks a file).
Status LoadSpecStatus(const ModelSpec& spec) {
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(SerializeModel(spec, &bytes));
  const testing::AlignedBytes aligned(bytes);
  return Model::FromMemory(aligned.data(), aligned.size()).status();
}

Session MakeSession(const Model& model, uint32_t max_batch) {
  SessionOptions options;
  options.max_batch = max_batch;
  auto session = Session::Create(model, options, nullptr);
  EXPECT_TRUE(session.ok()) << session.status().message();
  return std::move(*session);
}

// Last pooling without normalization is the final hidden state: the tied classifier
// times it gives the logits a Prefill of the same tokens computes.
TEST(EmbedTest, LastHiddenStateGivesThePrefillsLogits) {
  ModelSpec spec = EmbedderSpec(Pooling::kLast, false);
  LoadedModel l = LoadSpec(spec);
  ASSERT_NE(l.model, nullptr);
  spec.config.pooling = Pooling::kNone;  // the same weights as a language model
  LoadedModel lm = LoadSpec(spec);
  ASSERT_NE(lm.model, nullptr);
  const ModelConfig& c = l.model->config();
  Session s = MakeSession(*l.model, 64);
  const std::vector<int32_t> tokens = SpreadTokens(11);
  std::vector<float> hidden(c.d_model);
  ASSERT_TRUE(Embed(s, tokens.data(), nullptr, tokens.size(), EmbedOptions{},
                    hidden.data(), hidden.size())
                  .ok());
  // An embedding model's session has no logits to prefill for.
  const Status refused = s.Prefill(tokens.data(), tokens.size());
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.logits(), nullptr);
  Session t = MakeSession(*lm.model, 64);
  ASSERT_TRUE(t.Prefill(tokens.data(), tokens.size()).ok());
  const float* w = lm.model->weights().output->f32();
  for (size_t v = 0; v < c.vocab_size; v += 7) {
    double dot = 0;
    for (size_t j = 0; j < c.d_model; ++j)
      dot += double(w[v * c.d_model + j]) * hidden[j];
    EXPECT_NEAR(dot, t.logits()[v], 1e-4) << "vocab row " << v;
  }
}

// Steps of 3 tokens give what one step gives; the embedding does not depend on where
// the session was (Embed starts at position 0 each time).
TEST(EmbedTest, StepsAndEarlierTextsDoNotChangeIt) {
  for (Pooling pooling : {Pooling::kMean, Pooling::kCls, Pooling::kLast}) {
    LoadedModel l = LoadSpec(EmbedderSpec(pooling, true));
    ASSERT_NE(l.model, nullptr);
    const size_t d = l.model->config().d_model;
    const std::vector<int32_t> tokens = SpreadTokens(10), other = SpreadTokens(7, 11);
    Session one = MakeSession(*l.model, 64), steps = MakeSession(*l.model, 3);
    std::vector<float> a(d), b(d), scratch(d);
    ASSERT_TRUE(Embed(one, tokens.data(), nullptr, 10, {}, a.data(), d).ok());
    ASSERT_TRUE(Embed(steps, other.data(), nullptr, 7, {}, scratch.data(), d).ok());
    ASSERT_TRUE(Embed(steps, tokens.data(), nullptr, 10, {}, b.data(), d).ok());
    double norm = 0;
    for (size_t j = 0; j < d; ++j) {
      EXPECT_NEAR(a[j], b[j], 1e-5) << PoolingName(pooling) << " value " << j;
      norm += double(a[j]) * a[j];
    }
    EXPECT_NEAR(norm, 1.0, 1e-5) << PoolingName(pooling);
  }
}

// --dims keeps the leading values, normalized again: the full vector's first values
// over their own length.
TEST(EmbedTest, TruncationIsTheLeadingValuesRenormalized) {
  LoadedModel l = LoadSpec(EmbedderSpec(Pooling::kMean, true));
  ASSERT_NE(l.model, nullptr);
  const size_t d = l.model->config().d_model;
  Session s = MakeSession(*l.model, 64);
  const std::vector<int32_t> tokens = SpreadTokens(9);
  std::vector<float> full(d), cut(8);
  EmbedOptions raw;
  raw.normalize = 0;
  ASSERT_TRUE(Embed(s, tokens.data(), nullptr, 9, raw, full.data(), d).ok());
  EmbedOptions eight;
  eight.dims = 8;
  ASSERT_TRUE(Embed(s, tokens.data(), nullptr, 9, eight, cut.data(), 8).ok());
  double len = 0;
  for (size_t j = 0; j < 8; ++j) len += double(full[j]) * full[j];
  for (size_t j = 0; j < 8; ++j) EXPECT_NEAR(cut[j], full[j] / std::sqrt(len), 1e-5);
}

// Dense projections (EmbeddingGemma's, sentence-transformers' Dense) map the pooled
// vector before truncation and normalization: the plain model's pooled vector times the
// matrices (with a bias and tanh on the second) gives the embedding.
TEST(EmbedTest, DenseProjectionsMapThePooledVector) {
  const ModelSpec plain_spec = EmbedderSpec(Pooling::kMean, false);
  ModelSpec spec = plain_spec;
  const uint64_t d = spec.config.d_model;
  spec.config.normalize = true;
  spec.config.dense_dims = {12, 5};
  spec.config.dense_flags = {0, ModelConfig::kDenseBias | ModelConfig::kDenseTanh};
  const std::vector<uint64_t> shapes[] = {{12, d}, {5, 12}, {5}};
  const char* names[] = {"dense.0.weight", "dense.1.weight", "dense.1.bias"};
  for (size_t t = 0; t < 3; ++t) {
    TensorSpec tensor;
    tensor.name = names[t];
    tensor.shape = shapes[t];
    const size_t n = tensor.shape.size() == 2 ? tensor.shape[0] * tensor.shape[1] : 5;
    for (size_t i = 0; i < n; ++i) tensor.values.push_back(std::sin(0.7f * i + t) * 0.3f);
    spec.tensors.push_back(tensor);
  }
  LoadedModel plain = LoadSpec(plain_spec), dense = LoadSpec(spec);
  ASSERT_NE(plain.model, nullptr);
  ASSERT_NE(dense.model, nullptr);
  EXPECT_EQ(EmbeddingDims(dense.model->config()), 5u);
  const std::vector<int32_t> tokens = SpreadTokens(9);
  std::vector<float> pooled(d), got(5), cut(3);
  Session ps = MakeSession(*plain.model, 64), ds = MakeSession(*dense.model, 4);
  ASSERT_TRUE(Embed(ps, tokens.data(), nullptr, 9, {}, pooled.data(), d).ok());
  ASSERT_TRUE(Embed(ds, tokens.data(), nullptr, 9, {}, got.data(), 5).ok());
  EmbedOptions three;
  three.dims = 3;
  ASSERT_TRUE(Embed(ds, tokens.data(), nullptr, 9, three, cut.data(), 3).ok());
  const size_t n = spec.tensors.size();
  const std::vector<float>& m0 = spec.tensors[n - 3].values;
  const std::vector<float>& m1 = spec.tensors[n - 2].values;
  const std::vector<float>& b1 = spec.tensors[n - 1].values;
  std::vector<double> mid(12), out(5);
  for (size_t i = 0; i < 12; ++i) {
    for (size_t j = 0; j < d; ++j) mid[i] += double(m0[i * d + j]) * pooled[j];
  }
  double len = 0, len3 = 0;
  for (size_t i = 0; i < 5; ++i) {
    double sum = b1[i];
    for (size_t j = 0; j < 12; ++j) sum += double(m1[i * 12 + j]) * mid[j];
    out[i] = std::tanh(sum);
    len += out[i] * out[i];
    if (i < 3) len3 += out[i] * out[i];
  }
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(got[i], out[i] / std::sqrt(len), 1e-5) << i;
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(cut[i], out[i] / std::sqrt(len3), 1e-5) << i;

  // A projection whose flags do not match, or without its bias, is refused at load.
  ModelSpec bad = spec;
  bad.config.dense_flags = {0};
  EXPECT_EQ(LoadSpecStatus(bad).code(), StatusCode::kInvalidModel);
  bad = spec;
  bad.tensors.pop_back();  // dense.1.bias
  EXPECT_EQ(LoadSpecStatus(bad).code(), StatusCode::kInvalidModel);
}

// Texts packed several to a step (each at its own positions, attending only within
// itself) give what each gives alone: causal and bidirectional, RoPE, sliding windows
// shorter than a text, every pooling; a text longer than a packed step runs alone.
TEST(EmbedTest, PackedTextsEqualTextsAlone) {
  const std::vector<size_t> lengths = {5, 1, 9, 3, 12, 7, 20, 2, 16};
  for (const char* variant : {"tiny", "families", "learned"}) {
    for (const AttentionMask mask :
         {AttentionMask::kCausal, AttentionMask::kBidirectional}) {
      for (Pooling pooling : {Pooling::kMean, Pooling::kCls, Pooling::kLast}) {
        const std::string name = variant;
        ModelSpec spec =
            name == "families" ? testing::FamiliesModelSpec() : TinyModelSpec();
        if (name == "learned") {  // positions as rows of a table (BERT), not RoPE's turns
          spec.config.positions = PositionKind::kLearned;
          TensorSpec pos;
          pos.name = names::kPosEmbedding;
          pos.shape = {spec.config.max_context, spec.config.d_model};
          for (size_t i = 0; i < pos.shape[0] * pos.shape[1]; ++i) {
            pos.values.push_back(0.2f * std::sin(0.37f * i));
          }
          spec.tensors.push_back(pos);
        }
        spec.config.pooling = pooling;
        spec.config.normalize = true;
        spec.config.mask = mask;
        LoadedModel l = LoadSpec(spec);
        ASSERT_NE(l.model, nullptr);
        const size_t d = l.model->config().d_model;
        SessionOptions options;
        options.max_context = 24;  // room for the 20-token text alone
        options.max_batch = 16;    // packed steps of at most 16 tokens (causal)
        auto packed = Session::Create(*l.model, options, nullptr);
        ASSERT_TRUE(packed.ok()) << packed.status().message();
        std::vector<std::vector<int32_t>> texts;
        std::vector<const int32_t*> ids;
        for (size_t i = 0; i < lengths.size(); ++i) {
          texts.push_back(SpreadTokens(lengths[i], 17 + 6 * i));
        }
        for (const auto& t : texts) ids.push_back(t.data());
        std::vector<float> got(lengths.size() * d), alone(d);
        size_t done = 0;
        ASSERT_TRUE(EmbedTokensBatch(*packed, ids.data(), lengths.data(), lengths.size(),
                                     {}, got.data(), got.size(), &done)
                        .ok());
        EXPECT_EQ(done, lengths.size());
        Session single = MakeSession(*l.model, 64);
        for (size_t i = 0; i < lengths.size(); ++i) {
          ASSERT_TRUE(
              Embed(single, ids[i], nullptr, lengths[i], {}, alone.data(), d).ok());
          for (size_t j = 0; j < d; ++j) {
            ASSERT_NEAR(got[i * d + j], alone[j], 2e-5)
                << name << " mask " << int(mask) << " " << PoolingName(pooling)
                << " text " << i << " value " << j;
          }
        }
      }
    }
  }
}

TEST(EmbedTest, PackedStepsRefuseBadBounds) {
  LoadedModel l = LoadSpec(EmbedderSpec(Pooling::kMean, true));
  ASSERT_NE(l.model, nullptr);
  Session s = MakeSession(*l.model, 8);
  const std::vector<int32_t> tokens = SpreadTokens(12);
  const float* rows = nullptr;
  const size_t empty[] = {0, 3, 3}, from1[] = {1, 4}, past[] = {0, 4, 12};
  EXPECT_EQ(s.PrefillPacked(tokens.data(), nullptr, empty, 2, &rows).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(s.PrefillPacked(tokens.data(), nullptr, from1, 1, &rows).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(s.PrefillPacked(tokens.data(), nullptr, past, 2, &rows).code(),
            StatusCode::kOutOfRange);  // 12 tokens in steps of 8
  EXPECT_EQ(s.PrefillPacked(tokens.data(), nullptr, past, 0, &rows).code(),
            StatusCode::kInvalidArgument);
  const size_t fine[] = {0, 4, 8};
  EXPECT_TRUE(s.PrefillPacked(tokens.data(), nullptr, fine, 2, &rows).ok());
}

TEST(EmbedTest, RefusesWhatItCannotDo) {
  LoadedModel lm = LoadSpec(TinyModelSpec());
  ASSERT_NE(lm.model, nullptr);
  Session plain = MakeSession(*lm.model, 64);
  const std::vector<int32_t> tokens = SpreadTokens(4);
  std::vector<float> out(64);
  EXPECT_EQ(Embed(plain, tokens.data(), nullptr, 4, {}, out.data(), out.size()).code(),
            StatusCode::kInvalidArgument);  // a language model: no pooling

  LoadedModel l = LoadSpec(EmbedderSpec(Pooling::kMean, true));
  ASSERT_NE(l.model, nullptr);
  Session s = MakeSession(*l.model, 64);
  const size_t d = l.model->config().d_model;
  EmbedOptions too_many;
  too_many.dims = d + 1;
  EXPECT_EQ(Embed(s, tokens.data(), nullptr, 4, too_many, out.data(), out.size()).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Embed(s, tokens.data(), nullptr, 4, {}, out.data(), d - 1).code(),
            StatusCode::kResourceExhausted);
  const uint8_t types[] = {0, 0, 1, 0};  // the model has no segment embeddings
  EXPECT_EQ(Embed(s, tokens.data(), types, 4, {}, out.data(), d).code(),
            StatusCode::kInvalidArgument);
  const int32_t bad[] = {1, -3};
  EXPECT_EQ(Embed(s, bad, nullptr, 2, {}, out.data(), d).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Embed(s, tokens.data(), nullptr, 0, {}, out.data(), d).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ember
