// Hugging Face import: a tiny GPT-2 directory written here converts with the right
// layout (Conv1D transposed, c_attn split), model_type ember reads every Config field,
// and every kind of bad directory gets an error naming what is wrong.
#include "tools/convert/hf/hf_import.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/tensor_names.h"
#include "testing/testing.h"
#include "tools/convert/hf/hf_test_util.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/util/json_util.h"

namespace ember::tools {
namespace {

using testing::AddTensor;
using testing::Tensors;
using testing::Utf8;
using testing::WriteSafetensors;
using testing::WriteText;

constexpr uint64_t kEmbd = 4, kPositions = 6, kVocab = 258;

Tensors Gpt2Tensors() {
  Tensors t;
  auto add = [&](const std::string& name, std::vector<uint64_t> shape) {
    AddTensor(&t, name, shape);
  };
  const uint64_t E = kEmbd;
  add("wte.weight", {kVocab, E});
  add("wpe.weight", {kPositions, E});
  add("h.0.ln_1.weight", {E});
  add("h.0.ln_1.bias", {E});
  add("h.0.attn.c_attn.weight", {E, 3 * E});
  add("h.0.attn.c_attn.bias", {3 * E});
  add("h.0.attn.c_proj.weight", {E, E});
  add("h.0.attn.c_proj.bias", {E});
  add("h.0.ln_2.weight", {E});
  add("h.0.ln_2.bias", {E});
  add("h.0.mlp.c_fc.weight", {E, 4 * E});
  add("h.0.mlp.c_fc.bias", {4 * E});
  add("h.0.mlp.c_proj.weight", {4 * E, E});
  add("h.0.mlp.c_proj.bias", {E});
  add("h.0.attn.bias", {1, 1, kPositions, kPositions});  // mask buffer: ignored
  add("ln_f.weight", {E});
  add("ln_f.bias", {E});
  return t;
}

class HfImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ember_hf_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    config_ = {
        {"model_type", "gpt2"}, {"n_embd", kEmbd},           {"n_layer", 1},
        {"n_head", 2},          {"n_positions", kPositions}, {"vocab_size", kVocab},
        {"bos_token_id", 257},  {"eos_token_id", 257}};
    tensors_ = Gpt2Tensors();
    Json vocab = Json::object();
    for (uint32_t b = 0; b < 256; ++b)
      vocab[ByteLevelEncode(std::string(1, static_cast<char>(b)))] = b;
    vocab[ByteLevelEncode("ab")] = 256;
    vocab["<|endoftext|>"] = 257;
    WriteText(dir_ + "/vocab.json", vocab.dump());
    WriteText(dir_ + "/merges.txt", "#version: 0.2\na b\n");
  }
  void TearDown() override {
    for (const char* f :
         {"config.json", "model.safetensors", "vocab.json", "merges.txt",
          "tokenizer.json", "tokenizer_config.json", "pytorch_model.bin",
          "model.safetensors.index.json", "generation_config.json", "out.ember",
          "modules.json", "1_Pooling/config.json"}) {
      unlink((dir_ + "/" + f).c_str());
    }
    rmdir((dir_ + "/1_Pooling").c_str());
    rmdir(dir_.c_str());
  }
  Status Import(ModelSpec* spec) {
    WriteText(dir_ + "/config.json", config_.dump());
    WriteSafetensors(dir_ + "/model.safetensors", tensors_);
    return ImportHf(dir_, spec);
  }
  // The directory imports, but WriteModel refuses it with the loader's message (which
  // holds `reason`) and writes nothing.
  void ExpectImportedButNotWritten(const std::string& reason) {
    ModelSpec spec;
    Status s = Import(&spec);
    ASSERT_TRUE(s.ok()) << s.message();
    const std::string out = dir_ + "/out.ember";
    s = WriteModel(spec, out);
    const std::string message = s.message();
    EXPECT_EQ(
        message.rfind("refusing to write '" + out + "': the loader would reject it: ", 0),
        0u)
        << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
    EXPECT_NE(access(out.c_str(), F_OK), 0) << out << " was written";
  }
  void ExpectError(const char* fragment) {
    ModelSpec spec;
    const Status s = Import(&spec);
    ASSERT_FALSE(s.ok()) << "expected an error with '" << fragment << "'";
    EXPECT_NE(std::string(s.message()).find(fragment), std::string::npos) << s.message();
  }

  std::string dir_;
  Json config_;
  Tensors tensors_;
};

const TensorSpec* FindTensor(const ModelSpec& spec, const std::string& name) {
  for (const TensorSpec& t : spec.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST_F(HfImportTest, Gpt2LayoutAndTokenizer) {
  ModelSpec spec;
  const Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  const ModelConfig& c = spec.config;
  EXPECT_EQ(c.d_model, kEmbd);
  EXPECT_EQ(c.head_dim, 2u);
  EXPECT_EQ(c.ffn_dim, 4 * kEmbd);
  EXPECT_EQ(c.norm, NormKind::kLayerNorm);
  EXPECT_EQ(c.activation, Activation::kGeluTanh);
  EXPECT_EQ(c.positions, PositionKind::kLearned);
  EXPECT_TRUE(c.qkv_bias && c.out_bias && c.ffn_bias && c.tied_classifier);
  // c_attn is (in, 3 * out): ember's K weight (r, c) is c_attn (c, E + r).
  const auto& c_attn = tensors_["h.0.attn.c_attn.weight"].second;
  const TensorSpec* wk = FindTensor(spec, names::LayerName(names::kAttnK, 0));
  ASSERT_NE(wk, nullptr);
  EXPECT_EQ(wk->shape, (std::vector<uint64_t>{kEmbd, kEmbd}));
  for (uint64_t r = 0; r < kEmbd; ++r) {
    for (uint64_t col = 0; col < kEmbd; ++col) {
      EXPECT_EQ(wk->values[r * kEmbd + col], c_attn[col * 3 * kEmbd + kEmbd + r]);
    }
  }
  const TensorSpec* bv = FindTensor(spec, names::LayerName(names::kAttnVBias, 0));
  ASSERT_NE(bv, nullptr);
  EXPECT_EQ(bv->values[0], tensors_["h.0.attn.c_attn.bias"].second[2 * kEmbd]);
  const TensorSpec* down = FindTensor(spec, names::LayerName(names::kFfnDown, 0));
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->shape, (std::vector<uint64_t>{kEmbd, 4 * kEmbd}));
  EXPECT_EQ(down->values[1], tensors_["h.0.mlp.c_proj.weight"].second[kEmbd]);

  const TokenizerSpec& tok = spec.tokenizer;
  EXPECT_EQ(tok.kind, TokenizerKind::kByteLevelBpe);
  EXPECT_EQ(tok.pieces[' '], " ");  // stored as raw bytes, not "Ġ"
  EXPECT_EQ(tok.pieces[256], "ab");
  EXPECT_EQ(tok.types[257], TokenType::kControl);
  EXPECT_EQ(tok.bos_id, 257);
  EXPECT_FALSE(tok.add_bos);
  ASSERT_EQ(tok.merges.size(), 1u);
  EXPECT_EQ(tok.merges[0].left, uint32_t{'a'});
  EXPECT_EQ(tok.merges[0].result, 256u);
}

TEST_F(HfImportTest, ChatTemplateComesFromTokenizerConfig) {
  WriteText(
      dir_ + "/tokenizer_config.json",
      R"({"chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}"})");
  ModelSpec spec;
  Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(spec.tokenizer.chat_template,
            "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}");
  // A list of named templates: the "default" one.
  WriteText(dir_ + "/tokenizer_config.json",
            R"({"chat_template": [{"name": "tool_use", "template": "T"},
                                  {"name": "default", "template": "D"}]})");
  s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(spec.tokenizer.chat_template, "D");
  WriteText(dir_ + "/tokenizer_config.json",
            R"({"chat_template": [{"name": "tool_use", "template": "T"}]})");
  ExpectError("chat_template lists no template named \"default\"");
  WriteText(dir_ + "/tokenizer_config.json", R"({"chat_template": 7})");
  ExpectError("chat_template is neither a string nor a list");
}

// tokenizer_config.json and generation_config.json fields of the wrong type (a root that
// is a number or a list once read as an empty config) are errors naming the key.
TEST_F(HfImportTest, ConfigFilesOfTheWrongTypeAreErrors) {
  const struct {
    const char* file;
    const char* text;
    const char* message;  // null: imports
  } cases[] = {
      {"tokenizer_config.json", "7", "tokenizer_config.json: not a JSON object"},
      {"tokenizer_config.json", "[]", "tokenizer_config.json: not a JSON object"},
      {"tokenizer_config.json", R"({"chat_template": [7]})",
       "chat_template lists number, not a {name, template} object"},
      {"tokenizer_config.json", R"({"chat_template": [{"name": "default"}]})",
       "tokenizer_config.json chat_template: 'template' is missing"},
      {"tokenizer_config.json", R"({"bos_token": 5})",
       "tokenizer_config.json: 'bos_token' must be a string or {\"content\": string}"},
      {"tokenizer_config.json", R"({"eos_token": {"content": 5}})",
       "'eos_token' must be a string or {\"content\": string}"},
      {"tokenizer_config.json", R"({"pad_token": ["<pad>"]})", "'pad_token' must be"},
      {"tokenizer_config.json", R"({"pad_token": null, "bos_token": {"content": "x"}})",
       nullptr},
      {"tokenizer_config.json", R"({"add_bos_token": "yes"})",
       "tokenizer_config.json: 'add_bos_token' must be true or false"},
      {"tokenizer_config.json", R"({"added_tokens_decoder": []})",
       "added_tokens_decoder is not an object"},
      {"tokenizer_config.json", R"({"added_tokens_decoder": {"257": "<|endoftext|>"}})",
       "added_tokens_decoder: an added token is string, not an object"},
      {"generation_config.json", "[257]", "generation_config.json: not a JSON object"},
      {"generation_config.json", R"({"eos_token_id": "257"})",
       "generation_config.json: eos_token_id string is not a token id"},
      {"generation_config.json", R"({"eos_token_id": [257, [1]]})",
       "eos_token_id array is not a token id"},
  };
  for (const auto& c : cases) {
    WriteText(dir_ + "/" + c.file, c.text);
    ModelSpec spec;
    const Status s = Import(&spec);
    unlink((dir_ + "/" + c.file).c_str());
    if (!c.message) {
      EXPECT_TRUE(s.ok()) << c.text << ": " << s.message();
      continue;
    }
    EXPECT_FALSE(s.ok()) << c.text;
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos) << s.message();
  }
  // An end id nested a million lists deep is refused, not copied or printed whole.
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  WriteText(dir_ + "/generation_config.json", "{\"eos_token_id\": " + deep + "}");
  ExpectError("eos_token_id array is not a token id");
}

TEST_F(HfImportTest, UnknownModelType) {
  config_["model_type"] = "t5";
  ExpectError("model_type 't5' is not supported");
}

// sentence-transformers' modules.json: Pooling and Normalize are read; a module ember
// cannot run, a second pooling, a path out of the directory are refused by name.
TEST_F(HfImportTest, SentenceTransformersModules) {
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  };
  mkdir((dir_ + "/1_Pooling").c_str(), 0755);
  write("1_Pooling/config.json", R"({"pooling_mode_cls_token": true})");
  const std::string transformer =
      R"({"type": "sentence_transformers.models.Transformer", "path": ""})";
  const std::string pooling =
      R"({"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"})";
  write("modules.json", "[" + transformer + "," + pooling +
                            R"(, {"type": "sentence_transformers.models.Normalize"}])");
  ModelSpec spec;
  ASSERT_TRUE(Import(&spec).ok());
  EXPECT_EQ(spec.config.pooling, Pooling::kCls);
  EXPECT_TRUE(spec.config.normalize);
  write("modules.json", "[" + transformer + "," + pooling +
                            R"(, {"type": "sentence_transformers.models.Dense"}])");
  ExpectError("modules.json: sentence_transformers.models.Dense has the path ''");
  write("modules.json",
        "[" + transformer + "," + pooling +
            R"(, {"type": "sentence_transformers.models.WeightedLayerPooling"}])");
  ExpectError(
      "module 2 (sentence_transformers.models.WeightedLayerPooling) is not supported");
  write("modules.json", "[" + transformer +
                            R"(, {"type": "sentence_transformers.models.Pooling", )" +
                            R"("path": "../elsewhere"}])");
  ExpectError("has the path '../elsewhere'");
  write("modules.json", "[" + transformer + "," + pooling + "]");
  write("1_Pooling/config.json", R"({"pooling_mode_max_tokens": true})");
  ExpectError("pooling_mode_max_tokens is not supported");
}

TEST_F(HfImportTest, MissingTensor) {
  tensors_.erase("ln_f.bias");
  ExpectError("missing tensor 'ln_f.bias'");
}

TEST_F(HfImportTest, UnexpectedTensor) {
  tensors_["h.0.attn.extra"] = {{2}, {1, 2}};
  ExpectError("unexpected tensor 'h.0.attn.extra'");
}

TEST_F(HfImportTest, WrongShape) {
  tensors_["wpe.weight"] = {{kPositions + 1, kEmbd},
                            std::vector<float>((kPositions + 1) * kEmbd)};
  ExpectError("tensor 'wpe.weight' has shape (7, 4); expected (6, 4)");
}

TEST_F(HfImportTest, BadConfigValues) {
  config_["n_head"] = 3;
  ExpectError("not divisible by n_head");
  config_["n_head"] = "two";
  ExpectError("'n_head' must be an integer");
  config_.erase("n_head");
  ExpectError("'n_head' is missing");
}

TEST_F(HfImportTest, UntiedNeedsLmHead) {
  config_["tie_word_embeddings"] = false;
  ExpectError("missing tensor 'lm_head.weight'");
}

TEST_F(HfImportTest, TokenizerProblems) {
  unlink((dir_ + "/merges.txt").c_str());
  ExpectError("no tokenizer");
  WriteText(dir_ + "/merges.txt", "a q\n");  // "aq" is not a piece
  ExpectError("names a piece that is not in the vocabulary");
  WriteText(dir_ + "/merges.txt", "a b\n");
  config_["vocab_size"] = 200;  // fewer rows than the tokenizer has pieces
  tensors_["wte.weight"] = {{200, kEmbd}, std::vector<float>(200 * kEmbd)};
  ExpectError("the tokenizer has 258 pieces but the model's vocab_size is 200");
}

TEST_F(HfImportTest, NoSafetensors) {
  WriteText(dir_ + "/config.json", config_.dump());
  WriteText(dir_ + "/pytorch_model.bin", "not read");
  ModelSpec spec;
  const Status s = ImportHf(dir_, &spec);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("pickle"), std::string::npos) << s.message();
}

TEST_F(HfImportTest, ShardIndexMustNameFilesInTheDirectory) {
  WriteText(dir_ + "/config.json", config_.dump());
  WriteText(dir_ + "/model.safetensors.index.json",
            R"({"weight_map": {"wte.weight": "../../etc/passwd"}})");
  ModelSpec spec;
  const Status s = ImportHf(dir_, &spec);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("not a file name"), std::string::npos)
      << s.message();
}

TEST_F(HfImportTest, MalformedTokenizerJsonIsAnError) {
  unlink((dir_ + "/vocab.json").c_str());
  WriteText(dir_ + "/tokenizer.json", R"({"model": {"type": "BPE", "vocab": {"a": 0},)"
                                      R"( "merges": []}, "pre_tokenizer": {"type": 7}})");
  ExpectError("tokenizer.json");
  WriteText(dir_ + "/tokenizer.json", R"({"model": {"type": "Unigram"}})");
  ExpectError("tokenizer model 'Unigram' is not supported");
  WriteText(dir_ + "/tokenizer.json", R"({"model": {"type": "WordPiece"}})");
  ExpectError("model has no vocab");
}

// A bos_token_id naming a byte's piece makes it a control token: byte-level BPE then
// has no piece for that byte, which the loader refuses, so convert must not write it.
TEST_F(HfImportTest, BosOnABytePieceIsNeverWritten) {
  config_["bos_token_id"] = 'a';
  ExpectImportedButNotWritten("tokenizer: byte-level BPE has no piece for byte 0x61");
}

TEST_F(HfImportTest, APieceOf100000BytesIsNeverWritten) {
  Json vocab = Json::object();
  for (uint32_t b = 0; b < 256; ++b)
    vocab[ByteLevelEncode(std::string(1, static_cast<char>(b)))] = b;
  vocab[std::string(100000, 'a')] = 256;
  vocab["<|endoftext|>"] = 257;
  WriteText(dir_ + "/vocab.json", vocab.dump());
  WriteText(dir_ + "/merges.txt", "#version: 0.2\n");
  ExpectImportedButNotWritten("tokenizer: max_piece_bytes 100000 exceeds 256");
}

// model_type "ember" names the same fields as the file's Config table.
TEST_F(HfImportTest, EmberTypeReadsTheFamilyFields) {
  config_ = {{"model_type", "ember"},
             {"d_model", 8},
             {"n_layers", 1},
             {"n_heads", 2},
             {"head_dim", 6},
             {"ffn_dim", 8},
             {"vocab_size", kVocab},
             {"max_context", 32},
             {"rope_scaling", "yarn"},
             {"rope_scaling_factor", 4},
             {"rope_original_context", 16},
             {"rope_attention_factor", 1.5},
             {"rope_local_theta", 500},
             {"qk_norm", true},
             {"post_norms", true},
             {"embedding_scale", 2.5},
             {"attention_scale", 0.3},
             {"attn_softcap", 20},
             {"final_softcap", 10},
             {"sliding_window", 4},
             {"layer_attention", {"sliding"}},
             {"rope_freq_factors", {1, 2.5, 4}}};
  tensors_.clear();
  AddTensor(&tensors_, "token_embd.weight", {kVocab, 8});
  AddTensor(&tensors_, "output_norm.weight", {8});
  for (const char* name :
       {"attn_norm", "ffn_norm", "post_attention_norm", "post_ffw_norm"}) {
    AddTensor(&tensors_, std::string("blk.0.") + name + ".weight", {8});
  }
  for (const char* name : {"attn_q", "attn_k", "attn_v"}) {
    AddTensor(&tensors_, std::string("blk.0.") + name + ".weight", {12, 8});
  }
  AddTensor(&tensors_, "blk.0.attn_output.weight", {8, 12});
  AddTensor(&tensors_, "blk.0.attn_q_norm.weight", {6});
  AddTensor(&tensors_, "blk.0.attn_k_norm.weight", {6});
  for (const char* name : {"ffn_gate", "ffn_up"}) {
    AddTensor(&tensors_, std::string("blk.0.") + name + ".weight", {8, 8});
  }
  AddTensor(&tensors_, "blk.0.ffn_down.weight", {8, 8});
  ModelSpec spec;
  const Status s = Import(&spec);
  ASSERT_TRUE(s.ok()) << s.message();
  const ModelConfig& c = spec.config;
  EXPECT_EQ(c.rope_scaling, RopeScaling::kYarn);
  EXPECT_EQ(c.rope_original_context, 16u);
  EXPECT_EQ(c.rope_attention_factor, 1.5f);
  EXPECT_EQ(c.rope_local_theta, 500.0f);
  EXPECT_TRUE(c.qk_norm && c.post_norms);
  EXPECT_EQ(c.embedding_scale, 2.5f);
  EXPECT_EQ(c.final_softcap, 10.0f);
  EXPECT_EQ(c.layer_attention, std::vector<LayerAttention>{LayerAttention::kSliding});
  EXPECT_EQ(c.rope_freq_factors, (std::vector<float>{1, 2.5f, 4}));
  config_["layer_attention"] = {"local"};
  ExpectError("layer_attention 'local' is not one of global, sliding");
}

}  // namespace
}  // namespace ember::tools
