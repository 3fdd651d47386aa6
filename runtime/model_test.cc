// Model loading: a valid file loads from memory and from disk; broken files are refused
// with a message that names what is wrong, and nothing crashes.
#include "runtime/model.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model_generated.h"
#include "runtime/tensor_names.h"
#include "tests/testing.h"

namespace ember {
namespace {

// A mutable, 16-byte aligned copy of a model file.
class Bytes {
 public:
  explicit Bytes(const std::vector<uint8_t>& bytes)
      : storage_((bytes.size() + 15) / 16 + 1), size_(bytes.size()) {
    memcpy(data(), bytes.data(), bytes.size());
  }
  uint8_t* data() { return reinterpret_cast<uint8_t*>(storage_.data()); }
  size_t size() const { return size_; }
  void Truncate(size_t size) { size_ = size; }
  fb::Model* root() { return fb::GetMutableSizePrefixedModel(data()); }
  fb::Tensor* tensor(const char* name) {
    auto* tensors = root()->mutable_tensors();
    for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i) {
      if (strcmp(tensors->Get(i)->name()->c_str(), name) == 0) {
        return tensors->GetMutableObject(i);
      }
    }
    ADD_FAILURE() << "no tensor " << name;
    return nullptr;
  }

 private:
  struct alignas(16) Block {
    uint8_t b[16];
  };
  std::vector<Block> storage_;
  size_t size_;
};

std::string LoadError(Bytes& bytes) {
  auto model = Model::FromMemory(bytes.data(), bytes.size());
  return model.ok() ? std::string("loaded") : std::string(model.status().message());
}

TEST(ModelTest, ValidModelLoadsFromMemoryAndFile) {
  const std::vector<uint8_t> raw = testing::TinyModelBytes();
  Bytes bytes(raw);
  auto model = Model::FromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ((*model)->config().d_model, 32u);
  EXPECT_EQ((*model)->config().n_kv_heads, 2u);
  EXPECT_EQ((*model)->weights().layers.size(), 2u);
  EXPECT_EQ((*model)->weights().output, (*model)->weights().tok_embedding);  // tied
  EXPECT_EQ(std::string((*model)->description()), "tiny random test model");

  char path[] = "/tmp/ember_model_test_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, raw.data(), raw.size()), static_cast<ssize_t>(raw.size()));
  close(fd);
  auto mapped = Model::Open(path);
  unlink(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_EQ((*mapped)->file_bytes(), raw.size());
  EXPECT_EQ((*mapped)->parameter_count(), (*model)->parameter_count());
}

TEST(ModelTest, OpenReportsMissingAndNonRegularFiles) {
  auto missing = Model::Open("/nonexistent/model.ember");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
  EXPECT_NE(std::string(missing.status().message()).find("cannot open"),
            std::string::npos);
  auto dir = Model::Open("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(std::string(dir.status().message()).find("not a regular file"),
            std::string::npos);
}

TEST(ModelTest, FromMemoryRejectsUnalignedAndNull) {
  Bytes bytes(testing::TinyModelBytes());
  EXPECT_FALSE(Model::FromMemory(nullptr, 100).ok());
  auto unaligned = Model::FromMemory(bytes.data() + 1, bytes.size() - 1);
  ASSERT_FALSE(unaligned.ok());
  EXPECT_NE(std::string(unaligned.status().message()).find("aligned"), std::string::npos);
}

// Truncating the file anywhere, from the header to the last tensor byte, is refused.
TEST(ModelTest, EveryTruncationIsRefused) {
  const std::vector<uint8_t> raw = testing::TinyModelBytes();
  // Every length inside the directory, then a stride through the tensor data.
  const uint32_t directory = 4 + flatbuffers::ReadScalar<uint32_t>(raw.data());
  for (size_t size = 0; size < raw.size(); size += size < directory + 64 ? 1 : 61) {
    Bytes bytes(raw);
    bytes.Truncate(size);
    auto model = Model::FromMemory(bytes.data(), bytes.size());
    ASSERT_FALSE(model.ok()) << "a file cut to " << size << " bytes loaded";
  }
}

struct Corruption {
  const char* name;
  std::function<void(Bytes&)> mutate;
  const char* expected_message;  // a fragment of the error
};

class CorruptionTest : public ::testing::TestWithParam<Corruption> {};

TEST_P(CorruptionTest, IsRefusedWithItsOwnMessage) {
  Bytes bytes(testing::TinyModelBytes());
  GetParam().mutate(bytes);
  const std::string error = LoadError(bytes);
  EXPECT_NE(error.find(GetParam().expected_message), std::string::npos)
      << "error was: " << error;
}

const char* kQ = "blk.0.attn_q.weight";

INSTANTIATE_TEST_SUITE_P(
    Loader, CorruptionTest,
    ::testing::Values(
        Corruption{"truncated_header", [](Bytes& b) { b.Truncate(6); }, "too short"},
        Corruption{"truncated_directory", [](Bytes& b) { b.Truncate(200); }, "truncated"},
        Corruption{"truncated_tensor_data", [](Bytes& b) { b.Truncate(b.size() - 100); },
                   "past the end of the file"},
        Corruption{"wrong_identifier", [](Bytes& b) { memcpy(b.data() + 8, "GGUF", 4); },
                   "file identifier"},
        Corruption{"directory_bytes_flipped",
                   [](Bytes& b) {
                     // Point the root table offset far outside the buffer.
                     const uint32_t bad = 0x7FFFFFF0;
                     memcpy(b.data() + 4, &bad, 4);
                   },
                   "verification failed"},
        Corruption{"offset_past_end",
                   [](Bytes& b) { b.tensor(kQ)->mutate_offset(uint64_t{1} << 40); },
                   "past the end of the file"},
        Corruption{"offset_plus_size_overflows",
                   [](Bytes& b) { b.tensor(kQ)->mutate_offset(~uint64_t{63}); },
                   "past the end of the file"},
        Corruption{
            "offset_misaligned",
            [](Bytes& b) { b.tensor(kQ)->mutate_offset(b.tensor(kQ)->offset() + 4); },
            "is not a multiple of 64"},
        Corruption{"offset_inside_directory",
                   [](Bytes& b) { b.tensor(kQ)->mutate_offset(0); },
                   "into the directory"},
        Corruption{"tensors_overlap",
                   [](Bytes& b) {
                     b.tensor(kQ)->mutate_offset(
                         b.tensor("blk.0.attn_k.weight")->offset());
                   },
                   "overlap"},
        Corruption{"size_disagrees_with_shape",
                   [](Bytes& b) { b.tensor(kQ)->mutate_size(b.tensor(kQ)->size() - 4); },
                   "disagrees with its f32 shape"},
        Corruption{"shape_disagrees_with_size",
                   [](Bytes& b) { b.tensor(kQ)->mutable_shape()->Mutate(0, 31); },
                   "disagrees with its f32 shape"},
        Corruption{"zero_dimension",
                   [](Bytes& b) { b.tensor(kQ)->mutable_shape()->Mutate(1, 0); },
                   "dimension 1 is zero"},
        Corruption{"huge_dimensions",
                   [](Bytes& b) {
                     b.tensor(kQ)->mutable_shape()->Mutate(0, uint64_t{1} << 40);
                     b.tensor(kQ)->mutable_shape()->Mutate(1, uint64_t{1} << 40);
                   },
                   "element count overflows"},
        Corruption{
            "unknown_dtype",
            [](Bytes& b) { b.tensor(kQ)->mutate_dtype(static_cast<fb::DType>(77)); },
            "unknown dtype 77"},
        Corruption{
            "unknown_layout",
            [](Bytes& b) { b.tensor(kQ)->mutate_layout(static_cast<fb::Layout>(9)); },
            "unknown layout 9"},
        Corruption{"d_model_not_divisible_by_heads",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_n_heads(5); },
                   "d_model 32 is not divisible by n_heads 5"},
        Corruption{"kv_heads_do_not_divide_heads",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_n_kv_heads(3); },
                   "n_kv_heads 3 does not divide n_heads 4"},
        Corruption{"zero_vocab",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_vocab_size(0); },
                   "vocab_size = 0"},
        Corruption{"zero_context",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_max_context(0); },
                   "max_context = 0"},
        Corruption{"zero_layers",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_n_layers(0); },
                   "n_layers = 0"},
        Corruption{"vocab_disagrees_with_tokenizer",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_vocab_size(301); },
                   "piece offsets for a vocabulary of 301"},
        Corruption{"extra_layer_in_config",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_n_layers(3); },
                   "missing tensor 'blk.2.attn_norm.weight'"},
        Corruption{"unknown_activation",
                   [](Bytes& b) {
                     b.root()->mutable_config()->mutate_activation(
                         static_cast<fb::Activation>(42));
                   },
                   "a value this build does not know"},
        Corruption{"bad_norm_eps",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_norm_eps(-1.0f); },
                   "norm_eps"},
        Corruption{"odd_head_dim_with_rope",
                   [](Bytes& b) { b.root()->mutable_config()->mutate_head_dim(7); },
                   "RoPE needs an even head_dim"},
        Corruption{"wrong_format_version",
                   [](Bytes& b) { b.root()->mutate_format_version(2); },
                   "format version 2"},
        Corruption{"renamed_tensor",
                   [](Bytes& b) {
                     // "blk.0.attn_q.weight" -> "blk.0.attn_x.weight": q is missing.
                     auto* name = const_cast<flatbuffers::String*>(b.tensor(kQ)->name());
                     const_cast<char*>(name->c_str())[11] = 'x';
                   },
                   "missing tensor 'blk.0.attn_q.weight'"},
        Corruption{"bos_outside_vocab",
                   [](Bytes& b) { b.root()->mutable_tokenizer()->mutate_bos_id(300); },
                   "special token id 300 outside the vocabulary"},
        Corruption{"piece_offsets_decrease",
                   [](Bytes& b) {
                     b.root()->mutable_tokenizer()->mutable_piece_offsets()->Mutate(5, 0);
                   },
                   "piece offsets decrease"},
        Corruption{"sorted_ids_out_of_order",
                   [](Bytes& b) {
                     auto* ids = b.root()->mutable_tokenizer()->mutable_sorted_ids();
                     const uint32_t first = ids->Get(0);
                     ids->Mutate(0, ids->Get(1));
                     ids->Mutate(1, first);
                   },
                   "sorted ids out of order"},
        Corruption{"sorted_id_out_of_range",
                   [](Bytes& b) {
                     b.root()->mutable_tokenizer()->mutable_sorted_ids()->Mutate(3, 1000);
                   },
                   "sorted id 1000 is out of range"},
        Corruption{"token_type_unknown",
                   [](Bytes& b) {
                     b.root()->mutable_tokenizer()->mutable_types()->Mutate(
                         10, static_cast<fb::TokenType>(99));
                   },
                   "unknown type 99"}),
    [](const ::testing::TestParamInfo<Corruption>& info) { return info.param.name; });

}  // namespace
}  // namespace ember
