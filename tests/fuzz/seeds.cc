// Writes the fuzzers' seed corpora from small models ember makes itself: run by the
// build as `fuzz_seeds OUT_DIR`, it fills OUT_DIR/<fuzzer>/ for each harness.
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "runtime/chat/prompt_state.h"
#include "runtime/model/tensor_names.h"
#include "runtime/vision/image_decode_test_data.h"
#include "testing/testing.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/prompt_state_sessions.h"
#include "tools/convert/bake.h"
#include "tools/convert/dtype_policy.h"
#include "tools/convert/gguf/gguf_builder.h"
#include "tools/template/chat_program.h"
#include "tools/util/json_util.h"

namespace ember::fuzz {
// seeds_text.cc: the template, tokenizer_json and c_api seeds.
void AddTextSeeds(std::vector<std::pair<std::string, std::string>>* files);
}  // namespace ember::fuzz

namespace {

using ember::fuzz::JoinParts;

bool Write(const std::string& path, const std::string& bytes) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) {
    perror(path.c_str());
    return false;
  }
  const bool ok = fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return fclose(f) == 0 && ok;
}

std::string Str(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

std::string Serialized(const ember::ModelSpec& spec) {
  std::vector<uint8_t> bytes;
  const ember::Status s = ember::SerializeModel(spec, &bytes);
  if (!s.ok()) {
    fprintf(stderr, "fuzz_seeds: %s\n", s.message());
    exit(1);
  }
  return Str(bytes);
}

// prompt_state: states saved from each of the fuzzer's sessions after a few tokens (a
// ring wrapped after 15), each restored whole and in part into its own session, and
// session 0's f32 states into the others (converted to q8 and f16 rows, or refused).
void AddPromptStates(std::vector<std::pair<std::string, std::string>>* files) {
  const ember::testing::LoadedModel loaded =
      ember::testing::LoadSpec(ember::fuzz::PromptStateModelSpec());
  if (!loaded.model) exit(1);
  for (int i = 0; i < ember::fuzz::kNumStateSessions; ++i) {
    for (const size_t n : {size_t{3}, size_t{9}, size_t{15}}) {
      auto s = ember::Session::Create(*loaded.model,
                                      ember::fuzz::PromptStateSessionOptions(i));
      if (!s.ok()) exit(1);
      const std::vector<int32_t> tokens = ember::testing::SpreadTokens(n, 41 + i);
      if (!s->Prefill(tokens.data(), n).ok()) exit(1);
      std::string state(ember::PromptStateBytes(*s), '\0');
      size_t bytes = 0;
      if (!ember::SavePromptState(*s, nullptr, state.data(), state.size(), &bytes).ok()) {
        exit(1);
      }
      const std::string name =
          "prompt_state/session" + std::to_string(i) + "_" + std::to_string(n);
      files->push_back({name, static_cast<char>(i) + state});
      files->push_back({name + "_first2", static_cast<char>(i | 2 << 2) + state});
      if (i == 0) {
        for (int into = 1; into < ember::fuzz::kNumStateSessions; ++into) {
          files->push_back(
              {name + "_into" + std::to_string(into), static_cast<char>(into) + state});
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fuzz_seeds OUT_DIR\n");
    return 2;
  }
  const std::string out = argv[1];
  std::vector<std::pair<std::string, std::string>> files;  // path under out, bytes

  // model: the small model in every weight type (the converter's dtype policy), and one
  // in a GPT-2-like configuration (LayerNorm, learned positions, biases, GELU, untied
  // classifier).
  using ember::ModelSpec;
  const ModelSpec small = ember::fuzz::SmallModelSpec();
  files.push_back({"model/small_f32.ember", Serialized(small)});
  for (ember::DType dtype :
       {ember::DType::kF16, ember::DType::kBF16, ember::DType::kQ8, ember::DType::kQ4}) {
    ModelSpec typed = small;
    if (!ember::tools::ChooseDTypes(dtype, {}, &typed).ok()) exit(1);
    files.push_back({std::string("model/small_") + ember::DTypeName(dtype) + ".ember",
                     Serialized(typed)});
  }
  {
    // A chat template (Qwen3-like: namespace, reversed loops, string methods) and a baked
    // prompt: the loader's checks of both, and the render.
    ModelSpec chat = small;
    chat.tokenizer.chat_template =
        "{%- set ns = namespace(last=messages|length - 1) %}"
        "{%- for m in messages[::-1] %}{% if m.role == 'user' and ns.last == "
        "messages|length"
        " - 1 %}{% set ns.last = (messages|length - 1) - loop.index0 %}{% endif %}"
        "{% endfor %}{%- for m in messages %}{{ '<' ~ m.role ~ '>' ~ m.content.split("
        "'</think>')[-1].strip() | trim ~ ('*' if loop.index0 == ns.last) }}\n{% endfor "
        "%}"
        "{%- if add_generation_prompt %}<assistant>{% endif %}";
    if (!ember::tools::CompileChatTemplate(&chat.tokenizer).ok()) exit(1);
    files.push_back({"model/small_chat.ember", Serialized(chat)});
    ember::tools::BakeRequest bake;
    bake.text = "Hello";
    if (!ember::tools::BakeSpec(bake, &chat).ok()) exit(1);
    files.push_back({"model/small_chat_baked.ember", Serialized(chat)});
  }
  {
    ModelSpec g = small;
    ember::ModelConfig& c = g.config;
    c.norm = ember::NormKind::kLayerNorm;
    c.ffn = ember::FfnKind::kPlain;
    c.activation = ember::Activation::kGeluTanh;
    c.positions = ember::PositionKind::kLearned;
    c.qkv_bias = c.out_bias = c.ffn_bias = true;
    c.tied_classifier = false;
    c.output_bias = true;
    g.tensors.clear();
    const uint64_t D = 8, F = 8, V = 260, T = 16;
    auto add = [&](const std::string& n, std::vector<uint64_t> shape) {
      uint64_t count = 1;
      for (uint64_t d : shape) count *= d;
      std::vector<float> v(count);
      for (uint64_t i = 0; i < count; ++i)
        v[i] = 0.05f * static_cast<float>(i % 11) - 0.2f;
      g.tensors.push_back({n, shape, v, ember::DType::kF32, {}});
    };
    namespace names = ember::names;
    add(names::kTokEmbedding, {V, D});
    add(names::kPosEmbedding, {T, D});
    add(names::kOutputNorm, {D});
    add(names::kOutputNormBias, {D});
    add(names::kOutput, {V, D});
    add(names::kOutputBias, {V});
    c.n_kv_heads = 2;
    for (const char* f : {names::kAttnNorm, names::kAttnNormBias, names::kFfnNorm,
                          names::kFfnNormBias, names::kAttnOutBias, names::kFfnDownBias,
                          names::kAttnQBias, names::kAttnKBias, names::kAttnVBias}) {
      add(names::LayerName(f, 0), {D});
    }
    for (const char* f : {names::kAttnQ, names::kAttnK, names::kAttnV, names::kAttnOut}) {
      add(names::LayerName(f, 0), {D, D});
    }
    add(names::LayerName(names::kFfnUp, 0), {F, D});
    add(names::LayerName(names::kFfnUpBias, 0), {F});
    add(names::LayerName(names::kFfnDown, 0), {D, F});
    files.push_back({"model/small_gpt2_like.ember", Serialized(g)});
  }
  // Every feature of the current families (sliding layers, YaRN, qk-norm, post-norms,
  // scales, soft-caps).
  files.push_back({"model/families.ember",
                   Serialized(ember::testing::FamiliesModelSpec(4, 16))});

  // tokenizer: byte 0 picks the vocabulary, special-token parsing and BOS (see
  // tokenizer_fuzzer.cc; seven vocabularies when ../shared/models has them all).
  const char* texts[] = {
      "Once upon a time, there was a little girl named Lily.",
      " leading space and  double  spaces\n\ttabs",
      "caf\xc3\xa9 \xe2\x80\x94 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
      "invalid \xc3 utf-8 \xff",
      "1234567890 !?,.;:'\" don't I'M we'LL",
      "<|im_start|>user\ncafe\xcc\x81<|im_end|><start_of_turn>\xe2\x96\x81\xe2\x96\x81<"
      "bos>",
      ""};
  int k = 0;
  for (const char* text : texts) {
    for (int vocab = 0; vocab < 7; ++vocab, ++k) {
      const char selector =
          static_cast<char>(vocab | (k % 2 ? 0x80 : 0) | (k % 3 ? 0 : 0x40));
      files.push_back(
          {"tokenizer/text" + std::to_string(k), selector + std::string(text)});
    }
  }

  // llama2c: checkpoint + tokenizer.bin, shared and separate classifiers.
  files.push_back({"llama2c/small_shared",
                   JoinParts({Str(ember::fuzz::Llama2cCheckpoint(small)),
                              Str(ember::fuzz::Llama2cTokenizer(small.tokenizer))})});
  {
    ModelSpec untied = small;
    untied.config.tied_classifier = false;
    for (const auto& t : small.tensors) {
      if (t.name == ember::names::kTokEmbedding) {
        untied.tensors.push_back(t);
        untied.tensors.back().name = ember::names::kOutput;
      }
    }
    files.push_back({"llama2c/small_separate_classifier",
                     JoinParts({Str(ember::fuzz::Llama2cCheckpoint(untied)),
                                Str(ember::fuzz::Llama2cTokenizer(untied.tokenizer))})});
  }

  // safetensors and hf: a Llama directory, with vocab.json + merges.txt or
  // tokenizer.json.
  const std::vector<std::string> hf = ember::fuzz::HfLlamaFiles(false);
  const std::vector<std::string> hf_json = ember::fuzz::HfLlamaFiles(true);
  files.push_back({"safetensors/small_llama", hf[1]});
  files.push_back({"hf/llama_vocab_merges", JoinParts(hf)});
  files.push_back({"hf/llama_tokenizer_json", JoinParts(hf_json)});
  {
    // The same tensors as Mistral with a sliding window, Llama 3's RoPE scaling and a
    // list of end ids (tools/convert/hf/hf_rope.cc, hf_decoders.cc).
    std::vector<std::string> mistral = hf;
    ember::tools::Json config = ember::tools::Json::parse(mistral[0]);
    config["model_type"] = "mistral";
    config["sliding_window"] = 3;
    config["eos_token_id"] = {258, 257};
    config["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0},
                              {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                              {"original_max_position_embeddings", 8}};
    mistral[0] = config.dump(1);
    files.push_back({"hf/mistral_sliding_llama3", JoinParts(mistral)});
  }

  // gguf: the tiny Llama in f32, q8_0 and q4_0; K-quant and other blocks to decode; and
  // the broken-file corpus (each breaks one rule: mutations start next to the checks).
  {
    const ModelSpec tiny = ember::testing::TinyModelSpec(32, 1, 4, 2, 64, 300, 16);
    for (uint32_t type : {0u, 8u, 2u}) {
      files.push_back({"gguf/tiny_llama_type" + std::to_string(type),
                       ember::testing::LlamaGguf(tiny, type)});
    }
    ember::testing::GgufBuilder blocks;
    blocks.Str("general.architecture", "llama");
    for (uint32_t type : {3u, 6u, 7u, 20u, 12u, 13u, 14u}) {
      const uint32_t per_block = type >= 12 && type <= 14 ? 256 : 32;
      blocks.Tensor("t" + std::to_string(type), {per_block, 2}, type,
                    ember::testing::RandomGgmlBlocks(type, 2, type));
    }
    files.push_back({"gguf/blocks", blocks.Build()});
    for (const ember::testing::BrokenGguf& c : ember::testing::BrokenGgufCorpus()) {
      files.push_back({"gguf/broken_" + c.name, c.bytes});
    }
    // llama.cpp's projector files (the fuzzer imports them beside a text model of its
    // own): Gemma 3's in f16, Idefics3's in f32 with fc1 named ffn_down.
    for (bool shuffle : {false, true}) {
      ModelSpec vision;
      if (!ember::testing::VisionGgufSpec(shuffle, &vision).ok()) abort();
      files.push_back(
          {shuffle ? "gguf/mmproj_idefics3" : "gguf/mmproj_gemma3",
           ember::testing::MmprojGgufBuilder(vision, shuffle ? 0 : 1, shuffle).Build()});
    }
  }

  // Images: the decoder's test PNGs (RGBA, gray, 1-bit palette).
  auto bytes = [](const uint8_t* data, size_t n) {
    return std::string(reinterpret_cast<const char*>(data), n);
  };
  files.push_back({"image/rgba.png", bytes(ember::kPngRgba, sizeof(ember::kPngRgba))});
  files.push_back({"image/gray.png", bytes(ember::kPngGray, sizeof(ember::kPngGray))});
  files.push_back(
      {"image/palette.png", bytes(ember::kPngPalette, sizeof(ember::kPngPalette))});

  AddPromptStates(&files);
  ember::fuzz::AddTextSeeds(&files);

  for (const char* dir :
       {"", "/model", "/tokenizer", "/llama2c", "/safetensors", "/hf", "/gguf",
        "/prompt_state", "/template", "/template_bytecode", "/gbnf", "/json_schema",
        "/tool_calls", "/tokenizer_json", "/c_api", "/image"}) {
    mkdir((out + dir).c_str(), 0755);
  }
  for (const auto& [path, bytes] : files) {
    if (!Write(out + "/" + path, bytes)) return 1;
  }
  printf("fuzz_seeds: wrote %zu seeds to %s\n", files.size(), out.c_str());
  return 0;
}
