// The tool-call tests' shared tools and model: see chat_tools_model.h.
#include "tests/chat_tools_model.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model_writer.h"
#include "tools/convert/hf/hf_tokenizer.h"
#include "tools/template/chat_program.h"
#include "tools/template/hf_chat_config.h"
#include "tools/util/json_util.h"

namespace ember::testing {

void CheckWeatherCall(const ToolCall& call) {
  const tools::Json args = tools::Json::parse(call.arguments, nullptr, false);
  ASSERT_TRUE(args.is_object()) << call.arguments;
  if (call.name == "get_weather") {
    ASSERT_EQ(args.size(), 2u) << call.arguments;
    ASSERT_TRUE(args["city"].is_string()) << call.arguments;
    size_t code_points = 0;  // maxLength counts code points, not bytes
    for (const char c : args["city"].get<std::string>())
      code_points += (c & 0xC0) != 0x80;
    EXPECT_LE(code_points, 12u) << call.arguments;
    EXPECT_TRUE(args["unit"] == "celsius" || args["unit"] == "fahrenheit")
        << call.arguments;
  } else {
    ASSERT_EQ(call.name, "add");
    ASSERT_EQ(args.size(), 2u) << call.arguments;
    EXPECT_TRUE(args["a"].is_number_integer() && args["b"].is_number_integer())
        << call.arguments;
  }
}

void GreedyChat::Open(const Model& model, uint32_t vocab, uint32_t max_tools_bytes) {
  SessionOptions options;
  options.max_context = 2048;
  auto created = Session::Create(model, options, nullptr);
  ASSERT_TRUE(created.ok()) << created.status().message();
  session.emplace(std::move(*created));
  SamplerOptions sampling;
  sampling.temperature = 0;
  sampler = std::make_unique<Sampler>(sampling, vocab, session->sampler_scratch());
  ChatOptions chat_options;
  chat_options.max_tools_bytes = max_tools_bytes;
  memory.assign((Chat::RequiredBytes(*session, chat_options) + 7) / 8, 0);
  const Status s =
      chat.Init(&*session, sampler.get(), chat_options, memory.data(), memory.size() * 8);
  ASSERT_TRUE(s.ok()) << s.message();
}

void Qwen3ChatModel(AlignedBytes* bytes, uint32_t* vocab) {
  const std::string dir = ModelsDir() + "/hf-tokenizers/qwen3";
  TokenizerSpec tokenizer;
  ASSERT_TRUE(tools::ReadHfTokenizer(dir, 0, tools::SpecialTokens(), &tokenizer).ok());
  ASSERT_TRUE(
      tools::ReadHfChatConfig(dir, &tokenizer.chat_template, &tokenizer.chat_program)
          .ok());
  const Status compiled = tools::CompileChatTemplate(&tokenizer);
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  *vocab = static_cast<uint32_t>(tokenizer.pieces.size());
  ModelSpec spec = TinyModelSpec(16, 1, 2, 2, 32, *vocab, 2048, 11);
  spec.tokenizer = std::move(tokenizer);
  std::vector<uint8_t> raw;
  ASSERT_TRUE(SerializeModel(spec, &raw).ok());
  *bytes = AlignedBytes(raw);
}

}  // namespace ember::testing
