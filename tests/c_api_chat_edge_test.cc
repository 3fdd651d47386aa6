// The chat entries of the C API at the edges of their integer arguments (as
// c_api_edge_test.cc does for the others): template renders, chat lengths, ISA and
// struct sizes. Each is refused with a status and a message, never a crash.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "gtest/gtest.h"
#include "kernels/isa.h"
#include "tests/c_api_edge.h"

namespace ember {
namespace c_api_edge {
namespace {

// A count of messages whose records' byte size wraps past SIZE_MAX (SIZE_MAX / 32 + 1
// of the renderer's 32-byte records, on 64-bit) must not pass as a small one, nor a
// capacity that runs past the end of the address space; both are refused before a
// message is read.
TEST_F(CApiEdgeTest, ChatTemplateRenderCounts) {
  const ember_chat_message message = {"user", "Hi", 2};
  char buffer[4096];
  size_t length = 0;
  ASSERT_EQ(ember_chat_template_render(model_, &message, 1, nullptr, buffer,
                                       sizeof(buffer), &length),
            EMBER_OK)
      << LastError();
  EXPECT_EQ(std::string(buffer, length), "[user] Hi\n[assistant]");
  for (size_t n : {SIZE_MAX, kHalfPlusOne, SIZE_MAX / 32 + 1, SIZE_MAX / 16 + 1,
                   SIZE_MAX / 24 + 1}) {
    EXPECT_EQ(ember_chat_template_render(model_, &message, n, nullptr, buffer,
                                         sizeof(buffer), &length),
              EMBER_RESOURCE_EXHAUSTED)
        << n;
    EXPECT_NE(LastError().find("too small for"), std::string::npos) << LastError();
    EXPECT_EQ(length, 0u);
  }
  // (A capacity that does not wrap is the caller's word: it cannot be checked.)
  for (size_t capacity : {SIZE_MAX, SIZE_MAX - 15}) {
    EXPECT_EQ(ember_chat_template_render(model_, &message, 1, nullptr, buffer, capacity,
                                         &length),
              EMBER_INVALID_ARGUMENT)
        << capacity;
    EXPECT_NE(LastError().find("past the end of the address space"), std::string::npos)
        << LastError();
  }
  ember_chat_options options;
  ember_chat_options_default(&options);
  for (int32_t thinking : {INT32_MIN, -2, 2, INT32_MAX}) {
    options.enable_thinking = thinking;
    EXPECT_EQ(ember_chat_template_render(model_, &message, 1, &options, buffer,
                                         sizeof(buffer), &length),
              EMBER_INVALID_ARGUMENT);
    EXPECT_NE(LastError().find("is not -1, 0 or 1"), std::string::npos) << LastError();
  }
  // The clock: negative is none; the largest date still formats (no overflow in the
  // civil-date arithmetic).
  options.enable_thinking = -1;
  for (int64_t now : {INT64_MIN, int64_t{-2}}) {
    options.now_seconds = now;
    ASSERT_EQ(ember_chat_template_render(model_, &message, 1, &options, buffer,
                                         sizeof(buffer), &length),
              EMBER_OK)
        << now;
    EXPECT_EQ(std::string(buffer, length), "[user] Hi\n[assistant]");
  }
  options.now_seconds = INT64_MAX;
  ASSERT_EQ(ember_chat_template_render(model_, &message, 1, &options, buffer,
                                       sizeof(buffer), &length),
            EMBER_OK)
      << LastError();
  EXPECT_EQ(std::string(buffer, length),
            "[user] Hi\n[assistant] 292277026596-12-04 339 Sun");
}

// A conversation: text lengths are checked against what the chat keeps before the text
// is read; a reply's max_new past the context is a bound.
TEST_F(CApiEdgeTest, ChatLengths) {
  ember_chat* chat = nullptr;
  ember_chat_options options;
  ember_chat_options_default(&options);
  options.max_messages = UINT32_MAX - 1;  // each a pointer and sizes: past any memory
  if (!kSanitizedAllocator) {
    const ember_status big = ember_chat_create(session_, &options, &chat);
    EXPECT_TRUE(big == EMBER_RESOURCE_EXHAUSTED || big == EMBER_OK) << LastError();
    ember_chat_free(chat);
    chat = nullptr;
  }
  if (sizeof(size_t) == 4) {  // armhf: the sizes themselves overflow, and are refused
    options.max_text_bytes = UINT32_MAX;
    EXPECT_EQ(ember_chat_create(session_, &options, &chat), EMBER_RESOURCE_EXHAUSTED);
    EXPECT_NE(LastError().find("address space"), std::string::npos) << LastError();
    EXPECT_EQ(chat, nullptr);
  }
  ASSERT_EQ(ember_chat_create(session_, nullptr, &chat), EMBER_OK) << LastError();
  for (size_t length : {SIZE_MAX, kHalfPlusOne}) {
    EXPECT_EQ(ember_chat_add(chat, "user", "Hi", length), EMBER_RESOURCE_EXHAUSTED);
    EXPECT_NE(LastError().find("does not fit"), std::string::npos) << LastError();
    EXPECT_EQ(ember_chat_set_system(chat, "Hi", length), EMBER_RESOURCE_EXHAUSTED);
    EXPECT_EQ(ember_chat_add(chat, "user", nullptr, length), EMBER_INVALID_ARGUMENT);
  }
  ASSERT_EQ(ember_chat_add(chat, "user", "Hi", 2), EMBER_OK);
  Counter counter{0, 0};
  size_t generated = 0;
  const ember_status s =
      ember_chat_generate(chat, SIZE_MAX, &Count, &counter, &generated);
  EXPECT_TRUE(s == EMBER_OK || s == EMBER_OUT_OF_RANGE) << LastError();
  EXPECT_LE(generated, 64u);
  ember_chat_stats stats;
  memset(&stats, 0, sizeof(stats));
  stats.struct_size = UINT32_MAX;
  EXPECT_EQ(ember_chat_last_stats(chat, &stats), EMBER_UNIMPLEMENTED);
  ember_chat_free(chat);
}

// A turn too long for the context (64 positions) on its own is refused before any older
// turn is dropped: dropping them could not make it fit, and the conversation stays.
// Tools on a template with no tool-call syntax are refused by name; the tools' room
// is the options'; the calls of a reply without tools are none, and asking for one past
// them is OutOfRange.
TEST_F(CApiEdgeTest, ToolsAndTheirCalls) {
  ember_chat_options options;
  ember_chat_options_default(&options);
  options.max_tools_bytes = 8;
  ember_chat* chat = nullptr;
  ASSERT_EQ(ember_chat_create(session_, &options, &chat), EMBER_OK) << LastError();
  const char tools[] = R"([{"type": "function", "function": {"name": "f"}}])";
  EXPECT_EQ(ember_chat_set_tools(chat, tools, sizeof(tools) - 1), EMBER_RESOURCE_EXHAUSTED);
  EXPECT_NE(LastError().find("max_tools_bytes"), std::string::npos) << LastError();
  EXPECT_EQ(ember_chat_set_tools(chat, nullptr, 1), EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_chat_set_tools(chat, nullptr, 0), EMBER_OK) << LastError();  // none
  ember_chat_free(chat);
  options.max_tools_bytes = sizeof(tools);
  ASSERT_EQ(ember_chat_create(session_, &options, &chat), EMBER_OK) << LastError();
  EXPECT_EQ(ember_chat_set_tools(chat, tools, sizeof(tools) - 1), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("no way to call tools"), std::string::npos) << LastError();
  size_t n = 7;
  const char* why = nullptr;
  ASSERT_EQ(ember_chat_tool_call_count(chat, &n, &why), EMBER_OK);
  EXPECT_EQ(n, 0u);
  EXPECT_STREQ(why, "");
  ember_tool_call call;
  call.struct_size = sizeof(call);
  EXPECT_EQ(ember_chat_tool_call(chat, 0, &call), EMBER_OUT_OF_RANGE);
  call.struct_size = 4;
  EXPECT_EQ(ember_chat_tool_call(chat, 0, &call), EMBER_INVALID_ARGUMENT);
  EXPECT_EQ(ember_chat_tool_call_count(nullptr, &n, nullptr), EMBER_INVALID_ARGUMENT);
  ember_chat_free(chat);
}

TEST_F(CApiEdgeTest, ATurnTooLongAloneDropsNoOlderTurn) {
  ember_chat* chat = nullptr;
  ember_chat_options options;
  ember_chat_options_default(&options);
  options.max_text_bytes = 4096;
  ASSERT_EQ(ember_chat_create(session_, &options, &chat), EMBER_OK) << LastError();
  Counter counter{0, 0};
  ember_chat_stats stats;
  stats.struct_size = sizeof(stats);
  for (const char* turn : {"Hi", "How are you"}) {
    ASSERT_EQ(ember_chat_add(chat, "user", turn, strlen(turn)), EMBER_OK);
    ASSERT_EQ(ember_chat_generate(chat, 2, &Count, &counter, nullptr), EMBER_OK)
        << LastError();
  }
  std::string wide;
  for (int i = 0; i < 100; ++i) wide += "a b ";
  ASSERT_EQ(ember_chat_add(chat, "user", wide.data(), wide.size()), EMBER_OK);
  EXPECT_EQ(ember_chat_generate(chat, 2, &Count, &counter, nullptr), EMBER_OUT_OF_RANGE);
  EXPECT_NE(LastError().find("does not fit the context of 64"), std::string::npos)
      << LastError();
  ASSERT_EQ(ember_chat_last_stats(chat, &stats), EMBER_OK);
  EXPECT_EQ(stats.dropped_messages, 0u);
  ember_chat_free(chat);
}

// An ISA tier ember_session_create refuses (unknown, or one this CPU cannot run; from the
// options or EMBER_ISA) is refused by ember_arena_bytes too, with the same message: a
// size for a session that cannot exist would only defer the error.
TEST_F(CApiEdgeTest, ArenaBytesRefusesTheIsaSessionCreateRefuses) {
  std::vector<std::string> refused = {"avx1024"};
  const std::string names = kernels::IsaTierNames();
  for (size_t begin = 0; begin < names.size();) {
    size_t end = names.find(' ', begin);
    if (end == std::string::npos) end = names.size();
    const std::string name = names.substr(begin, end - begin);
    if (!kernels::CpuRunsTier(name.c_str())) refused.push_back(name);
    begin = end + 1;
  }
  const char* saved = getenv("EMBER_ISA");
  const std::string saved_value = saved ? saved : "";
  for (const std::string& tier : refused) {
    for (bool from_env : {false, true}) {
      ember_session_options options;
      ember_session_options_default(&options);
      if (from_env) {
        setenv("EMBER_ISA", tier.c_str(), 1);
      } else {
        options.isa = tier.c_str();
      }
      ember_session* session = nullptr;
      const ember_status created =
          ember_session_create(model_, &options, nullptr, nullptr, 0, &session);
      EXPECT_NE(created, EMBER_OK) << tier;
      const std::string message = LastError();
      EXPECT_NE(message.find(from_env ? "EMBER_ISA" : "SessionOptions::isa"),
                std::string::npos)
          << message;
      EXPECT_EQ(ember_arena_bytes(model_, &options), 0u) << tier;
      EXPECT_EQ(LastError(), message);
      ember_session_free(session);
    }
  }
  if (saved) {
    setenv("EMBER_ISA", saved_value.c_str(), 1);
  } else {
    unsetenv("EMBER_ISA");
  }
}

// A struct_size too small names how to fill the struct: its _default function where
// ember.h has one, else sizeof (ember_chat_stats has no _default: the message once
// named an ember_chat_stats_default that does not exist).
TEST_F(CApiEdgeTest, StructSizeMessagesNameWhatExists) {
  ember_session_options session_options{};
  EXPECT_EQ(ember_arena_bytes(model_, &session_options), 0u);
  EXPECT_NE(LastError().find("fill the struct with ember_session_options_default"),
            std::string::npos)
      << LastError();
  ember_sampler_options sampler{};
  EXPECT_EQ(ember_session_set_sampler(session_, &sampler), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("fill the struct with ember_sampler_options_default"),
            std::string::npos)
      << LastError();
  ember_chat_options chat_options{};
  ember_chat* chat = nullptr;
  EXPECT_EQ(ember_chat_create(session_, &chat_options, &chat), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(LastError().find("fill the struct with ember_chat_options_default"),
            std::string::npos)
      << LastError();
  ASSERT_EQ(ember_chat_create(session_, nullptr, &chat), EMBER_OK) << LastError();
  for (uint32_t size : {0u, 8u, uint32_t{offsetof(ember_chat_stats, generate_seconds)}}) {
    ember_chat_stats stats{};
    stats.struct_size = size;
    EXPECT_EQ(ember_chat_last_stats(chat, &stats), EMBER_INVALID_ARGUMENT);
    EXPECT_EQ(LastError().find("_default"), std::string::npos) << LastError();
    EXPECT_NE(LastError().find("set struct_size = sizeof(ember_chat_stats)"),
              std::string::npos)
        << LastError();
  }
  ember_chat_free(chat);
}

// The session's arena holds one grammar: a chat's takes the region (the session's own is
// dropped: its generation is free again), and the session's then drops the chat's.
TEST_F(CApiEdgeTest, OneGrammarPerSessionsRegion) {
  const auto generate = [&](std::string* text) {
    text->clear();
    ember_session_reset(session_);
    const int32_t prompt[1] = {3};
    size_t generated = 0;
    return ember_generate(
        session_, prompt, 1, 6,
        [](void* user, int32_t, const char* piece, size_t length) {
          static_cast<std::string*>(user)->append(piece, length);
          return 1;
        },
        text, &generated);
  };
  const char kYes[] = "root ::= \"yes.\"";
  ember_session_options options;
  ember_session_options_default(&options);
  ASSERT_EQ(ember_grammar_bytes(model_, kYes, strlen(kYes), nullptr, &options.grammar_bytes),
            EMBER_OK)
      << LastError();
  ember_session_free(session_);
  session_ = nullptr;
  ASSERT_EQ(ember_session_create(model_, &options, nullptr, nullptr, 0, &session_), EMBER_OK)
      << LastError();
  std::string free_text, text;
  ASSERT_EQ(generate(&free_text), EMBER_OK) << LastError();
  ASSERT_NE(free_text, "yes.");
  ASSERT_EQ(ember_session_set_grammar(session_, kYes, strlen(kYes), nullptr), EMBER_OK)
      << LastError();
  ASSERT_EQ(generate(&text), EMBER_OK) << LastError();
  EXPECT_EQ(text, "yes.");
  ember_chat* chat = nullptr;
  ASSERT_EQ(ember_chat_create(session_, nullptr, &chat), EMBER_OK) << LastError();
  ASSERT_EQ(ember_chat_set_grammar(chat, kYes, strlen(kYes), nullptr), EMBER_OK)
      << LastError();
  ASSERT_EQ(generate(&text), EMBER_OK) << LastError();
  EXPECT_EQ(text, free_text);  // the session's grammar went with the region
  ASSERT_EQ(ember_session_set_grammar(session_, kYes, strlen(kYes), nullptr), EMBER_OK)
      << LastError();
  ember_chat_free(chat);  // its grammar was dropped already
  ASSERT_EQ(generate(&text), EMBER_OK) << LastError();
  EXPECT_EQ(text, "yes.");
}

}  // namespace
}  // namespace c_api_edge
}  // namespace ember
