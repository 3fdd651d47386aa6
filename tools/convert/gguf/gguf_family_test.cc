// Tests of the GGUF families on Llama's blocks (gguf_family.h) on files the tests write:
// a Gemma 3 and a Phi-3 laid out as llama.cpp's converter lays them out import into the
// Config and tensors of the model they were written from (its logits, bit for bit).
// tests/oracles/gguf_oracle.py checks the same families against PyTorch references.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "runtime/model/tensor_names.h"
#include "testing/testing.h"
#include "tools/convert/gguf/gguf_builder.h"
#include "tools/convert/gguf/gguf_test_util.h"

namespace ember::tools {
namespace {

using gguf_test::Find;
using gguf_test::Logits;

Status Import(const std::string& bytes, ModelSpec* spec) {
  return gguf_test::Import(bytes, GgufImportOptions(), spec);
}

// The tiny Llama as architecture `arch`, RoPE on halves (as the GGUF families but llama).
ModelSpec FamilySpec(const char* arch, uint32_t layers, uint32_t seed) {
  ModelSpec spec = testing::TinyModelSpec(32, layers, 4, 2, 48, 300, 64, seed);
  snprintf(spec.config.architecture, sizeof(spec.config.architecture), "%s", arch);
  spec.config.rope_pairing = RopePairing::kHalf;
  return spec;
}

void AddVector(ModelSpec* spec, const std::string& name, uint64_t n, float base) {
  TensorSpec t;
  t.name = name;
  t.shape = {n};
  for (uint64_t i = 0; i < n; ++i) t.values.push_back(base + 0.05f * (i % 5));
  spec->tensors.push_back(std::move(t));
}

// An f32 tensor's values (the importer keeps a GGUF F32 tensor's bytes as they are).
std::vector<float> Values(const TensorSpec& t) {
  if (!t.values.empty() || t.dtype != DType::kF32) return t.values;
  std::vector<float> v(t.encoded.size() / sizeof(float));
  memcpy(v.data(), t.encoded.data(), t.encoded.size());
  return v;
}

std::string F32Bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// 7 layers of 4 heads of 8: layers 6 global (the 6th), the others sliding over 5
// positions of the 24-token input.
TEST(GgufFamilyTest, Gemma3ImportsItsNormsScalesAndSlidingPattern) {
  ModelSpec gemma = FamilySpec("gemma3", 7, 21);
  ModelConfig& c = gemma.config;
  c.rope_theta = 1000000.0f;
  c.activation = Activation::kGeluTanh;
  c.qk_norm = c.post_norms = true;
  c.embedding_scale = std::sqrt(32.0f);
  c.attention_scale = 1.0f / std::sqrt(8.0f);
  c.sliding_window = 5;
  c.rope_local_theta = 10000.0f;
  c.rope_scaling = RopeScaling::kLinear;
  c.rope_scaling_factor = 8.0f;
  for (unsigned i = 0; i < 7; ++i) {
    c.layer_attention.push_back(i == 5 ? LayerAttention::kGlobal
                                       : LayerAttention::kSliding);
    AddVector(&gemma, names::LayerName(names::kAttnQNorm, i), 8, 0.9f);
    AddVector(&gemma, names::LayerName(names::kAttnKNorm, i), 8, 1.1f);
    AddVector(&gemma, names::LayerName(names::kAttnPostNorm, i), 32, 0.8f);
    AddVector(&gemma, names::LayerName(names::kFfnPostNorm, i), 32, 1.2f);
  }
  const std::string bytes = testing::LlamaGgufBuilder(gemma, 0, "gemma3")
                                .U32("gemma3.attention.sliding_window", 5)
                                .Str("gemma3.rope.scaling.type", "linear")
                                .F32("gemma3.rope.scaling.factor", 8.0f)
                                .Build();
  ModelSpec imported;
  const Status s = Import(bytes, &imported);
  ASSERT_TRUE(s.ok()) << s.message();
  const ModelConfig& got = imported.config;
  EXPECT_TRUE(got.qk_norm && got.post_norms);
  EXPECT_EQ(got.activation, Activation::kGeluTanh);
  EXPECT_EQ(got.embedding_scale, c.embedding_scale);
  EXPECT_EQ(got.attention_scale, c.attention_scale);
  EXPECT_EQ(got.sliding_window, 5u);
  EXPECT_EQ(got.layer_attention, c.layer_attention);
  EXPECT_EQ(got.rope_local_theta, 10000.0f);
  EXPECT_EQ(got.rope_scaling, RopeScaling::kLinear);
  EXPECT_EQ(got.rope_scaling_factor, 8.0f);
  const std::vector<int32_t> tokens = {1, 100, 7,  250, 3,  42,  42, 99, 5,  6,  7,  8,
                                       9, 10,  11, 12,  13, 140, 15, 16, 17, 18, 19, 20};
  EXPECT_EQ(Logits(imported, tokens), Logits(gemma, tokens));
  // Without a window shorter than the context no layer slides, and none has a local base.
  ModelSpec global;
  ASSERT_TRUE(
      Import(testing::LlamaGgufBuilder(gemma, 0, "gemma3").Build(), &global).ok());
  EXPECT_TRUE(global.config.layer_attention.empty());
  EXPECT_EQ(global.config.rope_local_theta, 0.0f);
}

// Phi-3: attn_qkv and ffn_up fused (gate rows, then up), RoPE on 4 of 8 values of a head,
// every layer sliding.
TEST(GgufFamilyTest, Phi3SplitsFusedProjectionsAndRotatesPartOfEachHead) {
  ModelSpec phi = FamilySpec("phi3", 2, 23);
  ModelConfig& c = phi.config;
  c.rope_dim = 4;
  c.sliding_window = 6;
  c.layer_attention.assign(2, LayerAttention::kSliding);
  testing::GgufBuilder b = testing::LlamaGgufBuilder(phi, 0, "phi3");
  b.Remove("phi3.rope.dimension_count")
      .U32("phi3.rope.dimension_count", 4)
      .U32("phi3.attention.sliding_window", 6);
  for (unsigned i = 0; i < 2; ++i) {
    std::vector<float> qkv, gate_up;
    for (const char* part : {names::kAttnQ, names::kAttnK, names::kAttnV}) {
      const std::vector<float>& v = Find(phi, names::LayerName(part, i)).values;
      qkv.insert(qkv.end(), v.begin(), v.end());
      b.Remove(names::LayerName(part, i));
    }
    for (const char* part : {names::kFfnGate, names::kFfnUp}) {
      const std::vector<float>& v = Find(phi, names::LayerName(part, i)).values;
      gate_up.insert(gate_up.end(), v.begin(), v.end());
      b.Remove(names::LayerName(part, i));
    }
    b.Tensor("blk." + std::to_string(i) + ".attn_qkv.weight", {32, 64}, 0, F32Bytes(qkv));
    b.Tensor(names::LayerName(names::kFfnUp, i), {32, 96}, 0, F32Bytes(gate_up));
  }
  ModelSpec imported;
  const Status s = Import(b.Build(), &imported);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(imported.config.rope_dim, 4u);
  EXPECT_EQ(imported.config.layer_attention, c.layer_attention);
  for (unsigned i = 0; i < 2; ++i) {
    for (const char* part :
         {names::kAttnQ, names::kAttnK, names::kAttnV, names::kFfnGate, names::kFfnUp}) {
      const std::string name = names::LayerName(part, i);
      EXPECT_EQ(Values(Find(imported, name)), Find(phi, name).values) << name;
    }
  }
  const std::vector<int32_t> tokens = {1, 100, 7, 250, 3, 42, 42, 99, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(Logits(imported, tokens), Logits(phi, tokens));
}

}  // namespace
}  // namespace ember::tools
