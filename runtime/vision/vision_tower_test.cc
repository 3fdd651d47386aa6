// The vision tower against PyTorch (vision_tower_test_data.h, written in float64 by
// tools/scripts/gen_vision_tower_data.py): a SigLIP-style ViT of 2 layers (d 16, 2 heads,
// ffn 24) over a 16 x 16 tile of 4 x 4 patches, post_layernorm, then Idefics3's pixel
// shuffle and projection, or Gemma 3's average pool, RMSNorm and projection. f32 weights
// at 1 and 2 threads (bitwise the same), and q8 weights within a q8 tolerance.
#include "runtime/vision/vision_tower.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model_writer.h"
#include "runtime/model/tensor_names.h"
#include "runtime/vision/vision_tower_test_data.h"
#include "testing/testing.h"

namespace ember {
namespace {

namespace o = tower_oracle;

ModelSpec OracleSpec(ImageConnector connector) {
  ModelSpec spec = testing::TinyModelSpec(o::kTextDim, 1, 2, 1, 32);
  VisionConfig v = testing::SiglipTestConfig(o::kDim, o::kHeads, o::kFfn, o::kLayers,
                                             o::kImage, o::kPatch, connector, o::kFactor);
  v.image_token_id = 400;
  spec.vision = v;
  auto add = [&](const o::NamedTensor& t) {
    TensorSpec s;
    s.name = t.name;
    s.shape =
        t.cols ? std::vector<uint64_t>{t.rows, t.cols} : std::vector<uint64_t>{t.rows};
    s.dtype = DType::kF32;
    s.values.assign(t.values, t.values + t.rows * (t.cols ? t.cols : 1));
    spec.tensors.push_back(s);
  };
  for (const o::NamedTensor& t : o::kTower) add(t);
  if (connector == ImageConnector::kPixelShuffle) {
    for (const o::NamedTensor& t : o::kShuffleConnector) add(t);
  } else {
    for (const o::NamedTensor& t : o::kPoolConnector) add(t);
  }
  return spec;
}

struct Encoded {
  std::vector<float> hidden, out;
};

Encoded Encode(const Model& model, int threads, const float* pixels = o::kPixels,
               bool blocked = true) {
  Encoded e;
  auto plan = PlanVisionTower(model);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  if (!plan.ok()) return e;
  plan->blocked_attention = blocked;
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) pool = std::move(*ThreadPool::Create(threads));
  std::vector<uint8_t> storage(plan->arena_bytes() + kArenaAlignment);
  uint8_t* base = storage.data();
  base += (kArenaAlignment - reinterpret_cast<uintptr_t>(base) % kArenaAlignment) %
          kArenaAlignment;
  auto tower = VisionTower::Create(model, *plan, base, plan->arena_bytes(), pool.get());
  EXPECT_TRUE(tower.ok()) << tower.status().message();
  if (!tower.ok()) return e;
  const size_t rows = tower->rows_per_tile();
  e.out.assign(rows * model.config().d_model, 0.0f);
  tower->EncodeTile(pixels, e.out.data());
  const size_t patches = model.vision()->patches();
  const size_t d = model.vision()->encoder.d_model;
  e.hidden.assign(tower->hidden(), tower->hidden() + patches * d);
  return e;
}

// The largest |a - b| over n values.
double MaxError(const float* a, const float* b, size_t n) {
  double worst = 0.0;
  for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(double{a[i]} - b[i]));
  return worst;
}

TEST(VisionTowerTest, MatchesPyTorchWithEachConnector) {
  for (ImageConnector connector :
       {ImageConnector::kPixelShuffle, ImageConnector::kAveragePool}) {
    const testing::LoadedModel m = testing::LoadSpec(OracleSpec(connector));
    ASSERT_NE(m.model, nullptr);
    const float* expected =
        connector == ImageConnector::kPixelShuffle ? o::kShuffleOut : o::kPoolOut;
    const Encoded one = Encode(*m.model, 1);
    ASSERT_EQ(one.hidden.size(), 16 * o::kDim);
    ASSERT_EQ(one.out.size(), 4 * o::kTextDim);
    EXPECT_LT(MaxError(one.hidden.data(), o::kHidden, one.hidden.size()), 5e-6);
    EXPECT_LT(MaxError(one.out.data(), expected, one.out.size()), 5e-6);
    const Encoded two = Encode(*m.model, 2);
    EXPECT_EQ(one.out, two.out) << "1 and 2 threads";
    EXPECT_EQ(one.hidden, two.hidden);
  }
}

// At real sizes the tower's attention runs by blocks of queries, head by head
// (Forward::AttentionBlocked); it gives what the query-by-query path gives, within f32
// rounding: 1156 patches (18 blocks of 64 and 4 more; rows of scores ending in a part of
// a vector) in heads of 20 and of 12 values, one and four heads a thread.
TEST(VisionTowerTest, BlockedAttentionMatchesQueryByQuery) {
  const struct { uint32_t d, heads; } shapes[] = {{40, 2}, {48, 4}};
  for (const auto& shape : shapes) {
    ModelSpec spec = testing::TinyModelSpec(o::kTextDim, 1, 2, 1, 32);
    testing::AddVisionTower(&spec,
                            testing::SiglipTestConfig(shape.d, shape.heads, 72, 2, 136, 4,
                                                      ImageConnector::kAveragePool, 2),
                            3);
    const testing::LoadedModel m = testing::LoadSpec(spec);
    ASSERT_NE(m.model, nullptr);
    ASSERT_EQ(m.model->vision()->patches(), 1156u);
    std::vector<float> pixels(3 * 136 * 136);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& p : pixels) p = dist(rng);
    const Encoded by_query = Encode(*m.model, 1, pixels.data(), false);
    const Encoded blocked = Encode(*m.model, 1, pixels.data(), true);
    ASSERT_EQ(blocked.hidden.size(), 1156u * shape.d);
    double largest = 0.0;
    for (float x : by_query.hidden) largest = std::max(largest, std::fabs(double{x}));
    const double error =
        MaxError(blocked.hidden.data(), by_query.hidden.data(), blocked.hidden.size());
    EXPECT_LT(error, 2e-5 * largest) << "d " << shape.d << ", largest " << largest;
    EXPECT_GT(largest, 0.5);
    EXPECT_LT(MaxError(blocked.out.data(), by_query.out.data(), blocked.out.size()),
              2e-5 * largest);
    const Encoded two = Encode(*m.model, 2, pixels.data(), true);
    EXPECT_EQ(blocked.hidden, two.hidden) << "1 and 2 threads";
    EXPECT_EQ(blocked.out, two.out);
  }
}

// q8 weights (the converter's choice for a q8, q4 or K-quant model's tower): within the
// error q8 puts on a product of inputs of 16 and 24 values.
TEST(VisionTowerTest, Q8WeightsStayClose) {
  for (ImageConnector connector :
       {ImageConnector::kPixelShuffle, ImageConnector::kAveragePool}) {
    ModelSpec spec = OracleSpec(connector);
    for (TensorSpec& t : spec.tensors) {  // as tools/convert/dtype_policy.cc chooses
      const bool tower = names::IsVisionTensor(t.name.c_str());
      if (tower && t.shape.size() == 2 && t.name != "v.position_embd.weight") {
        t.dtype = DType::kQ8;
      }
    }
    const testing::LoadedModel m = testing::LoadSpec(spec);
    ASSERT_NE(m.model, nullptr);
    EXPECT_EQ(m.model->vision_weights()->encoder.layers[0].wq->dtype, DType::kQ8);
    const float* expected =
        connector == ImageConnector::kPixelShuffle ? o::kShuffleOut : o::kPoolOut;
    const Encoded q8 = Encode(*m.model, 1);
    ASSERT_EQ(q8.out.size(), 4 * o::kTextDim);
    const double error = MaxError(q8.out.data(), expected, q8.out.size());
    EXPECT_LT(error, 0.08);  // 0.033 and 0.014 on x86 (outputs up to 3.4)
    EXPECT_GT(error, 0.0);   // q8, not f32
  }
}

TEST(VisionTowerTest, RefusesATextModelAndASmallArena) {
  const testing::LoadedModel text = testing::LoadSpec(testing::TinyModelSpec());
  ASSERT_NE(text.model, nullptr);
  EXPECT_EQ(PlanVisionTower(*text.model).status().code(), StatusCode::kInvalidArgument);
  const testing::LoadedModel m =
      testing::LoadSpec(OracleSpec(ImageConnector::kPixelShuffle));
  ASSERT_NE(m.model, nullptr);
  auto plan = PlanVisionTower(*m.model);
  ASSERT_TRUE(plan.ok());
  std::vector<uint8_t> storage(plan->arena_bytes() + 2 * kArenaAlignment);
  uint8_t* base = storage.data();
  base += (kArenaAlignment - reinterpret_cast<uintptr_t>(base) % kArenaAlignment) %
          kArenaAlignment;
  EXPECT_EQ(
      VisionTower::Create(*m.model, *plan, base, plan->arena_bytes() - 1).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(
      VisionTower::Create(*m.model, *plan, base + 1, plan->arena_bytes()).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_TRUE(VisionTower::Create(*m.model, *plan, base, plan->arena_bytes()).ok());
}

}  // namespace
}  // namespace ember
