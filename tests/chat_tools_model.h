// What the tool-call tests share: a tools list (two functions, the arguments' schemas
// strict enough to check a call against) and a tiny random model with Qwen3's tokenizer
// and its own chat template, compiled here (Hermes tool calls).
#ifndef EMBER_TESTS_CHAT_TOOLS_MODEL_H_
#define EMBER_TESTS_CHAT_TOOLS_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/chat/chat.h"
#include "runtime/chat/tool_calls.h"
#include "runtime/model/model.h"
#include "runtime/sampler.h"
#include "runtime/session.h"
#include "testing/testing.h"

namespace ember::testing {

inline constexpr char kWeatherTools[] = R"([
 {"type": "function", "function": {"name": "get_weather", "description": "Weather",
  "parameters": {"type": "object", "properties": {
    "city": {"type": "string", "maxLength": 12},
    "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city", "unit"]}}},
 {"type": "function", "function": {"name": "add", "parameters": {"type": "object",
  "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
  "required": ["a", "b"]}}}])";

// Checks a call against kWeatherTools: a known name, and arguments its schema accepts.
void CheckWeatherCall(const ToolCall& call);

// The model's bytes and its vocabulary's size (gtest assertions on failure).
void Qwen3ChatModel(AlignedBytes* bytes, uint32_t* vocab);

// A chat over a session of `model` (a context of 2048) with a greedy sampler, room for
// max_tools_bytes of tools (gtest assertions on failure).
struct GreedyChat {
  void Open(const Model& model, uint32_t vocab, uint32_t max_tools_bytes);

  std::optional<Session> session;
  std::unique_ptr<Sampler> sampler;
  std::vector<uint64_t> memory;
  Chat chat;
};

}  // namespace ember::testing

#endif  // EMBER_TESTS_CHAT_TOOLS_MODEL_H_
