// Tests of the converter's per-tensor dtype choice (dtype_policy.h).
#include "tools/convert/dtype_policy.h"

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

}  // namespace
}  // namespace ember::tools
