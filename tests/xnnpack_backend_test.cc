// The XNNPACK backend against the Highway kernels: the same logits within float
// rounding (prefill and decode, f32 and mixed weight types), the same bits for 1 and 2
// threads, stories260K's greedy story as llama2.c's golden, an exact arena, and the
// operators only for f32 matrices. Skipped where XNNPACK is not built in.
#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/session.h"
#include "runtime/xnn_backend.h"
#include "testing/testing.h"
#include "tests/stories260k.h"
#include "tools/convert/dtype_policy.h"

namespace ember {
namespace {

class XnnpackBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!XnnpackBuiltIn()) GTEST_SKIP() << "XNNPACK is not in this build";
  }
};

using Loaded = testing::LoadedModel;

// A random Llama-style model wide enough to split across threads, its matrices as
// `dtype`, then the overrides (e.g. {"output.weight", kQ8}).
Loaded Tiny(DType dtype, std::vector<tools::DTypeOverride> overrides = {}) {
  ModelSpec spec = testing::TinyModelSpec(128, 2, 4, 2, 320, 600, 64, 5);
  spec.config.tied_classifier = overrides.empty();
  if (!spec.config.tied_classifier) {
    TensorSpec output;
    output.name = "output.weight";
    output.shape = {600, 128};
    for (size_t i = 0; i < 600 * 128; ++i) {
      output.values.push_back(std::sin(0.37f * static_cast<float>(i)) * 0.09f);
    }
    spec.tensors.push_back(output);
  }
  EXPECT_TRUE(tools::ChooseDTypes(dtype, overrides, &spec).ok());
  return testing::LoadSpec(spec);
}

// Every position's logits of a 20-token prefill, then of 5 decode steps.
std::vector<float> Logits(const Model& model, Backend backend, const ThreadPool* pool) {
  SessionOptions options;
  options.backend = backend;
  options.all_logits = true;
  options.max_batch = 20;
  auto session = Session::Create(model, options, pool);
  EXPECT_TRUE(session.ok()) << session.status().message();
  if (!session.ok()) return {};
  std::vector<int32_t> tokens;
  for (int i = 0; i < 20; ++i) tokens.push_back(3 + (i * 37) % 590);
  EXPECT_TRUE(session->Prefill(tokens.data(), tokens.size()).ok());
  const size_t vocab = model.config().vocab_size;
  std::vector<float> out;
  for (size_t i = 0; i < session->num_logits(); ++i) {
    out.insert(out.end(), session->logits_at(i), session->logits_at(i) + vocab);
  }
  for (int32_t t : {7, 11, 13, 17, 19}) {
    EXPECT_TRUE(session->Decode(t).ok());
    out.insert(out.end(), session->logits(), session->logits() + vocab);
  }
  return out;
}

// max |a - b| relative to the largest |b|. (Maxima as ternaries: aarch64 g++ 12.2
// crashes vectorizing a std::fmax reduction at -O3, docs/platform.md.)
double MaxRelativeDifference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::fabs(double{a[i]} - b[i]), s = std::fabs(double{b[i]});
    diff = d > diff ? d : diff;
    scale = s > scale ? s : scale;
  }
  return diff / scale;
}

TEST_F(XnnpackBackendTest, LogitsMatchHighwayAndDoNotDependOnThreads) {
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  for (DType dtype : {DType::kF32, DType::kF16, DType::kQ8}) {
    // f32 layers and a separate q8 classifier, or every matrix of one type (f16 and q8
    // have no operator: the backend leaves them to Highway, bit for bit).
    const Loaded m =
        dtype == DType::kF32 ? Tiny(dtype, {{"output.weight", DType::kQ8}}) : Tiny(dtype);
    ASSERT_TRUE(m.model);
    const std::vector<float> highway = Logits(*m.model, Backend::kHighway, nullptr);
    const std::vector<float> xnn1 = Logits(*m.model, Backend::kXnnpack, nullptr);
    const std::vector<float> xnn2 = Logits(*m.model, Backend::kXnnpack, pool->get());
    ASSERT_EQ(xnn1.size(), highway.size());
    ASSERT_EQ(xnn2.size(), highway.size());
    const double rel = MaxRelativeDifference(xnn1, highway);
    printf("%s: XNNPACK against Highway, max |difference| / max |logit| = %.3g\n",
           DTypeName(dtype), rel);
    if (dtype == DType::kF32) {
      EXPECT_LT(rel, 1e-5) << "f32 products sum in another order, nothing more";
    } else {
      EXPECT_EQ(rel, 0.0) << "no f32 matrix: the backend must change nothing";
    }
    EXPECT_EQ(memcmp(xnn1.data(), xnn2.data(), xnn1.size() * sizeof(float)), 0)
        << DTypeName(dtype) << ": 1 and 2 threads differ";
  }
}

TEST_F(XnnpackBackendTest, OperatorsOnlyForF32Matrices) {
  const Loaded f32 = Tiny(DType::kF32);
  const Loaded q8 = Tiny(DType::kQ8);
  ASSERT_TRUE(f32.model && q8.model);
  size_t f32_bytes = 0, q8_bytes = 0;
  ASSERT_TRUE(XnnpackArenaBytes(*f32.model, &f32_bytes).ok());
  ASSERT_TRUE(XnnpackArenaBytes(*q8.model, &q8_bytes).ok());
  // A packed copy of every f32 matrix (the tied classifier once), a little over 4 bytes
  // a weight; for q8 only the operator table.
  // Per layer: q and o (128 x 128), k and v (64 x 128), gate, up and down (320 x 128).
  const uint64_t matrix_weights =
      2 * (2 * 128 * 128 + 2 * 64 * 128 + 3 * 320 * 128) + 600 * 128;
  EXPECT_GT(f32_bytes, 4 * matrix_weights);
  EXPECT_LT(f32_bytes, 4 * matrix_weights * 11 / 10);
  EXPECT_LT(q8_bytes, 4096u);
  SessionOptions highway, xnnpack;
  xnnpack.backend = Backend::kXnnpack;
  EXPECT_GT(RequiredArenaBytes(*f32.model, xnnpack),
            RequiredArenaBytes(*f32.model, highway) + f32_bytes - 4096);
}

TEST_F(XnnpackBackendTest, ExactArenaInCallerMemory) {
  const Loaded m = Tiny(DType::kF32);
  ASSERT_TRUE(m.model);
  SessionOptions options;
  options.backend = Backend::kXnnpack;
  const size_t needed = RequiredArenaBytes(*m.model, options);
  ASSERT_GT(needed, 0u);
  std::vector<uint8_t> arena(needed + 7);
  for (size_t shift : {0, 3, 7}) {
    auto session =
        Session::Create(*m.model, options, nullptr, arena.data() + shift, needed);
    ASSERT_TRUE(session.ok()) << session.status().message();
    const int32_t tokens[] = {1, 5, 9};
    EXPECT_TRUE(session->Prefill(tokens, 3).ok());
    EXPECT_EQ(session->backend(), Backend::kXnnpack);
  }
  auto small = Session::Create(*m.model, options, nullptr, arena.data(), needed - 1);
  EXPECT_EQ(small.status().code(), StatusCode::kResourceExhausted);
}

// llama2.c's golden story, token for token, with XNNPACK computing every product.
TEST_F(XnnpackBackendTest, Stories260KGolden) {
  if (!testing::HaveModel("llama2c/stories260K/stories260K.bin")) return;
  auto model = Model::Open(testing::Stories260KPath().c_str());
  ASSERT_TRUE(model.ok()) << model.status().message();
  SessionOptions options;
  options.backend = Backend::kXnnpack;
  auto pool = ThreadPool::Create(2);
  ASSERT_TRUE(pool.ok());
  const testing::Generated out = testing::GenerateGreedy(
      **model, pool->get(), testing::Stories260KGolden().size(), options);
  EXPECT_EQ(out.ids, testing::Stories260KGolden());
}

}  // namespace
}  // namespace ember
