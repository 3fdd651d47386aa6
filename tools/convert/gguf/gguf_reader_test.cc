// Tests of the GGUF reader: every value type (arrays nested too) in versions 2 and 3,
// alignment, the handcrafted broken files each refused with its own message, every
// truncation and byte flip of a real header refused or read without a crash, and the
// reader's memory bounded by the file's size.
#include "tools/convert/gguf/gguf_reader.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/testing.h"
#include "tools/convert/gguf/gguf_builder.h"

namespace ember::tools {
namespace {

using testing::GgufBuilder;
using B = GgufBuilder;

std::unique_ptr<GgufFile> ParseOk(const std::string& bytes) {
  auto file =
      GgufFile::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  EXPECT_TRUE(file.ok()) << file.status().message();
  return file.ok() ? std::move(*file) : nullptr;
}

Status ParseStatus(const std::string& bytes) {
  auto file =
      GgufFile::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return file.ok() ? Status::Ok() : file.status();
}

class GgufReaderVersionTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(GgufReaderVersionTest, ReadsEveryValueTypeAndTensor) {
  const std::string nested_strings =
      B::Array(B::kArray, 2,
               B::Array(B::kString, 2, B::String("a") + B::String("bc")) +
                   B::Array(B::kString, 0, ""));
  std::string deep = B::Array(B::kI16, 2, B::Pod<int16_t>(-3) + B::Pod<int16_t>(4));
  for (int i = 1; i < GgufFile::kMaxArrayDepth; ++i) deep = B::Array(B::kArray, 1, deep);
  std::vector<float> w(2 * 64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.5f * static_cast<float>(i);
  GgufBuilder b(GetParam());
  b.Raw("u8", B::kU8, B::Pod<uint8_t>(200))
      .Raw("i8", B::kI8, B::Pod<int8_t>(-100))
      .Raw("u16", B::kU16, B::Pod<uint16_t>(60000))
      .Raw("i16", B::kI16, B::Pod<int16_t>(-30000))
      .U32("u32", 4000000000u)
      .I32("i32", -2000000000)
      .U64("u64", uint64_t{1} << 62)
      .Raw("i64", B::kI64, B::Pod<int64_t>(-(int64_t{1} << 50)))
      .F32("f32", 0.25f)
      .Raw("f64", B::kF64, B::Pod<double>(1e-300))
      .Bool("yes", true)
      .Str("text", std::string("caf\xC3\xA9\0x", 7))
      .Raw("bytes", B::kArray, B::Array(B::kU8, 3, "\1\2\3"))
      .Raw("doubles", B::kArray, B::Array(B::kF64, 1, B::Pod<double>(-2.5)))
      .Raw("bools", B::kArray, B::Array(B::kBool, 2, std::string("\1\0", 2)))
      .Strings("strings", {"", "x", "yz"})
      .Raw("nested", B::kArray, nested_strings)
      .Raw("deep", B::kArray, deep)
      .Alignment(64)
      .Tensor("matrix", {64, 2}, 0, testing::F32Bytes(w))
      .Tensor("half", {3}, 1, std::string("\0\x3C\0\x40\0\xC0", 6));
  const std::string bytes = b.Build();
  auto f = ParseOk(bytes);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->version(), GetParam());
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  int64_t v;
  const std::pair<const char*, int64_t> ints[] = {{"u8", 200},
                                                  {"i8", -100},
                                                  {"u16", 60000},
                                                  {"i16", -30000},
                                                  {"u32", 4000000000},
                                                  {"i32", -2000000000},
                                                  {"u64", int64_t{1} << 62},
                                                  {"i64", -(int64_t{1} << 50)}};
  for (const auto& [key, want] : ints) {
    ASSERT_TRUE(f->GetInt(key, true, 0, INT64_MIN, INT64_MAX, &v).ok()) << key;
    EXPECT_EQ(v, want) << key;
  }
  EXPECT_FALSE(f->GetInt("u8", true, 0, 0, 100, &v).ok());  // out of range
  EXPECT_TRUE(f->GetInt("absent", false, 7, 0, 10, &v).ok());
  EXPECT_EQ(v, 7);
  double d;
  ASSERT_TRUE(f->GetFloat("f32", true, 0, &d).ok());
  EXPECT_EQ(d, 0.25);
  ASSERT_TRUE(f->GetFloat("f64", true, 0, &d).ok());
  EXPECT_EQ(d, 1e-300);
  bool yes = false;
  ASSERT_TRUE(f->GetBool("yes", true, false, &yes).ok());
  EXPECT_TRUE(yes);
  std::string_view text;
  ASSERT_TRUE(f->GetString("text", true, &text).ok());
  EXPECT_EQ(text, std::string_view("caf\xC3\xA9\0x", 7));
  EXPECT_FALSE(f->GetString("u8", true, &text).ok());
  const GgufValue* array;
  ASSERT_TRUE(f->GetArray("bytes", GgufType::kUint8, true, &array).ok());
  EXPECT_EQ(GgufNumberAt(*array, 2), 3.0);
  ASSERT_TRUE(f->GetArray("doubles", GgufType::kFloat64, true, &array).ok());
  EXPECT_EQ(GgufNumberAt(*array, 0), -2.5);
  ASSERT_TRUE(f->GetArray("bools", GgufType::kBool, true, &array).ok());
  EXPECT_EQ(GgufNumberAt(*array, 0) + 2 * GgufNumberAt(*array, 1), 1.0);
  ASSERT_TRUE(f->GetArray("strings", GgufType::kString, true, &array).ok());
  EXPECT_EQ(GgufStrings(*array), (std::vector<std::string_view>{"", "x", "yz"}));
  EXPECT_FALSE(f->GetArray("strings", GgufType::kUint8, true, &array).ok());
  ASSERT_TRUE(f->GetArray("nested", GgufType::kArray, true, &array).ok());
  const std::vector<GgufValue> inner = GgufSubArrays(*array);
  ASSERT_EQ(inner.size(), 2u);
  EXPECT_EQ(GgufStrings(inner[0]), (std::vector<std::string_view>{"a", "bc"}));
  EXPECT_TRUE(GgufStrings(inner[1]).empty());
  ASSERT_TRUE(f->GetArray("deep", GgufType::kArray, true, &array).ok());
  GgufValue level = *array;
  for (int i = 1; i < GgufFile::kMaxArrayDepth; ++i) {
    const std::vector<GgufValue> sub = GgufSubArrays(level);
    ASSERT_EQ(sub.size(), 1u) << i;
    level = sub[0];
  }
  ASSERT_EQ(level.element_type, GgufType::kInt16);
  EXPECT_EQ(GgufNumberAt(level, 0) * GgufNumberAt(level, 1), -12.0);

  ASSERT_EQ(f->tensors().size(), 2u);
  const GgufTensorInfo* m = f->FindTensor("matrix");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->n_dims, 2u);
  EXPECT_EQ(m->ne[0], 64u);
  EXPECT_EQ(m->ne[1], 2u);
  EXPECT_EQ(m->elements, 128u);
  EXPECT_EQ(m->size_bytes, 512u);
  EXPECT_EQ(0, memcmp(m->data, w.data(), 512));
  EXPECT_EQ((m->data - reinterpret_cast<const uint8_t*>(bytes.data())) % 64, 0);
  const GgufTensorInfo* h = f->FindTensor("half");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->type, 1u);
  EXPECT_EQ(h->size_bytes, 6u);
  EXPECT_EQ(h->offset % 64, 0u);
  EXPECT_EQ(f->FindTensor("absent"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Versions, GgufReaderVersionTest, ::testing::Values(2u, 3u));

// The corpus: each broken file refused with its own message (the importer's cases are
// readable files: gguf_import_test refuses them).
TEST(GgufReaderTest, BrokenFilesAreRefusedWithTheirOwnMessage) {
  const std::vector<testing::BrokenGguf> corpus = testing::BrokenGgufCorpus();
  EXPECT_GE(corpus.size(), 60u);
  std::set<std::string> names, messages;
  size_t reader_cases = 0;
  for (const testing::BrokenGguf& c : corpus) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_TRUE(messages.insert(c.message).second) << c.message;
    const Status s = ParseStatus(c.bytes);
    if (c.importer) {
      EXPECT_TRUE(s.ok()) << c.name << ": " << s.message();
      continue;
    }
    ++reader_cases;
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << c.name;
    EXPECT_NE(std::string(s.message()).find(c.message), std::string::npos)
        << c.name << ": got \"" << s.message() << "\", expected \"" << c.message << "\"";
  }
  EXPECT_GE(reader_cases, 30u);
}

// Every prefix of a real file is refused (the data section comes last and each tensor
// needs all of its bytes), and every byte of its header set to 0xFF or 0x00 gives a
// file that is refused or read: never a crash (ASan checks the reads). Within the long
// token tables in the middle of the header, every 11th byte (this runs under qemu too).
TEST(GgufReaderTest, TruncationsAndByteFlipsNeverCrash) {
  std::string bytes =
      testing::LlamaGguf(testing::TinyModelSpec(32, 1, 4, 2, 64, 300, 64), 8);
  auto full = ParseOk(bytes);
  ASSERT_NE(full, nullptr);
  const size_t header = static_cast<size_t>(full->data_offset());
  const auto next = [&](size_t i) {
    return i < 512 || i + 512 > header ? i + 1 : i + 11;
  };
  for (size_t n = 0; n < bytes.size(); n = n < header ? next(n) : n + 61) {
    EXPECT_FALSE(ParseStatus(bytes.substr(0, n)).ok()) << "prefix of " << n << " bytes";
  }
  size_t readable = 0;
  for (size_t i = 0; i < header; i = next(i)) {
    const char original = bytes[i];
    for (char value : {'\xFF', '\0'}) {
      bytes[i] = value;
      readable += ParseStatus(bytes).ok();
    }
    bytes[i] = original;
  }
  EXPECT_GT(readable, 0u);  // most bytes are values and names, which may change
}

// The reader's memory: a few dozen bytes per entry, each entry at least 14 (metadata)
// or 33 (tensor) bytes of file: never more than 5 times the file's size.
TEST(GgufReaderTest, MemoryIsBoundedByTheFileSize) {
  std::string dense_kvs =
      "GGUF" + B::Pod<uint32_t>(3) + B::Pod<uint64_t>(0) + B::Pod<uint64_t>(20000);
  for (int i = 0; i < 20000; ++i) {
    dense_kvs +=
        B::String(std::string(1, static_cast<char>('a' + i % 26)) + std::to_string(i)) +
        B::Pod<uint32_t>(B::kU8) + "x";
  }
  GgufBuilder tensors;
  tensors.Alignment(1);
  for (int i = 0; i < 5000; ++i) tensors.Tensor("t" + std::to_string(i), {1}, 24, "x");
  for (const std::string& bytes : {dense_kvs, tensors.Build()}) {
    auto f = ParseOk(bytes);
    ASSERT_NE(f, nullptr);
    EXPECT_LE(f->HeapBytes(), 5 * bytes.size());
    EXPECT_GT(f->metadata().size() + f->tensors().size(), 4999u);
  }
}

TEST(GgufReaderTest, OpenNamesThePath) {
  auto missing = GgufFile::Open("/nonexistent/model.gguf");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_NE(std::string(missing.status().message()).find("/nonexistent/model.gguf"),
            std::string::npos);
  auto directory = GgufFile::Open("/");
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(std::string(directory.status().message()).find("not a readable regular file"),
            std::string::npos);
}

TEST(GgufReaderTest, TypeNames) {
  EXPECT_EQ(GgmlTypeName(12), "q4_K");
  EXPECT_EQ(GgmlTypeName(4), "type 4");
  EXPECT_EQ(FindGgmlType(14)->block_bytes, 210u);
  EXPECT_STREQ(GgufTypeName(GgufType::kFloat64), "float64");
}

}  // namespace
}  // namespace ember::tools
