// Model loading: a valid file loads from memory and from disk, its segments are in
// forward order, and missing, unaligned or truncated files are refused with a message
// that names what is wrong; its parameters counted by kind and type. Corrupted fields:
// model_corruption_test.cc.
#include "runtime/model/model.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model_generated.h"
#include "runtime/model/model_test_util.h"
#include "runtime/model/model_writer.h"
#include "runtime/model/parameter_counts.h"
#include "runtime/model/tensor_names.h"
#include "testing/testing.h"

namespace ember {
namespace {

using testing::Bytes;
using testing::LoadError;

// CountParameters: each tensor in the kind its name says and in its dtype, the kinds
// and the dtypes each summing to the model's parameter_count.
TEST(ModelTest, ParametersByKindAndType) {
  EXPECT_EQ(ParameterKindOf("blk.3.attn_q.weight"), ParameterKind::kWq);
  EXPECT_EQ(ParameterKindOf("blk.0.attn_k.bias"), ParameterKind::kWk);
  EXPECT_EQ(ParameterKindOf("blk.0.attn_v.weight"), ParameterKind::kWv);
  EXPECT_EQ(ParameterKindOf("blk.0.attn_output.weight"), ParameterKind::kWo);
  EXPECT_EQ(ParameterKindOf("blk.0.ffn_gate.weight"), ParameterKind::kFfn);
  EXPECT_EQ(ParameterKindOf("blk.0.attn_norm.weight"), ParameterKind::kNorms);
  EXPECT_EQ(ParameterKindOf("blk.0.attn_q_norm.weight"), ParameterKind::kNorms);
  EXPECT_EQ(ParameterKindOf("output_norm.bias"), ParameterKind::kNorms);
  EXPECT_EQ(ParameterKindOf("position_embd.weight"), ParameterKind::kEmbeddings);
  EXPECT_EQ(ParameterKindOf("output.weight"), ParameterKind::kClassifier);
  EXPECT_EQ(ParameterKindOf("v.blk.0.attn_q.weight"), ParameterKind::kVision);
  EXPECT_EQ(ParameterKindOf("mm.model.fc.weight"), ParameterKind::kVision);
  EXPECT_STREQ(ParameterKindName(ParameterKind::kVision), "vision");
  EXPECT_EQ(ParameterKindOf("rope_freqs.weight"), ParameterKind::kOther);
  EXPECT_STREQ(ParameterKindName(ParameterKind::kWo), "W_o");
  EXPECT_STREQ(ParameterKindName(ParameterKind::kOther), "other");

  ModelSpec spec = testing::TinyModelSpec();
  for (TensorSpec& t : spec.tensors) {
    if (t.name == "blk.1.ffn_down.weight") t.dtype = DType::kF16;
  }
  const testing::LoadedModel loaded = testing::LoadSpec(spec);
  ASSERT_NE(loaded.model, nullptr);
  const ParameterCounts n = CountParameters(*loaded.model);
  EXPECT_EQ(n.total, loaded.model->parameter_count());
  uint64_t kinds = 0, dtypes = 0, tensors = 0;
  for (const ParameterCount& c : n.by_kind) kinds += c.parameters, tensors += c.tensors;
  for (const ParameterCount& c : n.by_dtype) dtypes += c.parameters;
  EXPECT_EQ(kinds, n.total);
  EXPECT_EQ(dtypes, n.total);
  EXPECT_EQ(tensors, loaded.model->tensors().size());
  const ModelConfig& c = loaded.model->config();
  EXPECT_EQ(n.of(ParameterKind::kWq).parameters,
            uint64_t{c.n_layers} * c.q_dim() * c.d_model);
  EXPECT_EQ(n.of(ParameterKind::kWk).tensors, c.n_layers);
  EXPECT_EQ(n.of(ParameterKind::kClassifier).tensors, 0u);  // tied
  EXPECT_EQ(n.of(DType::kF16).tensors, 1u);
  EXPECT_EQ(n.of(DType::kF16).parameters, uint64_t{c.ffn_dim} * c.d_model);
  EXPECT_EQ(n.of(DType::kF16).bytes, 2 * n.of(DType::kF16).parameters);
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

// The writer stores tensor segments (and lists them in the directory) in the order a
// forward pass reads them, whatever order the importer gave: decode then streams the
// file front to back. A tied classifier (the token embedding) is read last.
TEST(ModelTest, WriterStoresSegmentsInForwardOrder) {
  for (const bool tied : {true, false}) {
    ModelSpec spec = testing::TinyModelSpec();
    if (!tied) {
      spec.config.tied_classifier = false;
      TensorSpec out;
      out.name = names::kOutput;
      out.shape = {spec.config.vocab_size, spec.config.d_model};
      out.values.assign(spec.config.vocab_size * spec.config.d_model, 0.01f);
      spec.tensors.insert(spec.tensors.begin(), std::move(out));
    }
    std::reverse(spec.tensors.begin(), spec.tensors.end());  // any importer order
    std::vector<uint8_t> raw;
    ASSERT_TRUE(SerializeModel(spec, &raw).ok());
    Bytes bytes(raw);
    auto model = Model::FromMemory(bytes.data(), bytes.size());
    ASSERT_TRUE(model.ok()) << model.status().message();

    std::vector<std::string> expected;
    if (!tied) expected.push_back(names::kTokEmbedding);
    for (unsigned i = 0; i < spec.config.n_layers; ++i) {
      for (const char* format : {names::kAttnNorm, names::kAttnQ, names::kAttnK,
                                 names::kAttnV, names::kAttnOut, names::kFfnNorm,
                                 names::kFfnGate, names::kFfnUp, names::kFfnDown}) {
        expected.push_back(names::LayerName(format, i));
      }
    }
    expected.push_back(names::kOutputNorm);
    expected.push_back(tied ? names::kTokEmbedding : names::kOutput);

    const auto* tensors = bytes.root()->tensors();
    ASSERT_EQ(tensors->size(), expected.size());
    uint64_t previous_end = 0;
    for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i) {
      const fb::Tensor* t = tensors->Get(i);
      EXPECT_EQ(t->name()->str(), expected[i]) << "tied " << tied << ", segment " << i;
      EXPECT_GE(t->offset(), previous_end) << t->name()->str();
      previous_end = t->offset() + t->size();
    }
  }
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

// One handcrafted broken file: TinyModelSpec() changed before it is written (spec, may be
// empty) and/or its bytes changed after (mutate, may be empty).
// Truncation at each boundary between sections (size prefix, root offset, identifier,
// directory, padding, each tensor's segment) names the section that is cut.
TEST(ModelTest, TruncationAtEverySectionBoundaryNamesTheSection) {
  const std::vector<uint8_t> raw = testing::TinyModelBytes();
  const uint32_t directory_end = 4 + flatbuffers::ReadScalar<uint32_t>(raw.data());
  std::vector<std::pair<size_t, std::string>> cases = {
      {0, "too short to be a model"},
      {4, "too short to be a model"},   // size prefix only
      {8, "too short to be a model"},   // + root offset
      {11, "too short to be a model"},  // identifier cut
      {12, "truncated: the directory says"},
      {directory_end - 1, "truncated: the directory says"},
  };
  Bytes whole(raw);
  const auto* tensors = whole.root()->tensors();
  // The directory lists the tensors in the order of their segments.
  cases.push_back(
      {directory_end, "tensor '" + tensors->Get(0)->name()->str() + "': offset"});
  for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i) {
    const fb::Tensor* t = tensors->Get(i);
    const std::string expected = "tensor '" + t->name()->str() + "': offset";
    cases.push_back({t->offset(), expected});
    cases.push_back({t->offset() + t->size() - 1, expected});
  }
  for (const auto& [size, expected] : cases) {
    Bytes bytes(raw);
    bytes.Truncate(size);
    const std::string error = LoadError(bytes);
    EXPECT_NE(error.find(expected), std::string::npos)
        << "cut to " << size << " bytes: " << error;
  }
}

}  // namespace
}  // namespace ember
