// Hugging Face vision towers: a tiny Idefics3 / SmolVLM directory written here imports
// its SigLIP tower, pixel-shuffle connector, tiling processor and tiled image prompt
// beside its Llama text model, and every bad tensor or config value is refused with a
// message naming it. The numbers are checked against PyTorch by
// tests/oracles/smolvlm_oracle.py (Gemma 3's tower: hf_decoders_test.cc and
// gemma_oracle.py).
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/tensor_names.h"
#include "testing/testing.h"
#include "tools/convert/hf/hf_import.h"
#include "tools/convert/hf/hf_test_util.h"
#include "tools/convert/hf/hf_tokenizer.h"

namespace ember::tools {
namespace {

using testing::AddTensor;
using testing::Tensors;
using testing::Utf8;
using testing::WriteSafetensors;
using testing::WriteText;

// Text: Llama, hidden 12, one layer of 2 heads over 1 KV head of 6, 264 rows. Vision:
// width 8 (2 heads), ffn 12, one layer, 8 x 8 pixels in patches of 2 (4 x 4 patches),
// scale_factor 2: 4 rows a tile, each 8 * 2^2 = 32 values wide before the projection.
constexpr uint64_t kVocab = 264, kText = 12, kFfn = 16, kWidth = 8, kVisionFfn = 12;
constexpr int32_t kImageToken = 259;

class HfVisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ember_hf_vision_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // Bytes, then SmolVLM's added tokens (as its tokenizer holds them).
    const char* added[] = {"<|endoftext|>", "<fake_token_around_image>",
                           "<global-img>",  "<image>",
                           "<row_1_col_1>", "<row_1_col_2>"};
    Json vocab = Json::object(), decoder = Json::object();
    for (uint32_t b = 0; b < 256; ++b) vocab[Utf8(ByteToUnicode(b))] = b;
    for (uint32_t i = 0; i < 6; ++i) {
      vocab[added[i]] = 256 + i;
      decoder[std::to_string(256 + i)] = {{"content", added[i]}, {"special", true}};
    }
    WriteText(dir_ + "/vocab.json", vocab.dump());
    WriteText(dir_ + "/merges.txt", "#version: 0.2\n");
    WriteText(dir_ + "/tokenizer_config.json",
              Json{{"added_tokens_decoder", decoder}}.dump());
    WriteText(dir_ + "/preprocessor_config.json",
              R"({"image_processor_type": "Idefics3ImageProcessor",
                  "size": {"longest_edge": 16}, "max_image_size": {"longest_edge": 8},
                  "do_image_splitting": true, "resample": 1})");
    const Json text = {{"model_type", "llama"},         {"hidden_size", kText},
                       {"intermediate_size", kFfn},     {"num_hidden_layers", 1},
                       {"num_attention_heads", 2},      {"num_key_value_heads", 1},
                       {"max_position_embeddings", 64}, {"vocab_size", kVocab},
                       {"rms_norm_eps", 1e-5}};
    config_ = {{"model_type", "smolvlm"},
               {"text_config", text},
               {"vision_config",
                {{"model_type", "smolvlm_vision"},
                 {"hidden_size", kWidth},
                 {"intermediate_size", kVisionFfn},
                 {"num_hidden_layers", 1},
                 {"num_attention_heads", 2},
                 {"image_size", 8},
                 {"patch_size", 2}}},
               {"scale_factor", 2},
               {"image_token_id", kImageToken},
               {"tie_word_embeddings", false},
               {"eos_token_id", 256}};
    const std::string m = "model.text_model.", l = m + "layers.0.";
    const uint64_t D = kText, KV = 6;
    AddTensor(&tensors_, m + "embed_tokens.weight", {kVocab, D});
    AddTensor(&tensors_, m + "norm.weight", {D});
    AddTensor(&tensors_, l + "input_layernorm.weight", {D});
    AddTensor(&tensors_, l + "post_attention_layernorm.weight", {D});
    AddTensor(&tensors_, l + "self_attn.q_proj.weight", {D, D});
    AddTensor(&tensors_, l + "self_attn.k_proj.weight", {KV, D});
    AddTensor(&tensors_, l + "self_attn.v_proj.weight", {KV, D});
    AddTensor(&tensors_, l + "self_attn.o_proj.weight", {D, D});
    AddTensor(&tensors_, l + "mlp.gate_proj.weight", {kFfn, D});
    AddTensor(&tensors_, l + "mlp.up_proj.weight", {kFfn, D});
    AddTensor(&tensors_, l + "mlp.down_proj.weight", {D, kFfn});
    AddTensor(&tensors_, "lm_head.weight", {kVocab, D});
    const std::string t = "model.vision_model.", v = t + "encoder.layers.0.";
    AddTensor(&tensors_, t + "embeddings.patch_embedding.weight", {kWidth, 3, 2, 2});
    AddTensor(&tensors_, t + "embeddings.patch_embedding.bias", {kWidth});
    AddTensor(&tensors_, t + "embeddings.position_embedding.weight", {16, kWidth});
    for (const char* norm : {"layer_norm1", "layer_norm2"}) {
      AddTensor(&tensors_, v + norm + ".weight", {kWidth});
      AddTensor(&tensors_, v + norm + ".bias", {kWidth});
    }
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
      AddTensor(&tensors_, v + "self_attn." + proj + ".weight", {kWidth, kWidth});
      AddTensor(&tensors_, v + "self_attn." + proj + ".bias", {kWidth});
    }
    AddTensor(&tensors_, v + "mlp.fc1.weight", {kVisionFfn, kWidth});
    AddTensor(&tensors_, v + "mlp.fc1.bias", {kVisionFfn});
    AddTensor(&tensors_, v + "mlp.fc2.weight", {kWidth, kVisionFfn});
    AddTensor(&tensors_, v + "mlp.fc2.bias", {kWidth});
    AddTensor(&tensors_, t + "post_layernorm.weight", {kWidth});
    AddTensor(&tensors_, t + "post_layernorm.bias", {kWidth});
    AddTensor(&tensors_, kConnector, {kText, 4 * kWidth});
  }
  void TearDown() override {
    for (const char* f :
         {"config.json", "model.safetensors", "vocab.json", "merges.txt",
          "tokenizer_config.json", "preprocessor_config.json", "processor_config.json"}) {
      unlink((dir_ + "/" + f).c_str());
    }
    rmdir(dir_.c_str());
  }

  Status Import(ModelSpec* spec) {
    WriteText(dir_ + "/config.json", config_.dump());
    WriteSafetensors(dir_ + "/model.safetensors", tensors_);
    return ImportHf(dir_, spec);
  }
  void ExpectError(const char* fragment) {
    ModelSpec spec;
    const Status s = Import(&spec);
    ASSERT_FALSE(s.ok()) << "expected an error with '" << fragment << "'";
    EXPECT_NE(std::string(s.message()).find(fragment), std::string::npos) << s.message();
  }
  static const TensorSpec* Find(const ModelSpec& spec, const std::string& name) {
    for (const TensorSpec& x : spec.tensors) {
      if (x.name == name) return &x;
    }
    ADD_FAILURE() << "no " << name;
    return nullptr;
  }

  static constexpr char kConnector[] = "model.connector.modality_projection.proj.weight";
  std::string dir_;
  Json config_;
  Tensors tensors_;
};

// The text model is Llama's under model.text_model.; the tower SigLIP's under
// model.vision_model.; the connector's (text, D scale^2) matrix copied as it lies (the
// runtime's pixel shuffle orders the rows' columns as transformers' does); the tiling
// processor and the tiled prompt over SmolVLM's tokens.
TEST_F(HfVisionTest, SmolVlmImportsTowerConnectorAndTiledPrompt) {
  ModelSpec spec;
  const Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_STREQ(spec.config.architecture, "llama");
  EXPECT_EQ(spec.config.d_model, kText);
  EXPECT_FALSE(spec.config.tied_classifier);
  ASSERT_TRUE(spec.vision.has_value());
  const VisionConfig& v = *spec.vision;
  EXPECT_EQ(v.encoder.d_model, kWidth);
  EXPECT_EQ(v.encoder.head_dim, 4u);
  EXPECT_EQ(v.encoder.max_context, 16u);
  EXPECT_EQ(v.encoder.norm_eps, 1e-6f);  // SmolVLMVisionConfig's default
  EXPECT_EQ(v.connector, ImageConnector::kPixelShuffle);
  EXPECT_EQ(v.connector_factor, 2u);
  EXPECT_EQ(v.tokens_per_image(), 4u);
  EXPECT_EQ(v.image_token_id, kImageToken);
  EXPECT_FALSE(v.image_blocks_bidirectional);  // causal, unlike Gemma 3
  EXPECT_EQ(v.processor.layout, ImageLayout::kSplitTiles);
  EXPECT_EQ(v.processor.tile_size, 8);
  EXPECT_EQ(v.processor.longest_edge, 16);
  EXPECT_EQ(v.prompt.layout, ImagePromptLayout::kTiles);
  EXPECT_EQ(v.prompt.marker, "<image>");
  EXPECT_EQ(v.prompt.token, "<image>");
  EXPECT_EQ(v.prompt.around, "<fake_token_around_image>");
  EXPECT_EQ(v.prompt.global_token, "<global-img>");
  const TensorSpec* fc = Find(spec, names::kShuffleProjector);
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->shape, (std::vector<uint64_t>{kText, 4 * kWidth}));
  EXPECT_EQ(fc->values, tensors_[kConnector].second);
  const TensorSpec* patch = Find(spec, "v.patch_embd.weight");
  ASSERT_NE(patch, nullptr);
  EXPECT_EQ(patch->shape, (std::vector<uint64_t>{kWidth, 12}));
  EXPECT_EQ(patch->values,
            tensors_["model.vision_model.embeddings.patch_embedding.weight"].second);
  const TensorSpec* head = Find(spec, names::kOutput);
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->values, tensors_["lm_head.weight"].second);
  const testing::LoadedModel m = testing::LoadSpec(spec);
  ASSERT_NE(m.model, nullptr);
  ASSERT_NE(m.model->vision(), nullptr);
  EXPECT_EQ(m.model->vision()->prompt.layout, ImagePromptLayout::kTiles);

  // model_type idefics3 reads the same; a vision_config without a model_type takes the
  // top level's.
  config_["model_type"] = "idefics3";
  config_["vision_config"].erase("model_type");
  ModelSpec idefics3;
  const Status i = Import(&idefics3);
  ASSERT_TRUE(i.ok()) << i.message();
  EXPECT_EQ(idefics3.vision->connector_factor, 2u);
}

// Idefics3ForConditionalGeneration ties lm_head by the top-level key, not text_config's.
TEST_F(HfVisionTest, TheTopLevelKeyTiesTheHead) {
  config_["text_config"]["tie_word_embeddings"] = true;
  ModelSpec untied;
  ASSERT_TRUE(Import(&untied).ok());
  EXPECT_FALSE(untied.config.tied_classifier);
  config_["tie_word_embeddings"] = true;
  ModelSpec tied;
  const Status s = Import(&tied);  // lm_head.weight ignored, as transformers ties it
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(tied.config.tied_classifier);
  config_["tie_word_embeddings"] = false;
  tensors_.erase("lm_head.weight");
  ExpectError("missing tensor 'lm_head.weight'");
}

TEST_F(HfVisionTest, MissingOrMisshapedTensorsAreRefused) {
  const auto connector = tensors_[kConnector];
  tensors_.erase(kConnector);
  ExpectError("missing tensor 'model.connector.modality_projection.proj.weight'");
  AddTensor(&tensors_, kConnector, {kText, kWidth});  // not D scale^2 wide
  ExpectError("proj.weight' has shape (12, 8); expected (12, 32)");
  tensors_[kConnector] = connector;
  AddTensor(&tensors_, "model.connector.modality_projection.proj.bias", {kText});
  ExpectError("unexpected tensor 'model.connector.modality_projection.proj.bias'");
  tensors_.erase("model.connector.modality_projection.proj.bias");
  const std::string position = "model.vision_model.embeddings.position_embedding.weight";
  AddTensor(&tensors_, position, {15, kWidth});
  ExpectError("position_embedding.weight' has shape (15, 8); expected (16, 8)");
  AddTensor(&tensors_, position, {16, kWidth});
  const std::string post = "model.vision_model.post_layernorm.weight";
  tensors_.erase(post);
  ExpectError("a smolvlm model without its vision tower (model.vision_model.*)");
}

TEST_F(HfVisionTest, BadConfigValuesAreRefused) {
  config_["scale_factor"] = 3;  // 4 x 4 patches do not fold 3 x 3
  ExpectError("scale_factor 3 does not divide the 4 x 4 patch grid");
  config_["scale_factor"] = 0;
  ExpectError("scale_factor");
  config_.erase("scale_factor");  // Idefics3Config's default: 2
  {
    ModelSpec spec;
    ASSERT_TRUE(Import(&spec).ok());
    EXPECT_EQ(spec.vision->connector_factor, 2u);
  }
  config_["image_token_id"] = kVocab;
  ExpectError("image_token_id 264 is past the text model's 264 embedding rows");
  config_["image_token_id"] = kImageToken;
  config_["vision_config"]["patch_size"] = 3;
  ExpectError("patch_size 3 does not divide image_size 8");
  config_["vision_config"]["patch_size"] = 2;
  config_["vision_config"]["num_attention_heads"] = 3;
  ExpectError("3 heads do not divide 8");
  config_["vision_config"]["num_attention_heads"] = 2;
  config_["vision_config"]["model_type"] = "siglip_vision_model";
  ExpectError("model_type 'siglip_vision_model' (idefics3_vision or smolvlm_vision)");
  config_["vision_config"]["model_type"] = "smolvlm_vision";
  config_["text_config"]["model_type"] = "mistral";
  ExpectError("text_config: model_type 'mistral'");
  config_["text_config"]["model_type"] = "llama";
  const Json text = config_["text_config"];
  config_.erase("text_config");
  ExpectError("a smolvlm model needs a text_config object");
  config_["text_config"] = text;
  // The processor's tiles must be the tower's image, its layout the model's.
  WriteText(dir_ + "/preprocessor_config.json",
            R"({"image_processor_type": "Idefics3ImageProcessor",
                "max_image_size": {"longest_edge": 16}})");
  ExpectError("the processor's tiles (16x16) are not the vision tower's image_size 8");
  WriteText(dir_ + "/preprocessor_config.json",
            R"({"image_processor_type": "SiglipImageProcessor",
                "size": {"height": 8, "width": 8}})");
  ExpectError("a fixed-size processor for a model whose prompt takes tiles");
  unlink((dir_ + "/preprocessor_config.json").c_str());
  WriteText(dir_ + "/processor_config.json", R"({"image_seq_len": 64})");
  ExpectError("image_seq_len 64, but the tower gives 4 rows a tile");
  WriteText(dir_ + "/processor_config.json",
            R"({"image_seq_len": 4, "processor_class": "SmolVLMProcessor"})");
  // Without preprocessor_config.json: Idefics3's tiles at the tower's size.
  ModelSpec spec;
  const Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(spec.vision->processor.layout, ImageLayout::kSplitTiles);
  EXPECT_EQ(spec.vision->processor.tile_size, 8);
  EXPECT_EQ(spec.vision->processor.longest_edge, 32);
}

// A tokenizer without the processor's "<image>" at image_token_id keeps the tower but no
// prompt (as Gemma 3's import does).
TEST_F(HfVisionTest, ATokenizerWithoutTheImageTokenGivesNoPrompt) {
  config_["image_token_id"] = 258;  // "<global-img>"
  ModelSpec spec;
  const Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(spec.vision.has_value());
  EXPECT_TRUE(spec.vision->prompt.marker.empty());
}

}  // namespace
}  // namespace ember::tools
