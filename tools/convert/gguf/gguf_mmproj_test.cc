// Tests of llama.cpp's projector files (gguf_mmproj.h): a synthetic vision model written
// as a text GGUF and an mmproj under llama.cpp's names and layouts (the Gemma 3
// projection transposed, the norm as 1 + w, fc1 as ffn_up or, in older files,
// ffn_down) imports to the same tower, values and prompt; every malformed file, and a
// text model without the projector's image token, is refused with a message that names
// what is wrong.
#include "tools/convert/gguf/gguf_mmproj.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/half.h"
#include "runtime/model/tensor_names.h"
#include "testing/testing.h"
#include "tools/convert/gguf/gguf_builder.h"
#include "tools/convert/gguf/gguf_import.h"
#include "tools/convert/gguf/gguf_test_util.h"
#include "tools/convert/hf/hf_import.h"

namespace ember::tools {
namespace {

using gguf_test::Find;
using testing::GgufBuilder;

using testing::MmprojGgufBuilder;
using testing::TextGgufOf;

constexpr uint32_t kF32 = 0, kF16 = 1;

// The "tiny" tower under Gemma 3's pool, or with `shuffle` Idefics3's pixel shuffle.
ModelSpec VisionSpec(bool shuffle) {
  ModelSpec spec;
  const Status s = testing::VisionGgufSpec(shuffle, &spec);
  EXPECT_TRUE(s.ok()) << s.message();
  return spec;
}

const std::vector<float>& ValuesOf(const ModelSpec& spec, const std::string& name) {
  return Find(spec, name).values;
}

Status ImportPair(const std::string& text, const std::string& mmproj, ModelSpec* spec,
                  std::vector<std::string>* sources = nullptr) {
  auto t = GgufFile::Parse(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  auto m =
      GgufFile::Parse(reinterpret_cast<const uint8_t*>(mmproj.data()), mmproj.size());
  if (!t.ok()) return t.status();
  if (!m.ok()) return m.status();
  return ImportGgufFile(**t, "text.gguf", GgufImportOptions(), spec, sources, nullptr,
                        m->get());
}

// Every "v." and "mm." tensor of `got` holds `want`'s values, and the towers agree.
void ExpectSameTower(const ModelSpec& want, const ModelSpec& got) {
  ASSERT_TRUE(got.vision.has_value());
  const VisionConfig &a = *want.vision, &b = *got.vision;
  EXPECT_EQ(b.image_size, a.image_size);
  EXPECT_EQ(b.patch_size, a.patch_size);
  EXPECT_EQ(b.connector, a.connector);
  EXPECT_EQ(b.connector_factor, a.connector_factor);
  EXPECT_EQ(b.image_blocks_bidirectional, a.image_blocks_bidirectional);
  EXPECT_EQ(b.image_token_id, a.image_token_id);
  EXPECT_EQ(b.encoder.d_model, a.encoder.d_model);
  EXPECT_EQ(b.encoder.ffn_dim, a.encoder.ffn_dim);
  EXPECT_EQ(b.encoder.n_layers, a.encoder.n_layers);
  EXPECT_EQ(b.encoder.n_heads, a.encoder.n_heads);
  EXPECT_EQ(b.encoder.max_context, a.encoder.max_context);
  EXPECT_FLOAT_EQ(b.encoder.norm_eps, a.encoder.norm_eps);
  EXPECT_EQ(std::string(b.prompt.marker.c_str()), a.prompt.marker.c_str());
  EXPECT_EQ(std::string(b.prompt.token.c_str()), a.prompt.token.c_str());
  EXPECT_EQ(b.prompt.layout, a.prompt.layout);
  size_t vision = 0;
  for (const TensorSpec& t : want.tensors) {
    if (!names::IsVisionTensor(t.name.c_str())) continue;
    ++vision;
    const TensorSpec& g = Find(got, t.name);
    EXPECT_EQ(g.shape, t.shape) << t.name;
    EXPECT_EQ(g.dtype, DType::kF32) << t.name;
    std::vector<float> values = g.values;
    if (values.empty()) {
      values.resize(g.encoded.size() / 4);
      memcpy(values.data(), g.encoded.data(), g.encoded.size());
    }
    EXPECT_EQ(values, t.values) << t.name;
  }
  size_t got_vision = 0;
  for (const TensorSpec& t : got.tensors)
    got_vision += names::IsVisionTensor(t.name.c_str());
  EXPECT_EQ(got_vision, vision);
}

TEST(GgufMmprojTest, Gemma3ProjectorImportsTheSameTowerAndPrompt) {
  const ModelSpec spec = VisionSpec(false);
  ModelSpec got;
  std::vector<std::string> sources;
  const Status s =
      ImportPair(TextGgufOf(spec), MmprojGgufBuilder(spec, kF32).Build(), &got, &sources);
  ASSERT_TRUE(s.ok()) << s.message();
  ExpectSameTower(spec, got);
  // The prompt is Gemma 3's block, named by the tokenizer's added tokens.
  EXPECT_STREQ(got.vision->prompt.before.c_str(), "\n\n<start_of_image>");
  EXPECT_STREQ(got.vision->prompt.after.c_str(), "<end_of_image>\n\n");
  EXPECT_FALSE(got.vision->processor.alpha_over_white);
  EXPECT_EQ(got.vision->processor.layout, ImageLayout::kFixed);
  EXPECT_EQ(got.vision->processor.height, static_cast<int>(spec.vision->image_size));
  // The projection was read across: the converter's line says so.
  bool transposed = false;
  for (size_t i = 0; i < got.tensors.size(); ++i) {
    if (got.tensors[i].name == names::kPoolProjector) {
      transposed = sources[i] == "from f32, transposed";
    }
  }
  EXPECT_TRUE(transposed);
  // The file as the loader takes it.
  EXPECT_TRUE(CheckSpecTensors(got).ok());
}

TEST(GgufMmprojTest, Idefics3ProjectorImportsTheSameTowerAndTiles) {
  const ModelSpec spec = VisionSpec(true);
  for (bool legacy : {false, true}) {
    SCOPED_TRACE(legacy ? "fc1 named ffn_down" : "fc1 named ffn_up");
    GgufBuilder mmproj = MmprojGgufBuilder(spec, kF32, legacy);
    mmproj.U32("clip.vision.preproc_image_size", 3 * spec.vision->image_size);
    ModelSpec got;
    const Status s = ImportPair(TextGgufOf(spec), mmproj.Build(), &got);
    ASSERT_TRUE(s.ok()) << s.message();
    ExpectSameTower(spec, got);
    const ImageProcessorConfig& p = got.vision->processor;
    EXPECT_EQ(p.layout, ImageLayout::kSplitTiles);
    EXPECT_EQ(p.tile_size, static_cast<int>(spec.vision->image_size));
    EXPECT_EQ(p.longest_edge, 3 * p.tile_size);
    EXPECT_EQ(p.resample, ResampleFilter::kLanczos);
    EXPECT_TRUE(p.alpha_over_white);
    EXPECT_STREQ(got.vision->prompt.around.c_str(), "<fake_token_around_image>");
    EXPECT_STREQ(got.vision->prompt.global_token.c_str(), "<global-img>");
    EXPECT_TRUE(CheckSpecTensors(got).ok());
  }
  // Without preproc_image_size: Idefics3ImageProcessor's 4 tiles.
  ModelSpec got;
  ASSERT_TRUE(
      ImportPair(TextGgufOf(spec), MmprojGgufBuilder(spec, kF32).Build(), &got).ok());
  EXPECT_EQ(got.vision->processor.longest_edge,
            4 * static_cast<int>(spec.vision->image_size));
}

TEST(GgufMmprojTest, HalfMatricesStayHalfAndTheTransposeIsExact) {
  const ModelSpec spec = VisionSpec(false);
  ModelSpec got;
  const Status s =
      ImportPair(TextGgufOf(spec), MmprojGgufBuilder(spec, kF16).Build(), &got);
  ASSERT_TRUE(s.ok()) << s.message();
  const TensorSpec& proj = Find(got, names::kPoolProjector);
  EXPECT_EQ(proj.dtype, DType::kF16);
  const std::vector<float>& want = ValuesOf(spec, names::kPoolProjector);
  ASSERT_EQ(proj.values.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(proj.values[i], kernels::HalfToFloat(kernels::FloatToHalf(want[i]))) << i;
  }
  EXPECT_EQ(Find(got, "v.blk.0.attn_q.weight").dtype, DType::kF16);
  EXPECT_TRUE(CheckSpecTensors(got).ok());
}

TEST(GgufMmprojTest, ATextModelWithoutTheImageTokenIsRefused) {
  ModelSpec spec = VisionSpec(false);
  const std::string mmproj = MmprojGgufBuilder(spec, kF32).Build();
  // The text file's tokenizer loses its image token: another model's projector.
  ModelSpec text = spec;
  for (std::string& piece : text.tokenizer.pieces) {
    if (piece == "<image_soft_token>") piece = "<other>";
  }
  for (TokenizerSpec::Added& a : text.tokenizer.added) {
    if (a.text == "<image_soft_token>") a.text = "<other>";
  }
  ModelSpec got;
  const Status s = ImportPair(TextGgufOf(text), mmproj, &got);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("no added token '<image_soft_token>'"),
            std::string::npos)
      << s.message();
}

TEST(GgufMmprojTest, MalformedProjectorsAreRefusedByName) {
  const ModelSpec gemma = VisionSpec(false), idefics = VisionSpec(true);
  const std::string text = TextGgufOf(gemma);
  struct Case {
    const char* what;
    GgufBuilder file;
    const char* message;
  };
  std::vector<Case> cases;
  auto gemma_with = [&](auto edit) {
    GgufBuilder b = MmprojGgufBuilder(gemma, kF32);
    edit(b);
    return b;
  };
  cases.push_back({"llava", gemma_with([](GgufBuilder& b) {
                     b.Remove("clip.projector_type").Str("clip.projector_type", "mlp");
                   }),
                   "clip.projector_type 'mlp'"});
  cases.push_back({"no type",
                   gemma_with([](GgufBuilder& b) { b.Remove("clip.projector_type"); }),
                   "clip.projector_type"});
  cases.push_back({"feature layer", gemma_with([](GgufBuilder& b) {
                     b.I32s("clip.vision.feature_layer", {3});
                   }),
                   "clip.vision.feature_layer"});
  cases.push_back({"audio", gemma_with([](GgufBuilder& b) {
                     b.Bool("clip.has_audio_encoder", true);
                   }),
                   "audio encoder"});
  cases.push_back({"minicpmv",
                   gemma_with([](GgufBuilder& b) { b.I32("clip.minicpmv_version", 2); }),
                   "clip.minicpmv_version"});
  cases.push_back({"silu",
                   gemma_with([](GgufBuilder& b) { b.Bool("clip.use_silu", true); }),
                   "clip.use_silu"});
  cases.push_back(
      {"no tower", gemma_with([](GgufBuilder& b) {
         b.Remove("clip.has_vision_encoder").Bool("clip.has_vision_encoder", false);
       }),
       "has_vision_encoder is false"});
  cases.push_back({"missing",
                   gemma_with([](GgufBuilder& b) { b.Remove("v.blk.1.attn_k.bias"); }),
                   "no tensor \"v.blk.1.attn_k.bias\""});
  cases.push_back({"extra", gemma_with([](GgufBuilder& b) {
                     b.Tensor("v.class_embd", {32}, kF32,
                              testing::F32Bytes(std::vector<float>(32, 0.0f)));
                   }),
                   "v.class_embd"});
  cases.push_back({"misshapen", gemma_with([](GgufBuilder& b) {
                     b.Remove("v.post_ln.bias")
                         .Tensor("v.post_ln.bias", {31}, kF32,
                                 testing::F32Bytes(std::vector<float>(31, 0.0f)));
                   }),
                   "v.post_ln.bias"});
  cases.push_back(
      {"mean", gemma_with([](GgufBuilder& b) {
         b.Remove("clip.vision.image_mean").F32s("clip.vision.image_mean", {0.5f, 0.5f});
       }),
       "image_mean holds 2 values"});
  cases.push_back({"std", gemma_with([](GgufBuilder& b) {
                     b.Remove("clip.vision.image_std")
                         .F32s("clip.vision.image_std", {0.5f, 0.0f, 0.5f});
                   }),
                   "image_std[1] is 0"});
  cases.push_back(
      {"width", gemma_with([](GgufBuilder& b) {
         b.Remove("clip.vision.projection_dim").U32("clip.vision.projection_dim", 63);
       }),
       "projection_dim 63"});
  cases.push_back({"heads", gemma_with([](GgufBuilder& b) {
                     b.Remove("clip.vision.attention.head_count")
                         .U32("clip.vision.attention.head_count", 3);
                   }),
                   "3 heads"});
  cases.push_back({"patch", gemma_with([](GgufBuilder& b) {
                     b.Remove("clip.vision.patch_size").U32("clip.vision.patch_size", 5);
                   }),
                   "patch_size 5"});
  cases.push_back({"pool", gemma_with([](GgufBuilder& b) {
                     b.Remove("clip.vision.projector.scale_factor")
                         .U32("clip.vision.projector.scale_factor", 3);
                   }),
                   "scale_factor 3"});
  cases.push_back(
      {"zero", gemma_with([](GgufBuilder& b) {
         b.Remove("clip.vision.block_count").U32("clip.vision.block_count", 0);
       }),
       "clip.vision.block_count"});
  GgufBuilder huge = MmprojGgufBuilder(idefics, kF32);
  huge.U32("clip.vision.preproc_image_size", 40000);
  cases.push_back({"longest edge", huge, "longest_edge 40000"});
  GgufBuilder shuffle = MmprojGgufBuilder(idefics, kF32);
  shuffle.Remove("mm.model.fc.weight");
  cases.push_back({"no connector", shuffle, "no tensor \"mm.model.fc.weight\""});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ModelSpec got;
    const Status s = ImportPair(text, c.file.Build(), &got);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace ember::tools
