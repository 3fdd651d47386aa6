// A model file with a vision tower (schema/model.fbs VisionConfig): written and loaded
// with each connector, its tensors bound beside the text model's, and every check of the
// table and of the "v." and "mm." tensors refusing a file with a message that names it.
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/model/model_writer.h"
#include "runtime/model/tensor_names.h"
#include "testing/testing.h"

namespace ember {
namespace {

ModelSpec TowerSpec(ImageConnector connector) {
  ModelSpec spec = testing::TinyModelSpec();
  testing::AddVisionTower(&spec, connector);
  return spec;
}

// Loads the spec's bytes; the status of Model::FromMemory.
Status Load(const ModelSpec& spec) {
  std::vector<uint8_t> bytes;
  EMBER_RETURN_IF_ERROR(SerializeModel(spec, &bytes));
  const testing::AlignedBytes aligned(bytes);
  return Model::FromMemory(aligned.data(), aligned.size()).status();
}

TensorSpec* Find(ModelSpec* spec, const std::string& name) {
  for (TensorSpec& t : spec->tensors) {
    if (t.name == name) return &t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return nullptr;
}

TEST(VisionConfigTest, ATowerLoadsWithEachConnector) {
  for (ImageConnector connector :
       {ImageConnector::kPixelShuffle, ImageConnector::kAveragePool}) {
    const ModelSpec spec = TowerSpec(connector);
    const testing::LoadedModel m = testing::LoadSpec(spec);
    ASSERT_NE(m.model, nullptr);
    const VisionConfig* v = m.model->vision();
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->encoder.d_model, 32u);
    EXPECT_EQ(v->encoder.vocab_size, 0u);
    EXPECT_EQ(v->encoder.max_context, 16u);
    EXPECT_EQ(v->patches(), 16u);
    EXPECT_EQ(v->tokens_per_image(), 4u);
    EXPECT_EQ(v->connector, connector);
    EXPECT_EQ(v->image_token_id, 307);
    EXPECT_EQ(v->image_blocks_bidirectional, connector == ImageConnector::kAveragePool);
    const VisionWeights& w = *m.model->vision_weights();
    EXPECT_EQ(w.encoder.tok_embedding, nullptr);
    EXPECT_EQ(w.encoder.output, nullptr);
    ASSERT_EQ(w.encoder.layers.size(), 2u);
    EXPECT_STREQ(w.encoder.layers[1].ffn_down->name, "v.blk.1.ffn_down.weight");
    EXPECT_STREQ(w.encoder.pos_embedding->name, "v.position_embd.weight");
    EXPECT_STREQ(w.encoder.output_norm_bias->name, "v.output_norm.bias");
    EXPECT_EQ(w.patch->shape[1], 192u);  // 3 x 8 x 8
    EXPECT_EQ(w.projector->shape[0], m.model->config().d_model);
    EXPECT_EQ(w.projector->shape[1],
              connector == ImageConnector::kPixelShuffle ? 128u : 32u);
    EXPECT_EQ(w.projector_norm != nullptr, connector == ImageConnector::kAveragePool);
    // The text model binds its own tensors only.
    EXPECT_STREQ(m.model->weights().layers[0].wq->name, "blk.0.attn_q.weight");
  }
  const testing::LoadedModel text = testing::LoadSpec(testing::TinyModelSpec());
  ASSERT_NE(text.model, nullptr);
  EXPECT_EQ(text.model->vision(), nullptr);
  EXPECT_EQ(text.model->vision_weights(), nullptr);
}

// The processor and the image prompt come back from the file as written; without
// them, SigLIP's processor at the tower's size and no prompt.
TEST(VisionConfigTest, TheProcessorAndPromptRoundTrip) {
  ModelSpec spec = TowerSpec(ImageConnector::kPixelShuffle);
  ImageProcessorConfig& p = spec.vision->processor;
  p.layout = ImageLayout::kSplitTiles;
  p.longest_edge = 96;
  p.tile_size = 32;
  p.split = false;
  p.resample = ResampleFilter::kLanczos;
  p.alpha_over_white = false;
  p.rescale_factor = 0.25;
  p.normalize = false;
  p.mean[2] = 0.25f;
  p.std[0] = 0.125f;
  spec.vision->prompt = {"<image>", "<a>", "<b>\n", "<t>", ImagePromptLayout::kSingle,
                         "",        ""};
  const testing::LoadedModel m = testing::LoadSpec(spec);
  ASSERT_TRUE(m.model);
  const ImageProcessorConfig& q = m.model->vision()->processor;
  EXPECT_EQ(q.layout, ImageLayout::kSplitTiles);
  EXPECT_EQ(q.longest_edge, 96);
  EXPECT_EQ(q.tile_size, 32);
  EXPECT_FALSE(q.split);
  EXPECT_EQ(q.resample, ResampleFilter::kLanczos);
  EXPECT_FALSE(q.alpha_over_white);
  EXPECT_TRUE(q.rescale);
  EXPECT_EQ(q.rescale_factor, 0.25);
  EXPECT_FALSE(q.normalize);
  EXPECT_EQ(q.mean[2], 0.25f);
  EXPECT_EQ(q.std[0], 0.125f);
  // A text past 256 bytes, or with a NUL, is refused where it is set (the loader
  // refuses such a file too).
  PromptText text;
  EXPECT_FALSE(text.Assign(std::string(257, 'a')));
  EXPECT_TRUE(text.empty());
  EXPECT_FALSE(text.Assign(std::string_view("a\0b", 3)));
  EXPECT_TRUE(text.Assign(std::string(256, 'a')));
  EXPECT_EQ(text.size(), 256u);
  const ImagePrompt& prompt = m.model->vision()->prompt;
  EXPECT_EQ(prompt.marker, "<image>");
  EXPECT_EQ(prompt.before, "<a>");
  EXPECT_EQ(prompt.after, "<b>\n");
  EXPECT_EQ(prompt.token, "<t>");
  EXPECT_EQ(prompt.layout, ImagePromptLayout::kSingle);

  // SmolVLM's tiled prompt.
  ModelSpec tiled = spec;
  tiled.vision->prompt = {"<image>", "", "", "<image>", ImagePromptLayout::kTiles,
                          "",        ""};
  tiled.vision->prompt.around = "<fake_token_around_image>";
  tiled.vision->prompt.global_token = "<global-img>";
  const testing::LoadedModel t = testing::LoadSpec(tiled);
  ASSERT_TRUE(t.model);
  const ImagePrompt& tp = t.model->vision()->prompt;
  EXPECT_EQ(tp.layout, ImagePromptLayout::kTiles);
  EXPECT_EQ(tp.around, "<fake_token_around_image>");
  EXPECT_EQ(tp.global_token, "<global-img>");
  EXPECT_EQ(tp.token, "<image>");

  const testing::LoadedModel plain =
      testing::LoadSpec(TowerSpec(ImageConnector::kAveragePool));
  ASSERT_TRUE(plain.model);
  const ImageProcessorConfig& d = plain.model->vision()->processor;
  EXPECT_EQ(d.layout, ImageLayout::kFixed);
  EXPECT_EQ(d.width, 32);
  EXPECT_EQ(d.height, 32);
  EXPECT_EQ(d.resample, ResampleFilter::kBilinear);
  EXPECT_TRUE(plain.model->vision()->prompt.marker.empty());
}

TEST(VisionConfigTest, BadTowersAreRefusedByName) {
  struct Case {
    const char* what;
    std::function<void(ModelSpec*)> edit;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"tower tensors without a vision table", [](ModelSpec* s) { s->vision.reset(); },
       "(a vision tower's, in a model without one)"},
      {"a missing layer tensor",
       [](ModelSpec* s) {
         s->tensors.erase(s->tensors.begin() +
                          (Find(s, "v.blk.1.ffn_up.weight") - s->tensors.data()));
       },
       "missing tensor 'v.blk.1.ffn_up.weight'"},
      {"an unknown projector tensor",
       [](ModelSpec* s) {
         TensorSpec t = *Find(s, "v.patch_embd.bias");
         t.name = "mm.extra.bias";
         s->tensors.push_back(t);
       },
       "unexpected tensor 'mm.extra.bias'"},
      {"a projector for another text width",
       [](ModelSpec* s) {
         TensorSpec* t = Find(s, names::kShuffleProjector);
         t->shape[0] = 16;
         t->values.resize(16 * 128);
       },
       "tensor 'mm.model.fc.weight' has shape (16, 128)"},
      {"a patch embedding for other patches",
       [](ModelSpec* s) {
         TensorSpec* t = Find(s, "v.patch_embd.weight");
         t->shape[1] = 64;
         t->values.resize(32 * 64);
       },
       "tensor 'v.patch_embd.weight' has shape (32, 64)"},
      {"an encoder with a vocabulary",
       [](ModelSpec* s) { s->vision->encoder.vocab_size = 5; },
       "the encoder has a vocabulary of 5"},
      {"positions for other patches",
       [](ModelSpec* s) { s->vision->encoder.max_context = 15; },
       "15 positions for 16 patches"},
      {"a part patch", [](ModelSpec* s) { s->vision->image_size = 30; },
       "image size 30 and patch size 8"},
      {"no patch size", [](ModelSpec* s) { s->vision->patch_size = 0; },
       "image size 32 and patch size 0"},
      {"a factor that does not divide",
       [](ModelSpec* s) { s->vision->connector_factor = 3; },
       "a connector factor of 3 for 4 patches a side"},
      {"no image token", [](ModelSpec* s) { s->vision->image_token_id = -2; },
       "image token id -2"},
      {"a causal encoder",
       [](ModelSpec* s) { s->vision->encoder.mask = AttentionMask::kCausal; },
       "must be one bidirectional pass over learned positions"},
      {"an encoder without its final norm",
       [](ModelSpec* s) {
         s->vision->encoder.final_norm = false;
         s->tensors.erase(s->tensors.begin() +
                          (Find(s, "v.output_norm.weight") - s->tensors.data()));
         s->tensors.erase(s->tensors.begin() +
                          (Find(s, "v.output_norm.bias") - s->tensors.data()));
       },
       "ending in a final norm"},
      {"an encoder with RoPE",
       [](ModelSpec* s) {
         s->vision->encoder.positions = PositionKind::kRope;
         s->vision->encoder.rope_theta = 10000.0f;
       },
       "must be one bidirectional pass over learned positions"},
      {"a pool norm eps of 0",
       [](ModelSpec* s) {
         *s = TowerSpec(ImageConnector::kAveragePool);
         s->vision->projector_norm_eps = 0.0f;
       },
       "projector norm_eps 0 outside (0, 1)"},
      {"a pool without its norm",
       [](ModelSpec* s) {
         *s = TowerSpec(ImageConnector::kAveragePool);
         Find(s, names::kProjectorNorm)->name = "mm.norm.weight";
       },
       "missing tensor 'mm.soft_emb_norm.weight'"},
      {"a processor whose tiles are not the tower's",
       [](ModelSpec* s) {
         s->vision->processor.height = s->vision->processor.width = 64;
       },
       "the processor's tiles (64x64) are not the tower's 32 pixels"},
      {"a processor of tiles of another size",
       [](ModelSpec* s) {
         ImageProcessorConfig& p = s->vision->processor;
         p.layout = ImageLayout::kSplitTiles;
         p.longest_edge = 96;
         p.tile_size = 48;
       },
       "the processor's tiles (48x48) are not the tower's 32 pixels"},
      {"a processor with a zero std",
       [](ModelSpec* s) { s->vision->processor.std[1] = 0.0f; }, "mean 0.5, std 0"},
      {"a resample filter Pillow has not",
       [](ModelSpec* s) {
         s->vision->processor.resample = static_cast<ResampleFilter>(9);
       },
       "resample filter 9"},
      {"an image prompt without its token",
       [](ModelSpec* s) { s->vision->prompt.marker = "<image>"; },
       "an image prompt without its marker or token"},
      {"a tiled image prompt without its global view's text",
       [](ModelSpec* s) {
         s->vision->prompt = {"<image>", "", "", "<image>", ImagePromptLayout::kTiles,
                              "",        ""};
         s->vision->prompt.around = "<fake_token_around_image>";
       },
       "a tiled image prompt without its 'around' or 'global' text"},
      {"an image prompt layout the loader does not know",
       [](ModelSpec* s) {
         s->vision->prompt = {
             "<image>", "", "", "<image>", static_cast<ImagePromptLayout>(7), "", ""};
       },
       "image prompt layout 7 is not single or tiles"},
  };
  ASSERT_TRUE(Load(TowerSpec(ImageConnector::kPixelShuffle)).ok());
  for (const Case& c : cases) {
    ModelSpec spec = TowerSpec(ImageConnector::kPixelShuffle);
    c.edit(&spec);
    const Status s = Load(spec);
    ASSERT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << c.what << ": " << s.message();
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos)
        << c.what << ": " << s.message();
  }
}

}  // namespace
}  // namespace ember
