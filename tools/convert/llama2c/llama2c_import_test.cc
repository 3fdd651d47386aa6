// llama2.c importer: shared and separate classifiers, and clear errors for malformed
// checkpoints and tokenizer files.
#include "tools/convert/llama2c/llama2c_import.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/model/model.h"
#include "runtime/model/tensor_names.h"
#include "testing/testing.h"

namespace ember::tools {
namespace {

// A llama2.c legacy checkpoint: header, then run.c's arrays filled with a ramp.
std::vector<uint8_t> Checkpoint(int32_t dim, int32_t hidden, int32_t layers,
                                int32_t heads, int32_t kv_heads, int32_t vocab,
                                int32_t seq_len) {
  const int32_t header[7] = {dim, hidden, layers, heads, kv_heads, vocab, seq_len};
  const uint64_t D = dim, F = hidden, L = layers, T = seq_len;
  const uint64_t V = vocab > 0 ? vocab : -vocab;
  const uint64_t head = D / heads, kv = head * kv_heads;
  const uint64_t floats = V * D + L * D + L * D * D + 2 * L * kv * D + L * D * D + L * D +
                          3 * L * F * D + D + T * head + (vocab < 0 ? V * D : 0);
  std::vector<uint8_t> bytes(sizeof(header) + floats * 4);
  memcpy(bytes.data(), header, sizeof(header));
  float* w = reinterpret_cast<float*>(bytes.data() + sizeof(header));
  for (uint64_t i = 0; i < floats; ++i) w[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
  return bytes;
}

std::vector<uint8_t> TokenizerFile(uint32_t vocab) {
  std::vector<uint8_t> bytes(4);
  const int32_t max_len = 8;
  memcpy(bytes.data(), &max_len, 4);
  auto add = [&](float score, const std::string& piece) {
    const int32_t len = static_cast<int32_t>(piece.size());
    const size_t at = bytes.size();
    bytes.resize(at + 8 + piece.size());
    memcpy(bytes.data() + at, &score, 4);
    memcpy(bytes.data() + at + 4, &len, 4);
    memcpy(bytes.data() + at + 8, piece.data(), piece.size());
  };
  add(0, "<unk>");
  add(0, "\n<s>\n");
  add(0, "\n</s>\n");
  for (int b = 0; b < 256; ++b) {
    char piece[8];
    snprintf(piece, sizeof(piece), "<0x%02X>", b);
    add(0, piece);
  }
  for (uint32_t i = 259; i < vocab; ++i) add(-float(i), "p" + std::to_string(i));
  return bytes;
}

std::string ParseError(const std::vector<uint8_t>& checkpoint) {
  ModelSpec spec;
  Status s = ParseLlama2cCheckpoint(checkpoint, &spec);
  return s.ok() ? "ok" : s.message();
}

TEST(Llama2cImportTest, SharedAndSeparateClassifiersLoadAndRun) {
  for (int32_t vocab : {300, -300}) {
    ModelSpec spec;
    ASSERT_TRUE(
        ParseLlama2cCheckpoint(Checkpoint(16, 40, 2, 4, 2, vocab, 32), &spec).ok());
    ASSERT_TRUE(ParseLlama2cTokenizer(TokenizerFile(300), 300, &spec.tokenizer).ok());
    EXPECT_EQ(spec.config.tied_classifier, vocab > 0);
    std::vector<uint8_t> raw;
    ASSERT_TRUE(SerializeModel(spec, &raw).ok());
    const testing::AlignedBytes bytes(raw);
    auto model = Model::FromMemory(bytes.data(), bytes.size());
    ASSERT_TRUE(model.ok()) << model.status().message();
    EXPECT_EQ((*model)->weights().output == (*model)->weights().tok_embedding, vocab > 0);
    EXPECT_EQ((*model)->config().head_dim, 4u);
    EXPECT_EQ((*model)->config().n_kv_heads, 2u);
  }
}

TEST(Llama2cImportTest, MalformedCheckpointsAreRefused) {
  std::vector<uint8_t> good = Checkpoint(16, 40, 2, 4, 2, 300, 32);
  EXPECT_EQ(ParseError(good), "ok");
  EXPECT_NE(ParseError({1, 2, 3}).find("shorter than the 28-byte header"),
            std::string::npos);
  std::vector<uint8_t> truncated(good.begin(), good.end() - 4);
  EXPECT_NE(ParseError(truncated).find("truncated file or wrong format"),
            std::string::npos);
  std::vector<uint8_t> extra = good;
  extra.push_back(0);
  EXPECT_NE(ParseError(extra).find("truncated file or wrong format"), std::string::npos);
  std::vector<uint8_t> negative_dim = good;
  const int32_t minus16 = -16;
  memcpy(negative_dim.data(), &minus16, 4);
  EXPECT_NE(ParseError(negative_dim).find("dim = -16"), std::string::npos);
  EXPECT_NE(ParseError(Checkpoint(18, 40, 2, 4, 2, 300, 32)).find("do not fit together"),
            std::string::npos);
  EXPECT_NE(ParseError(Checkpoint(16, 40, 2, 4, 3, 300, 32)).find("do not fit together"),
            std::string::npos);
  std::vector<uint8_t> zero_vocab = good;
  memset(zero_vocab.data() + 20, 0, 4);
  EXPECT_NE(ParseError(zero_vocab).find("vocab_size = 0"), std::string::npos);
}

TEST(Llama2cImportTest, MalformedTokenizersAreRefused) {
  TokenizerSpec tok;
  const std::vector<uint8_t> good = TokenizerFile(300);
  EXPECT_TRUE(ParseLlama2cTokenizer(good, 300, &tok).ok());
  Status s = ParseLlama2cTokenizer(good, 301, &tok);
  EXPECT_NE(std::string(s.message()).find("truncated at token 300"), std::string::npos);
  s = ParseLlama2cTokenizer(good, 299, &tok);
  EXPECT_NE(std::string(s.message()).find("bytes left after 299 tokens"),
            std::string::npos);
  std::vector<uint8_t> bad_len = good;
  const int32_t huge = 1 << 30;
  memcpy(bad_len.data() + 4 + 4, &huge, 4);  // token 0's length
  s = ParseLlama2cTokenizer(bad_len, 300, &tok);
  EXPECT_NE(std::string(s.message()).find("token 0 has length"), std::string::npos);
  s = ParseLlama2cTokenizer({0, 0, 0, 0}, 300, &tok);
  EXPECT_NE(std::string(s.message()).find("max_token_length"), std::string::npos);
}

// "<0xZZ>" looks like a byte piece to the importer, which types it so; the loader cannot
// parse it, so convert must refuse to write the model.
TEST(Llama2cImportTest, ACorruptedBytePieceIsNeverWritten) {
  std::vector<uint8_t> file = TokenizerFile(300);
  const std::string good = "<0x41>";
  const auto at = std::search(file.begin(), file.end(), good.begin(), good.end());
  ASSERT_NE(at, file.end());
  memcpy(&*at, "<0xZZ>", 6);
  ModelSpec spec;
  ASSERT_TRUE(ParseLlama2cCheckpoint(Checkpoint(16, 40, 2, 4, 2, 300, 32), &spec).ok());
  ASSERT_TRUE(ParseLlama2cTokenizer(file, 300, &spec.tokenizer).ok());
  char dir[] = "/tmp/ember_llama2c_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string out = std::string(dir) + "/out.ember";
  const Status s = WriteModel(spec, out);
  const std::string message = s.message();
  EXPECT_EQ(
      message.rfind("refusing to write '" + out + "': the loader would reject it: ", 0),
      0u)
      << message;
  EXPECT_NE(message.find("byte token 68 is not <0xNN>"), std::string::npos) << message;
  EXPECT_NE(unlink(out.c_str()), 0) << out << " was written";
  rmdir(dir);
}

TEST(Llama2cImportTest, MissingFilesNameThePath) {
  ModelSpec spec;
  Status s = ImportLlama2c("/nonexistent/model.bin", "/nonexistent/tok.bin", &spec);
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(std::string(s.message()).find("/nonexistent/model.bin"), std::string::npos);
}

}  // namespace
}  // namespace ember::tools
