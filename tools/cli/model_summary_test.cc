// FindNonFiniteWeights (`ember inspect --check-weights`): NaN and infinities found in
// every weight type (q8/q4: in their scales), counted and located; a clean model reports
// nothing.
#include "tools/cli/model_summary.h"

#include <cmath>
#include <cstring>
#include <string>

#include "kernels/quant_layout.h"

#include "gtest/gtest.h"
#include "testing/testing.h"

namespace ember::tools {
namespace {

TensorSpec* Find(ModelSpec& spec, const std::string& name) {
  for (TensorSpec& t : spec.tensors) {
    if (t.name == name) return &t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return nullptr;
}

TEST(ModelSummaryTest, FindsNaNAndInfinityInEveryWeightType) {
  ModelSpec clean = testing::TinyModelSpec();
  testing::LoadedModel loaded = testing::LoadSpec(clean);
  ASSERT_TRUE(loaded.model);
  EXPECT_TRUE(FindNonFiniteWeights(*loaded.model).empty());

  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    ModelSpec spec = testing::TinyModelSpec();
    TensorSpec* w = Find(spec, "blk.1.ffn_down.weight");
    TensorSpec* norm = Find(spec, "blk.0.attn_norm.weight");
    ASSERT_TRUE(w && norm);
    w->dtype = dtype;
    const size_t cols = w->shape[1];
    w->values[3 * cols + 40] = std::nanf("");
    w->values[5 * cols] = INFINITY;
    norm->values[7] = -INFINITY;  // an f32 norm
    testing::LoadedModel bad = testing::LoadSpec(spec);
    ASSERT_TRUE(bad.model) << DTypeName(dtype);
    const std::vector<NonFiniteTensor> found = FindNonFiniteWeights(*bad.model);
    ASSERT_EQ(found.size(), 2u) << DTypeName(dtype);
    EXPECT_EQ(found[0].name, "blk.0.attn_norm.weight");
    EXPECT_EQ(found[0].inf, 1u);
    EXPECT_EQ(found[0].first, 7u);
    EXPECT_EQ(found[1].name, "blk.1.ffn_down.weight");
    EXPECT_EQ(found[1].nan, 1u) << DTypeName(dtype);
    EXPECT_EQ(found[1].inf, 1u) << DTypeName(dtype);
    EXPECT_EQ(found[1].first, 3 * cols + 40) << DTypeName(dtype);
  }
}

// q8 and q4 hold no NaN values, only scales (the converter refuses to quantize a NaN or
// an infinity): a corrupted file's scales, patched where kernels/quant_layout.h puts
// them, are found by group.
TEST(ModelSummaryTest, FindsNonFiniteQuantScales) {
  for (DType dtype : {DType::kQ8, DType::kQ4}) {
    ModelSpec spec = testing::TinyModelSpec();
    TensorSpec* w = Find(spec, "blk.1.ffn_down.weight");
    ASSERT_TRUE(w);
    w->dtype = dtype;
    testing::LoadedModel loaded = testing::LoadSpec(spec);
    ASSERT_TRUE(loaded.model);
    const Tensor* t = loaded.model->weights().layers[1].ffn_down;
    const kernels::QuantKind kind =
        dtype == DType::kQ8 ? kernels::QuantKind::kQ8 : kernels::QuantKind::kQ4;
    const size_t cols = t->cols();
    // The f16 scale of (row, group), for rows < 16 (the first panel).
    const auto patch = [&](size_t row, size_t group, uint16_t bits) {
      uint8_t* scale = const_cast<uint8_t*>(t->data) +
                       group * kernels::QuantGroupBytes(kind) +
                       kernels::QuantGroupValueBytes(kind) + row * 2;
      memcpy(scale, &bits, 2);
    };
    patch(3, 1, 0x7E00);  // NaN
    patch(5, 0, 0xFC00);  // -inf
    EXPECT_TRUE(std::isnan(kernels::QuantScale(kind, t->data, cols, 3, 1)));
    const std::vector<NonFiniteTensor> found = FindNonFiniteWeights(*loaded.model);
    ASSERT_EQ(found.size(), 1u) << DTypeName(dtype);
    EXPECT_EQ(found[0].name, "blk.1.ffn_down.weight");
    EXPECT_EQ(found[0].nan, 1u);
    EXPECT_EQ(found[0].inf, 1u);
    const size_t groups = kernels::QuantGroups(cols);
    EXPECT_EQ(found[0].first, 3 * groups + 1);
  }
}

}  // namespace
}  // namespace ember::tools
