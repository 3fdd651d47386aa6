// The C API through its C++ wrapper (ember.hpp) on models built in memory: tokenizing
// with options, the version and the status names. On stories260K (the golden story with a
// caller-owned arena, statuses plus messages for bad calls): tests/c_api_stories_test.cc.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "gtest/gtest.h"
#include "testing/testing.h"

extern "C" const char* ember_test_status_string_of(int value);  // c_api_test_shim.c

namespace ember {
namespace {

// ember_tokenize_with_options: BOS as the model says unless asked, control tokens in
// the text only with parse_special, and the struct's size checked like every option
// struct's.
TEST(CApiTokenizeTest, OptionsAndSpecialTokens) {
  ModelSpec spec = testing::TinyModelSpec();
  spec.tokenizer.added = {{1, "<s>", 0}, {2, "</s>", 0}};  // control tokens
  std::vector<uint8_t> raw;
  ASSERT_TRUE(SerializeModel(spec, &raw).ok());
  const testing::AlignedBytes bytes(raw);
  cpp::Model model;
  ASSERT_EQ(model.FromMemory(bytes.data(), bytes.size()), EMBER_OK) << cpp::LastError();
  cpp::Session session;
  ASSERT_EQ(session.Create(model), EMBER_OK) << cpp::LastError();

  ember_tokenize_options options;
  ember_tokenize_options_default(&options);
  EXPECT_EQ(options.struct_size, sizeof(options));
  EXPECT_EQ(options.add_bos, -1);
  EXPECT_EQ(options.parse_special, 0);
  std::vector<int32_t> ids;
  const std::string text = "a</s>b";
  ASSERT_EQ(session.Tokenize(text, options, &ids), EMBER_OK) << cpp::LastError();
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], 1);                                 // the model adds BOS
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2), 0);  // "</s>" is text
  options.parse_special = 1;
  options.add_bos = 0;
  ASSERT_EQ(session.Tokenize(text, options, &ids), EMBER_OK) << cpp::LastError();
  EXPECT_NE(ids[0], 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 2), 1);  // "</s>" is EOS
  // NULL options: the defaults.
  int32_t buffer[64];
  size_t n = 0;
  ASSERT_EQ(ember_tokenize_with_options(session.get(), text.data(), text.size(), nullptr,
                                        buffer, 64, &n),
            EMBER_OK);
  EXPECT_EQ(buffer[0], 1);
  EXPECT_EQ(std::count(buffer, buffer + n, 2), 0);

  options.add_bos = 5;
  EXPECT_EQ(session.Tokenize(text, options, &ids), EMBER_INVALID_ARGUMENT);
  EXPECT_NE(cpp::LastError().find("add_bos 5"), std::string::npos);
  ember_tokenize_options zero{};
  EXPECT_EQ(session.Tokenize(text, zero, &ids), EMBER_INVALID_ARGUMENT);
  ember_tokenize_options older;
  ember_tokenize_options_default(&older);
  older.struct_size = offsetof(ember_tokenize_options, parse_special);
  older.parse_special = 1;  // past its struct_size: never read
  EXPECT_EQ(session.Tokenize(text, older, &ids), EMBER_INVALID_ARGUMENT);
  ember_tokenize_options newer = options;
  newer.add_bos = 0;
  newer.struct_size = sizeof(newer) + 4;
  EXPECT_EQ(session.Tokenize(text, newer, &ids), EMBER_UNIMPLEMENTED);
}

TEST(CApiVersionTest, VersionAndStatusNames) {
  // One source: ember.h's macros, which CMake reads for the library's version too.
  const std::string version = std::to_string(EMBER_VERSION_MAJOR) + "." +
                              std::to_string(EMBER_VERSION_MINOR) + "." +
                              std::to_string(EMBER_VERSION_PATCH);
  EXPECT_EQ(ember_version(), version);
  EXPECT_EQ(version, EMBER_PROJECT_VERSION);
  EXPECT_STREQ(ember_status_string(EMBER_INVALID_MODEL), "invalid model");
  // Any int a C caller passes (the library loaded it as an ember_status, which UBSan
  // reported for 1000); from C, as C++ may not hold such a value in the enum at all.
  EXPECT_STREQ(ember_test_status_string_of(1000), "unknown status");
  EXPECT_STREQ(ember_test_status_string_of(-1), "unknown status");
  EXPECT_STREQ(ember_test_status_string_of(EMBER_OUT_OF_RANGE), "out of range");
  ember_model* model = nullptr;
  EXPECT_EQ(ember_model_open("/nonexistent.ember", &model), EMBER_IO_ERROR);
  EXPECT_EQ(model, nullptr);
  EXPECT_NE(std::string(ember_last_error()).find("/nonexistent.ember"),
            std::string::npos);
}

}  // namespace
}  // namespace ember
