// The forward pass with every feature of the current families on (sliding layers with
// their own RoPE base, YaRN, qk-norm, post-norms, scales, soft-capping: testing::
// FamiliesModelSpec): prefill and token-by-token decode agree, thread counts agree
// bitwise, a window that holds every position is exactly global attention, and recorded
// attention is zero outside each query's window. PyTorch checks the numbers themselves
// (tests/oracles/*_oracle.py); this runs on every emulated CPU.
#include <cmath>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/rope.h"
#include "runtime/session.h"
#include "runtime/pool/thread_pool.h"
#include "testing/testing.h"
#include "tools/convert/dtype_policy.h"

namespace ember {
namespace {

std::vector<int32_t> Tokens(size_t n) {
  std::vector<int32_t> tokens(n);
  for (size_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>((i * 37 + 11) % 290);
  return tokens;
}

// Every row of a prefill (one step, max_batch >= n), and the logits of n single-token
// passes: the decode path (matvec, one query per attention step).
void PrefillAndDecode(const Model& model, const ThreadPool* pool, size_t n,
                      std::vector<float>* prefill, std::vector<float>* decode) {
  const size_t vocab = model.config().vocab_size;
  const std::vector<int32_t> tokens = Tokens(n);
  SessionOptions options;
  options.max_batch = 64;
  options.all_logits = true;
  auto a = Session::Create(model, options, pool);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(a->Prefill(tokens.data(), n).ok());
  ASSERT_EQ(a->num_logits(), n);
  prefill->clear();
  for (size_t i = 0; i < n; ++i) {
    prefill->insert(prefill->end(), a->logits_at(i), a->logits_at(i) + vocab);
  }
  options.max_batch = 1;
  options.all_logits = false;
  auto b = Session::Create(model, options, pool);
  ASSERT_TRUE(b.ok()) << b.status().message();
  decode->clear();
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(b->Prefill(&tokens[i], 1).ok());
    decode->insert(decode->end(), b->logits(), b->logits() + vocab);
  }
}

// Prefill and decode of `model` over 40 tokens agree to 1e-4 of the logits' scale,
// which the final soft-cap (8) bounds.
void ExpectPrefillAndDecodeAgree(const Model& model) {
  std::vector<float> prefill, decode;
  PrefillAndDecode(model, nullptr, 40, &prefill, &decode);
  ASSERT_EQ(prefill.size(), decode.size());
  double scale = 0, worst = 0;
  for (size_t i = 0; i < prefill.size(); ++i) {
    ASSERT_TRUE(std::isfinite(prefill[i]) && std::isfinite(decode[i])) << i;
    scale = std::max(scale, std::fabs(double(prefill[i])));
    worst = std::max(worst, std::fabs(double(prefill[i]) - decode[i]));
  }
  EXPECT_GT(scale, 1.0);
  EXPECT_LE(scale, 8.0);
  EXPECT_LT(worst, 1e-4 * scale);
}

class FamiliesTest : public ::testing::TestWithParam<DType> {};

TEST_P(FamiliesTest, PrefillAndDecodeAgree) {
  ModelSpec spec = testing::FamiliesModelSpec();
  ASSERT_TRUE(tools::ChooseDTypes(GetParam(), {}, &spec).ok());
  testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_TRUE(loaded.model);
  ExpectPrefillAndDecodeAgree(*loaded.model);
}

TEST_P(FamiliesTest, ThreadCountsAgreeBitwise) {
  ModelSpec spec = testing::FamiliesModelSpec();
  ASSERT_TRUE(tools::ChooseDTypes(GetParam(), {}, &spec).ok());
  testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_TRUE(loaded.model);
  auto pool = ThreadPool::Create(3);
  ASSERT_TRUE(pool.ok());
  std::vector<float> one_prefill, one_decode, three_prefill, three_decode;
  PrefillAndDecode(*loaded.model, nullptr, 40, &one_prefill, &one_decode);
  PrefillAndDecode(*loaded.model, pool->get(), 40, &three_prefill, &three_decode);
  ASSERT_EQ(one_prefill.size(), three_prefill.size());
  EXPECT_EQ(memcmp(one_prefill.data(), three_prefill.data(), one_prefill.size() * 4), 0);
  EXPECT_EQ(memcmp(one_decode.data(), three_decode.data(), one_decode.size() * 4), 0);
}

// Phi-4-mini's RoPE: 8 of each head's 16 values rotated, LongRoPE's short factors (the
// 40 positions stay within its original context of 64).
TEST(FamiliesRopeTest, PartialRotaryPrefillAndDecodeAgree) {
  ModelSpec spec = testing::FamiliesModelSpec();
  ModelConfig& c = spec.config;
  c.rope_dim = 8;
  c.rope_scaling = RopeScaling::kLongRope;
  c.rope_original_context = 64;
  c.rope_attention_factor = 1.2f;
  c.rope_freq_factors = {1.0f, 1.5f, 2.0f, 3.0f};
  c.rope_long_freq_factors = {2.0f, 4.0f, 8.0f, 16.0f};
  testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_TRUE(loaded.model);
  ExpectPrefillAndDecodeAgree(*loaded.model);
}

INSTANTIATE_TEST_SUITE_P(DTypes, FamiliesTest, ::testing::Values(DType::kF32, DType::kQ8),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

// A window that holds all 40 positions hides nothing: bitwise the logits of the same
// model with every layer global (sliding layers on the global RoPE, so only the window
// differs); a window of 6 changes them.
TEST(FamiliesWindowTest, AWindowOverEveryPositionIsGlobalAttention) {
  std::vector<float> logits[3];
  for (int variant = 0; variant < 3; ++variant) {
    ModelSpec spec = testing::FamiliesModelSpec(variant == 2 ? 6 : 40);
    spec.config.rope_local_theta = 0.0f;
    if (variant == 1) {
      spec.config.layer_attention.clear();
      spec.config.sliding_window = 0;
    }
    testing::LoadedModel loaded = testing::LoadSpec(spec);
    ASSERT_TRUE(loaded.model);
    std::vector<float> decode;
    PrefillAndDecode(*loaded.model, nullptr, 40, &logits[variant], &decode);
  }
  ASSERT_EQ(logits[0].size(), logits[1].size());
  EXPECT_EQ(memcmp(logits[0].data(), logits[1].data(), logits[0].size() * 4), 0);
  EXPECT_NE(memcmp(logits[0].data(), logits[2].data(), logits[0].size() * 4), 0);
}

// rope_freq_factors (GGUF's representation of Llama 3's scaling) on plain RoPE give the
// logits of the llama3 scaling they were computed from.
TEST(FamiliesRopeTest, FrequencyFactorsMatchTheScalingTheyCameFrom) {
  std::vector<float> logits[2];
  for (int variant = 0; variant < 2; ++variant) {
    ModelSpec spec = testing::FamiliesModelSpec(6);
    ModelConfig& c = spec.config;
    c.rope_scaling = RopeScaling::kLlama3;
    c.rope_scaling_factor = 8.0f;
    c.rope_original_context = 16;
    if (variant == 1) {
      kernels::RopeParams llama3, plain;
      llama3.theta = plain.theta = c.rope_theta;
      llama3.scaling = kernels::RopeScalingKind::kLlama3;
      llama3.factor = 8.0f;
      llama3.original_context = 16.0f;
      for (size_t i = 0; i < c.head_dim / 2; ++i) {
        c.rope_freq_factors.push_back(kernels::RopeFrequency(plain, i, c.head_dim) /
                                      kernels::RopeFrequency(llama3, i, c.head_dim));
      }
      c.rope_scaling = RopeScaling::kNone;
    }
    testing::LoadedModel loaded = testing::LoadSpec(spec);
    ASSERT_TRUE(loaded.model);
    std::vector<float> decode;
    PrefillAndDecode(*loaded.model, nullptr, 24, &logits[variant], &decode);
  }
  ASSERT_EQ(logits[0].size(), logits[1].size());
  for (size_t i = 0; i < logits[0].size(); ++i) {
    ASSERT_NEAR(logits[0][i], logits[1][i], 1e-4f) << i;
  }
}

// Recorded weights: a sliding layer's row q covers keys (q - 6, q], a global layer's
// [0, q]; each row sums to one and is zero elsewhere.
TEST(FamiliesWindowTest, RecordedAttentionStaysInsideTheWindow) {
  testing::LoadedModel loaded = testing::LoadSpec(testing::FamiliesModelSpec(6));
  ASSERT_TRUE(loaded.model);
  SessionOptions options;
  options.max_batch = 8;
  options.record_attention.enabled = true;
  auto session = Session::Create(*loaded.model, options, nullptr);
  ASSERT_TRUE(session.ok()) << session.status().message();
  const std::vector<int32_t> tokens = Tokens(20);
  ASSERT_TRUE(session->Prefill(tokens.data(), tokens.size()).ok());
  const AttentionRecord record = session->attention_record();
  ASSERT_EQ(record.rows, 20u);
  for (size_t layer = 0; layer < 3; ++layer) {
    const size_t window = layer == 1 ? 0 : 6;
    for (size_t h = 0; h < record.num_heads; ++h) {
      for (size_t q = 0; q < 20; ++q) {
        const float* row = record.row(layer, h, q);
        const size_t first = window && q + 1 > window ? q + 1 - window : 0;
        double sum = 0;
        for (size_t k = 0; k < record.positions; ++k) {
          if (k < first || k > q) {
            ASSERT_EQ(row[k], 0.0f)
                << "layer " << layer << " head " << h << " q " << q << " k " << k;
          } else {
            EXPECT_GT(row[k], 0.0f);
            sum += row[k];
          }
        }
        EXPECT_NEAR(sum, 1.0, 1e-5) << "layer " << layer << " q " << q;
      }
    }
  }
}

}  // namespace
}  // namespace ember
