// Tests of the converter's per-tensor dtype choice (dtype_policy.h).
#include "tools/convert/dtype_policy.h"

#include <algorithm>
#include <string>

#include "gtest/gtest.h"

namespace ember::tools {
namespace {

ModelSpec Spec() {
  ModelSpec spec;
  auto add = [&](const char* name, std::vector<uint64_t> shape) {
    TensorSpec t;
    t.name = name;
    t.shape = std::move(shape);
    spec.tensors.push_back(t);
  };
  add("token_embd.weight", {64, 16});
  add("position_embd.weight", {32, 16});
  add("blk.0.attn_norm.weight", {16});
  add("blk.0.attn_q.weight", {16, 16});
  add("blk.0.attn_q.bias", {16});
  add("blk.0.ffn_down.weight", {16, 48});
  add("blk.1.ffn_down.weight", {16, 48});
  add("output.weight", {64, 16});
  return spec;
}

DType TypeOf(const ModelSpec& spec, const std::string& name) {
  for (const TensorSpec& t : spec.tensors) {
    if (t.name == name) return t.dtype;
  }
  ADD_FAILURE() << "no tensor " << name;
  return DType::kF32;
}

// A vision tower's positions stay f32 and its matrices at most q8.
TEST(DTypePolicyTest, AVisionTowerIsNotStoredBelowQ8) {
  for (DType d : {DType::kF32, DType::kF16, DType::kQ8, DType::kQ4, DType::kQ4K}) {
    ModelSpec spec = Spec();
    for (const char* name : {"v.position_embd.weight", "v.patch_embd.weight",
                             "v.blk.0.attn_q.weight", "mm.input_projection.weight"}) {
      TensorSpec t;
      t.name = name;
      t.shape = {256, 256};
      spec.tensors.push_back(t);
    }
    ASSERT_TRUE(ChooseDTypes(d, {}, &spec).ok());
    const DType tower = d == DType::kQ4 || d == DType::kQ4K ? DType::kQ8 : d;
    EXPECT_EQ(TypeOf(spec, "v.position_embd.weight"), DType::kF32) << DTypeName(d);
    for (const char* name :
         {"v.patch_embd.weight", "v.blk.0.attn_q.weight", "mm.input_projection.weight"}) {
      EXPECT_EQ(TypeOf(spec, name), tower) << name << " " << DTypeName(d);
    }
  }
}

TEST(DTypePolicyTest, Defaults) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8, DType::kQ4}) {
    ModelSpec spec = Spec();
    ASSERT_TRUE(ChooseDTypes(d, {}, &spec).ok());
    EXPECT_EQ(TypeOf(spec, "blk.0.attn_q.weight"), d);
    EXPECT_EQ(TypeOf(spec, "blk.1.ffn_down.weight"), d);
    EXPECT_EQ(TypeOf(spec, "blk.0.attn_norm.weight"), DType::kF32);
    EXPECT_EQ(TypeOf(spec, "blk.0.attn_q.bias"), DType::kF32);
    EXPECT_EQ(TypeOf(spec, "position_embd.weight"), DType::kF32);
    const DType classifier = d == DType::kQ4 ? DType::kQ8 : d;
    EXPECT_EQ(TypeOf(spec, "token_embd.weight"), classifier);
    EXPECT_EQ(TypeOf(spec, "output.weight"), classifier);
  }
}

TEST(DTypePolicyTest, OverridesApplyInOrder) {
  ModelSpec spec = Spec();
  std::vector<DTypeOverride> overrides(2);
  ASSERT_TRUE(ParseDTypeOverride("blk.*.ffn_down.weight=q8", &overrides[0]).ok());
  ASSERT_TRUE(ParseDTypeOverride("blk.1.*=f16", &overrides[1]).ok());
  ASSERT_TRUE(ChooseDTypes(DType::kQ4, overrides, &spec).ok());
  EXPECT_EQ(TypeOf(spec, "blk.0.ffn_down.weight"), DType::kQ8);
  EXPECT_EQ(TypeOf(spec, "blk.1.ffn_down.weight"), DType::kF16);
  EXPECT_EQ(TypeOf(spec, "blk.0.attn_q.weight"), DType::kQ4);
}

TEST(DTypePolicyTest, RejectsBadOverrides) {
  DTypeOverride o;
  EXPECT_FALSE(ParseDTypeOverride("blk.*", &o).ok());
  EXPECT_FALSE(ParseDTypeOverride("=q8", &o).ok());
  Status s = ParseDTypeOverride("blk.*=q5", &o);
  EXPECT_NE(std::string(s.message()).find("not a weight type"), std::string::npos);

  ModelSpec spec = Spec();
  ASSERT_TRUE(ParseDTypeOverride("blk.0.attn_norm.weight=q8", &o).ok());
  s = ChooseDTypes(DType::kF32, {o}, &spec);
  EXPECT_NE(std::string(s.message()).find("is not a matrix"), std::string::npos)
      << s.message();
  ASSERT_TRUE(ParseDTypeOverride("blk.9.*=q8", &o).ok());
  s = ChooseDTypes(DType::kF32, {o}, &spec);
  EXPECT_NE(std::string(s.message()).find("matches no tensor"), std::string::npos);
}

// A Llama of `layers` layers, d_model 256, ffn 768 (or `ffn`), untied unless `tied`.
ModelSpec LlamaSpec(uint32_t layers, bool tied, uint64_t ffn = 768) {
  ModelSpec spec;
  spec.config.n_layers = layers;
  spec.config.tied_classifier = tied;
  auto add = [&](const std::string& name, std::vector<uint64_t> shape) {
    TensorSpec t;
    t.name = name;
    t.shape = std::move(shape);
    spec.tensors.push_back(t);
  };
  add("token_embd.weight", {512, 256});
  for (uint32_t i = 0; i < layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    add(b + "attn_norm.weight", {256});
    for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
      add(b + m + ".weight", {256, 256});
    }
    add(b + "ffn_gate.weight", {ffn, 256});
    add(b + "ffn_up.weight", {ffn, 256});
    add(b + "ffn_down.weight", {256, ffn});
  }
  add("output_norm.weight", {256});
  if (!tied) add("output.weight", {512, 256});
  return spec;
}

// The layers whose attn_v and ffn_down llama.cpp's Q4_K_M/Q5_K_M give Q6_K, worked out
// by hand from llama_tensor_get_type's use_more_bits at c392e50 (4 layers: kshape's
// 2 + 2 Q6_K matrices besides the output, as its README lists).
std::vector<uint32_t> MoreBitsLayers(uint32_t layers) {
  if (layers == 4) return {2, 3};
  if (layers == 8) return {0, 3, 6, 7};
  if (layers == 32) return {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
  return {};
}

TEST(DTypePolicyTest, KQuantMixesFollowLlamaCpp) {
  for (const char* mix : {"q4_k_m", "q5_k_m"}) {
    WeightTypes types;
    ASSERT_TRUE(ParseWeightTypes(mix, &types).ok());
    const DType base = std::string(mix) == "q4_k_m" ? DType::kQ4K : DType::kQ5K;
    for (uint32_t layers : {4u, 8u, 32u}) {
      ModelSpec spec = LlamaSpec(layers, false);
      std::vector<std::string> notes;
      ASSERT_TRUE(ChooseDTypes(types, {}, &spec, &notes).ok());
      EXPECT_TRUE(notes.empty());
      const std::vector<uint32_t> more = MoreBitsLayers(layers);
      for (uint32_t i = 0; i < layers; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        const bool q6 = std::find(more.begin(), more.end(), i) != more.end();
        EXPECT_EQ(TypeOf(spec, b + "attn_v.weight"), q6 ? DType::kQ6K : base) << mix << i;
        EXPECT_EQ(TypeOf(spec, b + "ffn_down.weight"), q6 ? DType::kQ6K : base)
            << mix << i;
        EXPECT_EQ(TypeOf(spec, b + "attn_q.weight"), base);
        EXPECT_EQ(TypeOf(spec, b + "ffn_up.weight"), base);
        EXPECT_EQ(TypeOf(spec, b + "attn_norm.weight"), DType::kF32);
      }
      EXPECT_EQ(more.size() * 2, static_cast<size_t>(layers));  // "half of" them
      EXPECT_EQ(TypeOf(spec, "output.weight"), DType::kQ6K);
      EXPECT_EQ(TypeOf(spec, "token_embd.weight"), base);
    }
    // Tied: the embedding is the classifier.
    ModelSpec tied = LlamaSpec(4, true);
    ASSERT_TRUE(ChooseDTypes(types, {}, &tied).ok());
    EXPECT_EQ(TypeOf(tied, "token_embd.weight"), DType::kQ6K);
  }
}

TEST(DTypePolicyTest, KQuantTypesAndTheirFallback) {
  for (DType d : {DType::kQ4K, DType::kQ5K, DType::kQ6K}) {
    WeightTypes types;
    ASSERT_TRUE(ParseWeightTypes(DTypeName(d), &types).ok());
    EXPECT_EQ(types.matrix, d);
    EXPECT_EQ(types.mix, QuantMix::kNone);
    ModelSpec spec = LlamaSpec(8, false, /*ffn=*/688);  // 688 = 2.7 super-blocks
    std::vector<std::string> notes;
    ASSERT_TRUE(ChooseDTypes(types, {}, &spec, &notes).ok());
    for (uint32_t i = 0; i < 8; ++i) {
      const std::string b = "blk." + std::to_string(i) + ".";
      EXPECT_EQ(TypeOf(spec, b + "attn_v.weight"), d);
      EXPECT_EQ(TypeOf(spec, b + "ffn_up.weight"), d);             // 256 columns
      EXPECT_EQ(TypeOf(spec, b + "ffn_down.weight"), DType::kQ8);  // 688 columns
    }
    EXPECT_EQ(TypeOf(spec, "output.weight"), DType::kQ6K);
    ASSERT_EQ(notes.size(), 8u);
    EXPECT_NE(notes[0].find("blk.0.ffn_down.weight: 688 columns"), std::string::npos)
        << notes[0];
  }
  // stories260K's shape (d_model 64): every matrix falls back to q8.
  ModelSpec small = Spec();
  WeightTypes mix;
  ASSERT_TRUE(ParseWeightTypes("q4_k_m", &mix).ok());
  std::vector<std::string> notes;
  ASSERT_TRUE(ChooseDTypes(mix, {}, &small, &notes).ok());
  EXPECT_EQ(TypeOf(small, "blk.0.attn_q.weight"), DType::kQ8);
  EXPECT_EQ(TypeOf(small, "output.weight"), DType::kQ8);
  EXPECT_EQ(TypeOf(small, "blk.0.attn_norm.weight"), DType::kF32);
  EXPECT_EQ(notes.size(), 5u);
  // --keep cannot ask for a K-quant without whole super-blocks; q4_k_m is no dtype.
  DTypeOverride o;
  ASSERT_TRUE(ParseDTypeOverride("blk.0.ffn_down.weight=q4_k", &o).ok());
  Status s = ChooseDTypes(DType::kF32, {o}, &small);
  EXPECT_NE(std::string(s.message()).find("48 columns (K-quants need a multiple of 256)"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(ParseDTypeOverride("x=q4_k_m", &o).ok());
  EXPECT_FALSE(ParseWeightTypes("q4_k_s", &mix).ok());
}

}  // namespace
}  // namespace ember::tools
