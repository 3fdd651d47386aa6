// Hugging Face decoder families: tiny directories written here map onto ember's config
// as each family's transformers code reads them (RoPE scaling, sliding layers, Gemma's
// norms and scale, Phi-3's fused tensors, end ids), and the fields ember cannot honour
// are refused with a message naming them. The numbers themselves are checked against
// PyTorch by tests/oracles/{llama3,qwen,gemma,phi3}_oracle.py.
#include <unistd.h>

#include <cmath>
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

constexpr uint64_t kVocab = 258, kLayers = 2, kHeads = 2, kKvHeads = 1, kHeadDim = 4,
                   kFfn = 12;

class HfDecodersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ember_hf_decoders_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    Json vocab = Json::object();
    for (uint32_t b = 0; b < 256; ++b) vocab[Utf8(ByteToUnicode(b))] = b;
    vocab["<|eot|>"] = 256;
    vocab["<|endoftext|>"] = 257;
    WriteText(dir_ + "/vocab.json", vocab.dump());
    WriteText(dir_ + "/merges.txt", "#version: 0.2\n");
    WriteText(dir_ + "/tokenizer_config.json",
              R"({"added_tokens_decoder": {"256": {"content": "<|eot|>", "special": true},
                  "257": {"content": "<|endoftext|>", "special": true}}})");
    Family("llama");
  }
  void TearDown() override {
    for (const char* f : {"config.json", "model.safetensors", "vocab.json", "merges.txt",
                          "tokenizer_config.json", "generation_config.json"}) {
      unlink((dir_ + "/" + f).c_str());
    }
    rmdir(dir_.c_str());
  }

  // A config and tensors of `model_type` (hidden 12, 2 layers, 2 heads over 1 KV head of
  // 4), with the family's tensors: Gemma's four norms and q/k norms, Qwen's biases,
  // Phi-3's fused projections; `prefix` before "layers." etc.
  void Family(const std::string& model_type, const std::string& prefix = "model.") {
    config_ = {{"model_type", model_type},      {"hidden_size", kHidden},
               {"intermediate_size", kFfn},     {"num_hidden_layers", kLayers},
               {"num_attention_heads", kHeads}, {"num_key_value_heads", kKvHeads},
               {"head_dim", kHeadDim},          {"max_position_embeddings", 64},
               {"vocab_size", kVocab},          {"eos_token_id", 257},
               {"tie_word_embeddings", true}};
    const bool gemma = model_type.rfind("gemma", 0) == 0;
    const bool qk_norm =
        model_type == "qwen3" || model_type == "gemma3_text" || model_type == "gemma3";
    const bool phi3 = model_type == "phi3";
    const uint64_t D = kHidden, Q = kHeads * kHeadDim, KV = kKvHeads * kHeadDim;
    tensors_.clear();
    AddTensor(&tensors_, prefix + "embed_tokens.weight", {kVocab, D});
    AddTensor(&tensors_, prefix + "norm.weight", {D});
    for (uint64_t i = 0; i < kLayers; ++i) {
      const std::string l = prefix + "layers." + std::to_string(i) + ".";
      auto add = [&](const std::string& name, std::vector<uint64_t> shape) {
        AddTensor(&tensors_, l + name, shape);
      };
      add("input_layernorm.weight", {D});
      add("post_attention_layernorm.weight", {D});
      add("self_attn.o_proj.weight", {D, Q});
      add("mlp.down_proj.weight", {D, kFfn});
      if (phi3) {
        add("self_attn.qkv_proj.weight", {Q + 2 * KV, D});
        add("mlp.gate_up_proj.weight", {2 * kFfn, D});
      } else {
        add("self_attn.q_proj.weight", {Q, D});
        add("self_attn.k_proj.weight", {KV, D});
        add("self_attn.v_proj.weight", {KV, D});
        add("mlp.gate_proj.weight", {kFfn, D});
        add("mlp.up_proj.weight", {kFfn, D});
      }
      if (model_type == "qwen2") {
        add("self_attn.q_proj.bias", {Q});
        add("self_attn.k_proj.bias", {KV});
        add("self_attn.v_proj.bias", {KV});
      }
      if (qk_norm) {
        add("self_attn.q_norm.weight", {kHeadDim});
        add("self_attn.k_norm.weight", {kHeadDim});
      }
      if (gemma) {
        add("pre_feedforward_layernorm.weight", {D});
        add("post_feedforward_layernorm.weight", {D});
      }
    }
  }

  Status Import(ModelSpec* spec) {
    WriteText(dir_ + "/config.json", config_.dump());
    WriteSafetensors(dir_ + "/model.safetensors", tensors_);
    return ImportHf(dir_, spec);
  }
  ModelConfig Imported() {
    ModelSpec spec;
    const Status s = Import(&spec);
    EXPECT_TRUE(s.ok()) << s.message();
    return spec.config;
  }
  void ExpectError(const char* fragment) {
    ModelSpec spec;
    const Status s = Import(&spec);
    ASSERT_FALSE(s.ok()) << "expected an error with '" << fragment << "'";
    EXPECT_NE(std::string(s.message()).find(fragment), std::string::npos) << s.message();
  }
  const std::vector<float>& Values(const std::string& name) {
    return tensors_[name].second;
  }

  static constexpr uint64_t kHidden = 12;
  std::string dir_;
  Json config_;
  Tensors tensors_;
};

const TensorSpec* Find(const ModelSpec& spec, const char* format, unsigned layer) {
  const std::string name = names::LayerName(format, layer);
  for (const TensorSpec& t : spec.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST_F(HfDecodersTest, RopeScalingKinds) {
  config_["rope_scaling"] = {{"rope_type", "llama3"},
                             {"factor", 8.0},
                             {"low_freq_factor", 1.0},
                             {"high_freq_factor", 4.0},
                             {"original_max_position_embeddings", 32}};
  ModelConfig c = Imported();
  EXPECT_EQ(c.rope_scaling, RopeScaling::kLlama3);
  EXPECT_EQ(c.rope_scaling_factor, 8.0f);
  EXPECT_EQ(c.rope_original_context, 32u);
  // "type" is the older spelling of "rope_type".
  config_["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  c = Imported();
  EXPECT_EQ(c.rope_scaling, RopeScaling::kLinear);
  EXPECT_EQ(c.rope_scaling_factor, 2.0f);
  // YaRN: the attention factor 0.1 ln(factor) + 1 unless given; the original context
  // defaults to max_position_embeddings.
  config_["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}};
  c = Imported();
  EXPECT_EQ(c.rope_scaling, RopeScaling::kYarn);
  EXPECT_EQ(c.rope_original_context, 64u);
  EXPECT_FLOAT_EQ(c.rope_attention_factor, 0.1f * std::log(4.0f) + 1.0f);
  EXPECT_TRUE(c.rope_yarn_truncate);
  config_["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0},
                             {"mscale", 1.0},       {"mscale_all_dim", 0.5},
                             {"beta_fast", 16},     {"truncate", false}};
  c = Imported();
  EXPECT_FLOAT_EQ(c.rope_attention_factor,
                  (0.1f * std::log(4.0f) + 1) / (0.05f * std::log(4.0f) + 1));
  EXPECT_EQ(c.rope_beta_fast, 16.0f);
  EXPECT_FALSE(c.rope_yarn_truncate);
  // transformers 5 spells theta and scaling as rope_parameters.
  config_.erase("rope_scaling");
  config_["rope_parameters"] = {
      {"rope_type", "linear"}, {"factor", 3.0}, {"rope_theta", 500000.0}};
  c = Imported();
  EXPECT_EQ(c.rope_scaling, RopeScaling::kLinear);
  EXPECT_EQ(c.rope_theta, 500000.0f);
}

TEST_F(HfDecodersTest, RopeTypesAndKeysEmberCannotHonourAreRefused) {
  config_["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
  ExpectError("rope_type 'dynamic' is not supported");
  config_["rope_scaling"] = {{"rope_type", "longrope"}, {"short_factor", {1.0, 1.0}}};
  ExpectError("longrope needs short_factor and long_factor of 2 numbers");
  config_["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}, {"foo", 1}};
  ExpectError("'foo' is not supported");
  config_["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}};
  ExpectError("'low_freq_factor' is missing");
  config_["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 0.5}};
  ExpectError("'factor' = 0.5 is outside");
  config_.erase("rope_scaling");
  config_["partial_rotary_factor"] = 0.75;
  ExpectError("partial_rotary_factor 0.75");
  config_.erase("partial_rotary_factor");
  config_["quantization_config"] = {{"quant_method", "gptq"}};
  ExpectError("quantization_config");
}

TEST_F(HfDecodersTest, WhichLayersSlide) {
  Family("mistral");
  config_["sliding_window"] = 16;
  ModelConfig c = Imported();
  EXPECT_EQ(c.sliding_window, 16u);
  EXPECT_EQ(c.layer_attention, std::vector<LayerAttention>(2, LayerAttention::kSliding));
  // MistralConfig's default window (4096) holds the whole 64-position context: global.
  config_.erase("sliding_window");
  EXPECT_FALSE(Imported().has_sliding_layers());
  config_["sliding_window"] = nullptr;
  EXPECT_FALSE(Imported().has_sliding_layers());

  Family("qwen3");
  config_["sliding_window"] = 8;
  config_["max_window_layers"] = 1;
  EXPECT_FALSE(Imported().has_sliding_layers());  // use_sliding_window defaults false
  config_["use_sliding_window"] = true;
  c = Imported();
  EXPECT_EQ(c.layer_attention, (std::vector<LayerAttention>{LayerAttention::kGlobal,
                                                            LayerAttention::kSliding}));
  config_["layer_types"] = {"sliding_attention", "full_attention"};
  c = Imported();
  EXPECT_EQ(c.layer_attention, (std::vector<LayerAttention>{LayerAttention::kSliding,
                                                            LayerAttention::kGlobal}));
  config_["layer_types"] = {"sliding_attention", "chunked_attention"};
  ExpectError("layer type 'chunked_attention' (layer 1) is not supported");
  config_["layer_types"] = {"sliding_attention"};
  ExpectError("layer_types must list 2 layer types");
  config_["layer_types"] = {"sliding_attention", 2};
  ExpectError("config.json: layer_types[1] is number, not a string");

  // Gemma 3's older configs: every sliding_window_pattern-th layer is global (6 by
  // default), the others slide and rotate with rope_local_base_freq.
  Family("gemma3_text");
  config_["sliding_window"] = 8;
  c = Imported();
  EXPECT_EQ(c.layer_attention, std::vector<LayerAttention>(2, LayerAttention::kSliding));
  EXPECT_EQ(c.rope_local_theta, 10000.0f);
  EXPECT_EQ(c.rope_theta, 1e6f);
  config_["sliding_window_pattern"] = 2;
  c = Imported();
  EXPECT_EQ(c.layer_attention, (std::vector<LayerAttention>{LayerAttention::kSliding,
                                                            LayerAttention::kGlobal}));
  // transformers 5: one RoPE per layer type.
  config_["rope_parameters"] = {
      {"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", 1e6}}},
      {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 5000.0}}}};
  c = Imported();
  EXPECT_EQ(c.rope_scaling, RopeScaling::kLinear);
  EXPECT_EQ(c.rope_local_theta, 5000.0f);
  EXPECT_EQ(c.mask, AttentionMask::kCausal);
  config_["use_bidirectional_attention"] = true;  // EmbeddingGemma
  EXPECT_EQ(Imported().mask, AttentionMask::kBidirectional);
  Family("qwen3");  // read for Gemma 3 alone
  config_["use_bidirectional_attention"] = true;
  ExpectError("use_bidirectional_attention is read for Gemma 3");
  // Gemma3TextModel's tensors, without "model.".
  Family("gemma3_text", "");
  EXPECT_EQ(Imported().n_layers, static_cast<uint32_t>(kLayers));
}

TEST_F(HfDecodersTest, GemmaNormsAndEmbeddingScale) {
  Family("gemma3_text");
  config_["sliding_window"] = 8;
  config_["query_pre_attn_scalar"] = 16;
  config_["hidden_act"] = "silu";  // Gemma reads hidden_activation only
  ModelSpec spec;
  config_["torch_dtype"] = "bfloat16";
  ASSERT_TRUE(Import(&spec).ok());
  const ModelConfig& c = spec.config;
  EXPECT_TRUE(c.post_norms && c.qk_norm && c.tied_classifier);
  EXPECT_EQ(c.activation, Activation::kGeluTanh);
  EXPECT_EQ(c.attention_scale, 0.25f);
  EXPECT_EQ(c.attn_softcap, 0.0f);
  // sqrt(12) = 3.4641 in the model's dtype: 3.46875 (bfloat16), 3.46484375 (float16).
  EXPECT_EQ(c.embedding_scale, 3.46875f);
  // The file stores 1 + w of Gemma's x / rms * (1 + w); post_attention_layernorm is the
  // attention output's norm, pre_feedforward_layernorm the FFN's input norm.
  const TensorSpec* post = Find(spec, names::kAttnPostNorm, 1);
  ASSERT_NE(post, nullptr);
  EXPECT_EQ(post->values[3],
            Values("model.layers.1.post_attention_layernorm.weight")[3] + 1.0f);
  const TensorSpec* ffn_norm = Find(spec, names::kFfnNorm, 0);
  ASSERT_NE(ffn_norm, nullptr);
  EXPECT_EQ(ffn_norm->values[0],
            Values("model.layers.0.pre_feedforward_layernorm.weight")[0] + 1.0f);
  const TensorSpec* k_norm = Find(spec, names::kAttnKNorm, 0);
  ASSERT_NE(k_norm, nullptr);
  EXPECT_EQ(k_norm->values[2],
            Values("model.layers.0.self_attn.k_norm.weight")[2] + 1.0f);
  config_["torch_dtype"] = "float16";
  EXPECT_EQ(Imported().embedding_scale, 3.46484375f);
  config_.erase("torch_dtype");  // the stored embedding's dtype: F32 here
  EXPECT_EQ(Imported().embedding_scale, std::sqrt(12.0f));

  // Gemma 2: soft-capping defaults (attention 50, final 30), no qk-norm.
  Family("gemma2");
  config_["sliding_window"] = 8;
  ModelConfig g2 = Imported();
  EXPECT_EQ(g2.attn_softcap, 50.0f);
  EXPECT_EQ(g2.final_softcap, 30.0f);
  EXPECT_FALSE(g2.qk_norm);
  EXPECT_EQ(g2.rope_local_theta, 0.0f);  // one RoPE for all layers
}

TEST_F(HfDecodersTest, Gemma3MultimodalTakesTheLanguageModel) {
  Family("gemma3", "model.language_model.");
  Json text = config_;
  text["model_type"] = "gemma3_text";
  text["sliding_window"] = 8;
  config_ = {
      {"model_type", "gemma3"}, {"text_config", text}, {"eos_token_id", {257, 256}}};
  AddTensor(&tensors_, "model.vision_tower.vision_model.post_layernorm.weight", {4});
  AddTensor(&tensors_, "model.multi_modal_projector.mm_soft_emb_norm.weight", {4});
  ModelSpec spec;
  const Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(spec.config.qk_norm && spec.config.post_norms);
  EXPECT_EQ(spec.tokenizer.stop_ids, (std::vector<int32_t>{257, 256}));
  config_.erase("text_config");
  ExpectError("a gemma3 model needs a text_config object");
  config_["text_config"] = Json::array({text});
  ExpectError("a gemma3 model needs a text_config object");
}

// With a vision_config, the SigLIP tower and the projector come along: the conv weight
// flattened as it lies, Gemma's norm stored as 1 + w, the projection (D, text)
// transposed.
TEST_F(HfDecodersTest, Gemma3VisionTowerIsImported) {
  Family("gemma3", "model.language_model.");
  Json text = config_;
  text["model_type"] = "gemma3_text";
  text["sliding_window"] = 8;
  config_ = {{"model_type", "gemma3"},
             {"text_config", text},
             {"vision_config",
              {{"model_type", "siglip_vision_model"},
               {"hidden_size", 8},
               {"intermediate_size", 12},
               {"num_hidden_layers", 1},
               {"num_attention_heads", 2},
               {"image_size", 8},
               {"patch_size", 2}}},
             {"mm_tokens_per_image", 4},
             {"image_token_index", 250},
             {"eos_token_id", {257, 256}}};
  const std::string t = "model.vision_tower.vision_model.";
  const std::string p = "model.multi_modal_projector.";
  AddTensor(&tensors_, t + "embeddings.patch_embedding.weight", {8, 3, 2, 2});
  AddTensor(&tensors_, t + "embeddings.patch_embedding.bias", {8});
  AddTensor(&tensors_, t + "embeddings.position_embedding.weight", {16, 8});
  const std::string l = t + "encoder.layers.0.";
  for (const char* norm : {"layer_norm1", "layer_norm2"}) {
    AddTensor(&tensors_, l + norm + ".weight", {8});
    AddTensor(&tensors_, l + norm + ".bias", {8});
  }
  for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
    AddTensor(&tensors_, l + "self_attn." + proj + ".weight", {8, 8});
    AddTensor(&tensors_, l + "self_attn." + proj + ".bias", {8});
  }
  AddTensor(&tensors_, l + "mlp.fc1.weight", {12, 8});
  AddTensor(&tensors_, l + "mlp.fc1.bias", {12});
  AddTensor(&tensors_, l + "mlp.fc2.weight", {8, 12});
  AddTensor(&tensors_, l + "mlp.fc2.bias", {8});
  AddTensor(&tensors_, t + "post_layernorm.weight", {8});
  AddTensor(&tensors_, t + "post_layernorm.bias", {8});
  AddTensor(&tensors_, p + "mm_soft_emb_norm.weight", {8});
  AddTensor(&tensors_, p + "mm_input_projection_weight", {8, kHidden});
  ModelSpec spec;
  const Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(spec.vision.has_value());
  const VisionConfig& v = *spec.vision;
  EXPECT_EQ(v.encoder.d_model, 8u);
  EXPECT_EQ(v.encoder.head_dim, 4u);
  EXPECT_EQ(v.encoder.max_context, 16u);
  EXPECT_EQ(v.encoder.activation, Activation::kGeluTanh);
  EXPECT_EQ(v.encoder.norm_eps, 1e-6f);  // SiglipVisionConfig's default
  EXPECT_EQ(v.connector, ImageConnector::kAveragePool);
  EXPECT_EQ(v.connector_factor, 2u);  // 4 x 4 patches pooled to 2 x 2
  EXPECT_EQ(v.image_token_id, 250);
  EXPECT_TRUE(v.image_blocks_bidirectional);
  auto find = [&](const std::string& name) -> const TensorSpec* {
    for (const TensorSpec& x : spec.tensors) {
      if (x.name == name) return &x;
    }
    ADD_FAILURE() << "no " << name;
    return nullptr;
  };
  const TensorSpec* patch = find("v.patch_embd.weight");
  ASSERT_NE(patch, nullptr);
  EXPECT_EQ(patch->shape, (std::vector<uint64_t>{8, 12}));
  EXPECT_EQ(patch->values, Values(t + "embeddings.patch_embedding.weight"));
  const TensorSpec* up = find("v.blk.0.ffn_up.weight");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->values, Values(l + "mlp.fc1.weight"));
  const TensorSpec* norm = find("mm.soft_emb_norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->values[3], Values(p + "mm_soft_emb_norm.weight")[3] + 1.0f);
  const TensorSpec* proj = find("mm.input_projection.weight");
  ASSERT_NE(proj, nullptr);
  EXPECT_EQ(proj->shape, (std::vector<uint64_t>{kHidden, 8}));
  // Row r, column c of ember's (text, D) is HF's (D, text) at (c, r).
  EXPECT_EQ(proj->values[5 * 8 + 3],
            Values(p + "mm_input_projection_weight")[3 * kHidden + 5]);
  const testing::LoadedModel m = testing::LoadSpec(spec);
  ASSERT_NE(m.model, nullptr);
  ASSERT_NE(m.model->vision(), nullptr);
  EXPECT_EQ(m.model->vision()->tokens_per_image(), 4u);

  config_["mm_tokens_per_image"] = 5;
  ExpectError("5 image tokens from 4 x 4 patches");
  config_["mm_tokens_per_image"] = 4;
  config_["vision_config"]["vision_use_head"] = true;
  ExpectError("vision_use_head");
  config_["vision_config"]["vision_use_head"] = false;
  tensors_.erase(p + "mm_soft_emb_norm.weight");
  ExpectError("no projector");
}

TEST_F(HfDecodersTest, Phi3FusedProjectionsAreSplitByRows) {
  Family("phi3");
  ModelSpec spec;
  const Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  const uint64_t D = kHidden, Q = kHeads * kHeadDim, KV = kKvHeads * kHeadDim;
  const std::vector<float>& qkv = Values("model.layers.1.self_attn.qkv_proj.weight");
  const TensorSpec* v = Find(spec, names::kAttnV, 1);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->shape, (std::vector<uint64_t>{KV, D}));
  EXPECT_EQ(v->values[5], qkv[(Q + KV) * D + 5]);  // rows q, then k, then v
  const std::vector<float>& gate_up = Values("model.layers.0.mlp.gate_up_proj.weight");
  const TensorSpec* gate = Find(spec, names::kFfnGate, 0);
  const TensorSpec* up = Find(spec, names::kFfnUp, 0);
  ASSERT_TRUE(gate && up);
  EXPECT_EQ(gate->values[7], gate_up[7]);  // rows gate, then up
  EXPECT_EQ(up->values[7], gate_up[kFfn * D + 7]);
  EXPECT_EQ(spec.config.norm_eps, 1e-5f);  // Phi3Config's default
}

// Phi-3.5 and Phi-4-mini: LongRoPE's short and long factors over the original context
// (its "su" and "yarn" names included), and RoPE on part of each head.
TEST_F(HfDecodersTest, Phi3LongRopeAndPartialRotary) {
  Family("phi3");
  config_["max_position_embeddings"] = 64;
  config_["original_max_position_embeddings"] = 16;
  config_["partial_rotary_factor"] = 0.5;  // 2 of head_dim 4: one pair
  config_["rope_scaling"] = {
      {"type", "su"}, {"short_factor", {1.5}}, {"long_factor", {6.0}}};
  ModelConfig c = Imported();
  EXPECT_EQ(c.rope_scaling, RopeScaling::kLongRope);
  EXPECT_EQ(c.rope_dim, 2u);
  EXPECT_EQ(c.rope_original_context, 16u);
  EXPECT_EQ(c.rope_freq_factors, std::vector<float>{1.5f});
  EXPECT_EQ(c.rope_long_freq_factors, std::vector<float>{6.0f});
  // factor 64 / 16 = 4: sqrt(1 + ln 4 / ln 16) = sqrt(1.5).
  EXPECT_FLOAT_EQ(c.rope_attention_factor, std::sqrt(1.5f));
  config_["rope_scaling"]["long_factor"] = {6.0, 7.0};
  ExpectError("longrope needs short_factor and long_factor of 1 numbers");
  config_["partial_rotary_factor"] = 0.3;  // 1.2 values
  ExpectError("partial_rotary_factor 0.3");
  Family("llama");
  config_["partial_rotary_factor"] = 0.5;
  ExpectError("not supported for llama");
}

TEST_F(HfDecodersTest, QwenBiasesAndHeadDim) {
  Family("qwen2");
  tensors_.erase("model.layers.0.self_attn.k_proj.bias");
  ExpectError("missing tensor 'model.layers.0.self_attn.k_proj.bias'");
  Family("qwen2");
  const ModelConfig c = Imported();
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_FALSE(c.out_bias);  // Qwen2's o_proj has none
  Family("qwen3");
  config_.erase("head_dim");  // Qwen3Config's default: 128
  ExpectError(
      "'model.layers.0.self_attn.q_proj.weight' has shape (8, 12); expected (256, 12)");
}

TEST_F(HfDecodersTest, EveryEndIdStops) {
  config_["eos_token_id"] = {257, 256};
  WriteText(dir_ + "/generation_config.json", R"({"eos_token_id": [256, 100]})");
  ModelSpec spec;
  const Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(spec.tokenizer.eos_id, 257);
  EXPECT_EQ(spec.tokenizer.stop_ids, (std::vector<int32_t>{257, 256, 100}));
  EXPECT_EQ(spec.tokenizer.types[100], TokenType::kNormal);  // 'd' still tokenizes
  WriteText(dir_ + "/generation_config.json", R"({"eos_token_id": [300]})");
  ExpectError("eos_token_id 300 is not a token id below 258");
}

// A special token past the embedding's rows (Gemma 3's <image_soft_token>, 262144, with
// a 262144-row text model) is left out; a normal piece there is still an error.
TEST_F(HfDecodersTest, SpecialTokensPastTheEmbeddingAreLeftOut) {
  config_["vocab_size"] = 257;
  config_["eos_token_id"] = 256;
  tensors_["model.embed_tokens.weight"] = {{257, kHidden},
                                           std::vector<float>(257 * kHidden, 0.5f)};
  ModelSpec spec;
  const Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(spec.tokenizer.pieces.size(), 257u);
  EXPECT_EQ(spec.tokenizer.eos_id, 256);
  WriteText(dir_ + "/tokenizer_config.json", "{}");  // 257 is no special token now
  config_["eos_token_id"] = 255;
  ExpectError("the tokenizer has 258 pieces but the model's vocab_size is 257");
}

}  // namespace
}  // namespace ember::tools
