// Safetensors reader: values of each dtype, and every kind of broken header gets an
// error (never a crash), including a deterministic sweep of truncations and byte flips.
#include "tools/convert/hf/safetensors.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ember::tools {
namespace {

// An 8-byte little-endian header size, the header, then the data.
std::vector<uint8_t> File(const std::string& header, const std::vector<uint8_t>& data) {
  std::string text(8, '\0');
  for (int i = 0; i < 8; ++i) text[i] = static_cast<char>(header.size() >> (8 * i));
  text += header;
  text.append(data.begin(), data.end());
  return std::vector<uint8_t>(text.begin(), text.end());
}

std::vector<uint8_t> Bytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n);
}

std::vector<uint8_t> ValidFile() {
  const float f32[6] = {1.5f, -2.0f, 0.0f, 3.25f, -0.125f, 1e-3f};
  const uint16_t bf16[2] = {0x3FC0, 0xC040};                 // 1.5, -3
  const uint16_t f16[4] = {0x3C00, 0x0001, 0x7C00, 0xC500};  // 1, 2^-24, inf, -5
  std::vector<uint8_t> data = Bytes(f32, sizeof(f32));
  const auto b = Bytes(bf16, sizeof(bf16)), h = Bytes(f16, sizeof(f16));
  data.insert(data.end(), b.begin(), b.end());
  data.insert(data.end(), h.begin(), h.end());
  return File(R"({"__metadata__":{"format":"pt"},)"
              R"("w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
              R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[24,28]},)"
              R"("h":{"dtype":"F16","shape":[4],"data_offsets":[28,36]}})",
              data);
}

TEST(SafetensorsTest, ReadsEveryFloatType) {
  const std::vector<uint8_t> bytes = ValidFile();
  auto file = SafetensorsFile::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ((*file)->tensors().size(), 3u);
  const SafetensorsTensor* w = (*file)->Find("w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->shape, (std::vector<uint64_t>{2, 3}));
  std::vector<float> values;
  ASSERT_TRUE(SafetensorsToF32(*w, &values).ok());
  EXPECT_EQ(values, (std::vector<float>{1.5f, -2.0f, 0.0f, 3.25f, -0.125f, 1e-3f}));
  ASSERT_TRUE(SafetensorsToF32(*(*file)->Find("b"), &values).ok());
  EXPECT_EQ(values, (std::vector<float>{1.5f, -3.0f}));
  ASSERT_TRUE(SafetensorsToF32(*(*file)->Find("h"), &values).ok());
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(values[2]));
  EXPECT_EQ(values[3], -5.0f);
  EXPECT_EQ((*file)->Find("missing"), nullptr);
}

TEST(SafetensorsTest, HalfConversionIsExact) {
  // Every finite f16 value round-trips through float and back by bits.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const uint32_t exponent = (bits >> 10) & 0x1F;
    if (exponent == 0x1F) continue;
    const float f = HalfToFloat(static_cast<uint16_t>(bits));
    const float magnitude =
        std::ldexp(exponent ? 1.0f + (bits & 0x3FF) / 1024.0f : (bits & 0x3FF) / 1024.0f,
                   exponent ? static_cast<int>(exponent) - 15 : -14);
    ASSERT_EQ(f, (bits & 0x8000) ? -magnitude : magnitude) << bits;
  }
}

void ExpectError(const std::string& header, const std::vector<uint8_t>& data,
                 const char* fragment) {
  const std::vector<uint8_t> bytes = File(header, data);
  auto file = SafetensorsFile::Parse(bytes.data(), bytes.size());
  ASSERT_FALSE(file.ok()) << header;
  EXPECT_NE(std::string(file.status().message()).find(fragment), std::string::npos)
      << file.status().message();
}

TEST(SafetensorsTest, RejectsBrokenHeaders) {
  const std::vector<uint8_t> data(16, 0);
  ExpectError("[1,2]", data, "not a JSON object");
  ExpectError("{\"a\":", data, "not a JSON object");
  ExpectError(R"({"a":1})", data, "is not an object");
  ExpectError(R"({"a":{"shape":[1],"data_offsets":[0,4]}})", data, "no dtype");
  ExpectError(R"({"a":{"dtype":"Q9","shape":[1],"data_offsets":[0,4]}})", data,
              "unknown dtype 'Q9'");
  ExpectError(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", data,
              "not a non-negative integer");
  ExpectError(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", data,
              "not a non-negative integer");
  ExpectError(R"({"a":{"dtype":"F32","shape":"1","data_offsets":[0,4]}})", data,
              "no shape");
  ExpectError(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", data,
              "no data_offsets");
  ExpectError(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", data,
              "outside the 16 data bytes");
  ExpectError(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,20]}})", data,
              "outside the 16 data bytes");
  ExpectError(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", data,
              "needs 8");
  ExpectError(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],)"
              R"("data_offsets":[0,4]}})",
              data, "too many elements");
  ExpectError(R"({"a":{"dtype":"F64","shape":[4611686018427387904],)"
              R"("data_offsets":[0,4]}})",
              data, "too large");
  ExpectError(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
              R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
              data, "overlap");
}

TEST(SafetensorsTest, RejectsBadSizes) {
  const uint8_t short_file[4] = {1, 2, 3, 4};
  EXPECT_FALSE(SafetensorsFile::Parse(short_file, sizeof(short_file)).ok());
  std::vector<uint8_t> bytes = ValidFile();
  bytes[7] = 0x80;  // header size 2^63
  auto file = SafetensorsFile::Parse(bytes.data(), bytes.size());
  ASSERT_FALSE(file.ok());
  EXPECT_NE(std::string(file.status().message()).find("does not fit"), std::string::npos);
}

TEST(SafetensorsTest, ConvertsOnlyFloatTypes) {
  const int64_t ids[2] = {1, 2};
  const std::vector<uint8_t> bytes =
      File(R"({"ids":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})",
           Bytes(ids, sizeof(ids)));
  auto file = SafetensorsFile::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.status().message();
  std::vector<float> values;
  const Status s = SafetensorsToF32(*(*file)->Find("ids"), &values);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("dtype I64"), std::string::npos);
}

// Every truncation and many random byte flips of a valid file: parse (and convert what
// parses) without crashing or reading outside the buffer (run under ASan in CI).
TEST(SafetensorsTest, SurvivesTruncationAndCorruption) {
  const std::vector<uint8_t> valid = ValidFile();
  std::vector<float> values;
  auto try_parse = [&](const std::vector<uint8_t>& bytes) {
    // An exactly sized heap copy, so ASan sees any read past the end.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size() + 1]);
    if (!bytes.empty()) memcpy(copy.get(), bytes.data(), bytes.size());
    auto file = SafetensorsFile::Parse(copy.get(), bytes.size());
    if (!file.ok()) return;
    for (const SafetensorsTensor& t : (*file)->tensors()) {
      ASSERT_LE(t.data + t.size_bytes, copy.get() + bytes.size());
      SafetensorsToF32(t, &values);
    }
  };
  for (size_t n = 0; n <= valid.size(); ++n) {
    try_parse(std::vector<uint8_t>(valid.begin(), valid.begin() + n));
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> bytes = valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f)
      bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    try_parse(bytes);
  }
}

}  // namespace
}  // namespace ember::tools
