// Model loading of files whose Config fields for current families (RoPE scaling and
// its frequency factors, partial rotation, sliding layers, scales, soft-caps, qk-norm and
// post-norms) are broken: each is refused with its own message (runtime/
// family_config.cc). The cases model_corruption_test.cc's CorruptionTest runs as
// "FamilyConfig".
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model_generated.h"
#include "runtime/model/model_test_util.h"
#include "testing/testing.h"

namespace ember::testing {
namespace {

fb::Config* Config(Bytes& b) { return b.root()->mutable_config(); }

// RoPE frequencies divided by four factors (TinyModelSpec's head_dim is 8).
void FreqFactors(ModelSpec& spec) { spec.config.rope_freq_factors = {1, 2, 4, 8}; }

// LongRoPE's short and long factors over 16 positions.
void LongRope(ModelSpec& spec) {
  FreqFactors(spec);
  spec.config.rope_long_freq_factors = {1, 4, 16, 64};
  spec.config.rope_scaling = RopeScaling::kLongRope;
  spec.config.rope_original_context = 16;
}

// Layer 0 slides over 4 positions, layer 1 is global.
void SlidingLayers(ModelSpec& spec) {
  spec.config.sliding_window = 4;
  spec.config.layer_attention = {LayerAttention::kSliding, LayerAttention::kGlobal};
}

}  // namespace

std::vector<Corruption> FamilyConfigCorruptions() {
  return {
      Corruption{"unknown_rope_scaling",
                 [](Bytes& b) {
                   Config(b)->mutate_rope_scaling(static_cast<fb::RopeScaling>(9));
                 },
                 "rope_scaling 9 is not a kind this build knows"},
      Corruption{
          "llama3_without_original_context",
          [](Bytes& b) { Config(b)->mutate_rope_scaling(fb::RopeScaling::Llama3); },
          "llama3 RoPE scaling needs rope_original_context (1 to 16777216)"},
      Corruption{"scaling_factor_below_one",
                 [](Bytes& b) {
                   Config(b)->mutate_rope_scaling(fb::RopeScaling::Linear);
                   Config(b)->mutate_rope_scaling_factor(0.5f);
                 },
                 "rope_scaling_factor 0.5 outside [1, 1e6]"},
      Corruption{"nan_embedding_scale",
                 [](Bytes& b) { Config(b)->mutate_embedding_scale(NAN); },
                 "embedding_scale nan outside [1e-6, 1e6]"},
      Corruption{"negative_softcap",
                 [](Bytes& b) { Config(b)->mutate_attn_softcap(-1.0f); },
                 "attn_softcap -1 outside [1e-6, 1e6] (0: none)"},
      Corruption{"qk_norm_without_its_weights",
                 [](Bytes& b) { Config(b)->mutate_qk_norm(true); },
                 "missing tensor 'blk.0.attn_q_norm.weight'"},
      Corruption{"post_norms_without_their_weights",
                 [](Bytes& b) { Config(b)->mutate_post_norms(true); },
                 "missing tensor 'blk.0.post_attention_norm.weight'"},
      Corruption{"sliding_layers_without_a_window",
                 [](Bytes& b) { Config(b)->mutate_sliding_window(0); },
                 "sliding layers need a sliding_window of at least 1", SlidingLayers},
      Corruption{"layer_attention_too_short",
                 [](Bytes& b) { SetLength(Config(b)->layer_attention(), 1); },
                 "layer_attention has 1 entries for 2 layers", SlidingLayers},
      Corruption{"unknown_layer_attention",
                 [](Bytes& b) {
                   Config(b)->mutable_layer_attention()->Mutate(
                       1, static_cast<fb::LayerAttention>(7));
                 },
                 "layer 1's attention kind 7 is unknown", SlidingLayers},
      Corruption{"rope_freq_factors_of_the_wrong_length",
                 [](Bytes& b) { SetLength(Config(b)->rope_freq_factors(), 3); },
                 "3 rope_freq_factors for RoPE over 4 pairs", FreqFactors},
      Corruption{
          "zero_rope_freq_factor",
          [](Bytes& b) { Config(b)->mutable_rope_freq_factors()->Mutate(2, 0.0f); },
          "a factor of rope_freq_factors, 0, is outside [1e-6, 1e6]", FreqFactors},
      Corruption{"odd_rope_dim", [](Bytes& b) { Config(b)->mutate_rope_dim(5); },
                 "rope_dim 5 is not an even count of head_dim's 8"},
      Corruption{"rope_dim_past_head_dim",
                 [](Bytes& b) { Config(b)->mutate_rope_dim(10); },
                 "rope_dim 10 is not an even count of head_dim's 8"},
      Corruption{"factors_for_all_dimensions_of_a_partial_rope",
                 [](Bytes& b) { Config(b)->mutate_rope_dim(4); },
                 "4 rope_freq_factors for RoPE over 2 pairs", FreqFactors},
      Corruption{"longrope_without_long_factors",
                 [](Bytes& b) {
                   Config(b)->mutate_rope_scaling(fb::RopeScaling::LongRope);
                   Config(b)->mutate_rope_original_context(16);
                 },
                 "longrope RoPE scaling goes with both rope_freq_factors and "
                 "rope_long_freq_factors",
                 FreqFactors},
      Corruption{
          "long_factors_without_longrope",
          [](Bytes& b) { Config(b)->mutate_rope_scaling(fb::RopeScaling::Linear); },
          "only it has long factors", LongRope},
  };
}

namespace {

// The same model with every feature on loads (and the helpers above leave valid files).
TEST(FamilyConfigTest, ValidFeaturesLoad) {
  for (const auto& change : {FreqFactors, SlidingLayers, LongRope}) {
    ModelSpec spec = TinyModelSpec();
    change(spec);
    std::vector<uint8_t> raw;
    ASSERT_TRUE(SerializeModel(spec, &raw).ok());
    Bytes bytes(raw);
    EXPECT_EQ(LoadError(bytes), "loaded");
  }
  LoadedModel loaded = LoadSpec(FamiliesModelSpec());
  ASSERT_TRUE(loaded.model);
  EXPECT_EQ(loaded.model->config().window(0), 6u);
  EXPECT_EQ(loaded.model->config().window(1), 0u);
}

}  // namespace
}  // namespace ember::testing
